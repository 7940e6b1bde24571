import { Type } from '@sinclair/typebox'
import { PLATFORMS } from '../../../shared/checks/types.ts'
import { oneTarget } from './get_findings.ts'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'
import { compactFixBrief, Detail } from './compact.ts'

const PLATFORM_ARG = Type.Union(
  PLATFORMS.map((s) => Type.Literal(s)),
  { description: 'Instead of the detected one.' },
)

/** A scan's brief names scanId, an audit's auditId. Each item is one check to fix; its fields are open. */
const Output = Type.Object(
  { url: Type.String(), platform: Type.String(), items: Type.Array(Type.Unknown()) },
  {
    description:
      'Also scanId or auditId, score, grade, detected (how the platform was found). Each item: checkId, title, severity, impact, ' +
      'problem, evidence, change, where, verify; compact: items past 11 KB only by checkId with more (the call for the whole item).',
  },
)

export const getFixBrief = defineTool({
  name: 'get_fix_brief',
  description:
    'What to change, and where, to fix each finding of a completed scan (scanId) or audit (auditId), highest impact first, for the ' +
    'detected platform or the one given: the file to edit, the change with snippets, how to verify.',
  plan: 'free',
  annotations: readOnly('Get a fix brief'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scn')),
      auditId: Type.Optional(Id('aud')),
      checkId: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Only this check.' })),
      platform: Type.Optional(PLATFORM_ARG),
      detail: Detail,
    },
    strict,
  ),
  output: Output,
  run: async (input, ctx) => {
    const target = oneTarget(input)
    const rest = { checkId: input.checkId, platform: input.platform }
    const brief = await ('auditId' in target
      ? ctx.services.findings.auditFixBrief(ctx.principal, { auditId: target.auditId, ...rest })
      : ctx.services.findings.fixBrief(ctx.principal, { scanId: target.scanId, ...rest }))
    if (input.detail === 'full') return brief
    const id = 'auditId' in target ? `"auditId":"${target.auditId}"` : `"scanId":"${target.scanId}"`
    const platform = input.platform ? `,"platform":"${input.platform}"` : ''
    return compactFixBrief(brief, (checkId) => `get_fix_brief {${id},"checkId":"${checkId}"${platform},"detail":"full"}`)
  },
})
