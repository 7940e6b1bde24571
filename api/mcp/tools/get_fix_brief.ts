import { Type } from '@sinclair/typebox'
import { PLATFORMS } from '../../../shared/checks/types.ts'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'

const PLATFORM_ARG = Type.Union(
  PLATFORMS.map((s) => Type.Literal(s)),
  {
    description: 'Write the brief for this platform instead of the detected one.',
  },
)

export const getFixBrief = defineTool({
  name: 'get_fix_brief',
  description:
    'What a coding agent must change, and where, to fix each failing or warning check of a completed scan, highest impact first, ' +
    'for the hosting platform detected from the scanned responses (Vercel, Netlify, Next.js, nginx, Cloudflare; generic when none is recognised) ' +
    'or the one given as platform. Each item: checkId, problem (what this scan found) and evidence, change (the fix, with snippets), ' +
    'where (the file or setting to edit: vercel.json, netlify.toml or _headers, next.config.js, the nginx server block, Cloudflare Transform Rules...) ' +
    'and verify (how to confirm: curl -I, then scan_app again).',
  plan: 'free',
  annotations: readOnly('Get a fix brief'),
  input: Type.Object(
    {
      scanId: Id('scan', 'scn'),
      checkId: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Only this check.' })),
      platform: Type.Optional(PLATFORM_ARG),
    },
    strict,
  ),
  run: (input, ctx) => ctx.services.findings.fixBrief(ctx.principal, input),
})
