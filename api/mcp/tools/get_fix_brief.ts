import { Type } from '@sinclair/typebox'
import { PLATFORMS } from '../../../shared/checks/types.ts'
import { oneTarget } from './get_findings.ts'
import { defineTool, readOnly } from './types.ts'
import { Id, Nullable, OpenObject, strict } from './schemas.ts'
import { compactFixBrief, Detail } from './compact.ts'

const PLATFORM_ARG = Type.Union(
  PLATFORMS.map((s) => Type.Literal(s)),
  {
    description: 'Write the brief for this platform instead of the detected one.',
  },
)

/** A scan's brief names scanId, an audit's auditId. Each item is one check to fix; its fields are open. */
const Output = Type.Object({
  scanId: Type.Optional(Type.String()),
  auditId: Type.Optional(Type.String()),
  url: Type.String(),
  finalUrl: Type.Optional(Type.String()),
  score: Type.Optional(Nullable(Type.Number())),
  grade: Type.Optional(Nullable(Type.String())),
  platform: Type.String({ description: 'The platform the brief is written for.' }),
  detectedFrom: Type.Array(Type.String()),
  detected: OpenObject('The platform detection: platform, confidence and what it was read from.'),
  note: Type.Optional(Type.String()),
  detail: Type.Optional(
    Type.Literal('compact', { description: 'Evidence cut; items past 11 KB listed by checkId with the call for each.' }),
  ),
  items: Type.Array(
    Type.Object(
      { checkId: Type.String() },
      {
        description:
          'title, severity, status, impact, problem, evidence, change, where, verify; for an audit also findings, pageCount, examplePages. ' +
          'In a compact brief, items past 11 KB carry only title, severity, status, impact, problem and more (the call for the whole item).',
      },
    ),
  ),
})

export const getFixBrief = defineTool({
  name: 'get_fix_brief',
  description:
    'What a coding agent must change, and where, to fix each failing or warning check of a completed scan (scanId) or audit ' +
    '(auditId; one item per check, with how many pages and merged findings it covers and example pages): exactly one of the two. Highest impact first, ' +
    'for the platform detected from the scanned responses (headers, cookie names, default error pages: Vercel, Netlify, Next.js, Express, ' +
    'Django, Rails, nginx, Apache, Caddy, IIS, Cloudflare; generic when none is recognised) ' +
    'or the one given as platform. Each item: checkId, problem (what this scan found) and evidence, change (the fix, with snippets), ' +
    'where (the file or setting to edit: vercel.json, netlify.toml or _headers, next.config.js, the nginx server block, .htaccess, ' +
    'settings.py, config/application.rb, the Caddyfile, web.config, Cloudflare Transform Rules...) ' +
    'and verify (how to confirm: curl -I, then scan_app again). Compact by default (evidence cut, items past 11 KB by id); ' +
    'detail "full" for every item whole.',
  plan: 'free',
  annotations: readOnly('Get a fix brief'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scan', 'scn')),
      auditId: Type.Optional(Id('audit', 'aud')),
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
