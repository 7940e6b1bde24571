import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import { SECTION_LIMIT, SECTIONS } from '../../audits/results.ts'
import { defineTool, readOnly } from './types.ts'
import { AuditStatus, Cursor, Id, strict } from './schemas.ts'

// Two answers share it: the state with, once completed, the summary of the result (no section), and one page
// of a section. Only what both always carry is required; the rest is open, as the description says.
const Output = Type.Object(
  {
    auditId: Type.String(),
    url: Type.String(),
    status: AuditStatus,
  },
  {
    description:
      'Also options, progress, charge, error; once completed result (score, grade, stoppedBy, counts, topFindings) and more (the ' +
      'calls for each section). With section: section, total, offset, items, nextCursor.',
  },
)

export const getAudit = defineTool({
  name: 'get_audit',
  description:
    'An audit: status and progress (poll every 5-10 s); once completed a summary (score, grade, stoppedBy, counts, top findings). ' +
    'section pages through the result: findings (merged across pages), pages, checks or thirdParties.',
  plan: 'free',
  annotations: readOnly('Get an audit'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object(
    {
      auditId: Id('aud'),
      section: Type.Optional(
        Type.Union(
          SECTIONS.map((s) => Type.Literal(s)),
          {
            description: 'A page of one part of the result; without: the summary.',
          },
        ),
      ),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: SECTION_LIMIT.max,
          default: SECTION_LIMIT.default,
          description: 'Page size (with section).',
        }),
      ),
      cursor: Cursor,
    },
    strict,
  ),
  output: Output,
  run: (input, ctx) =>
    ctx.services.audits.get(ctx.principal, input.auditId, { section: input.section, limit: input.limit, cursor: input.cursor }),
})
