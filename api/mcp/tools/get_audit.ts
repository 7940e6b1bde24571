import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import { SECTION_LIMIT, SECTIONS } from '../../audits/results.ts'
import { defineTool, readOnly } from './types.ts'
import { AuditOptions, AuditStatus, Cursor, ErrorInfo, Id, NextCursor, Nullable, OpenObject, strict } from './schemas.ts'

// Two answers share it: the state with, once completed, the summary of the result (no section), and one page
// of a section. Only what both always carry is required; the rest is described and open.
const Output = Type.Object(
  {
    auditId: Type.String(),
    url: Type.String(),
    status: AuditStatus,
    options: Type.Optional(AuditOptions),
    progress: Type.Optional(OpenObject('pagesDiscovered, pagesScanned, pagesFailed, currentUrl, startedAt, finishedAt, refunded.')),
    attempts: Type.Optional(Type.Integer()),
    createdAt: Type.Optional(Type.String({ description: 'ISO 8601, UTC.' })),
    charge: Type.Optional(OpenObject('What paid for the audit (from: allowance or credits) and whether it was refunded.')),
    error: Type.Optional(ErrorInfo),
    result: Type.Optional(
      OpenObject('Once completed, the summary: score, grade, stoppedBy, counts, findingCounts, topFindings (highest impact first).'),
    ),
    more: Type.Optional(OpenObject('How to get each section of the result: the arguments to call get_audit with.')),
    section: Type.Optional(Type.Union(SECTIONS.map((s) => Type.Literal(s)))),
    score: Type.Optional(Nullable(Type.Number())),
    grade: Type.Optional(Nullable(Type.String())),
    total: Type.Optional(Type.Integer({ description: 'Items in the whole section.' })),
    offset: Type.Optional(Type.Integer()),
    items: Type.Optional(Type.Array(OpenObject(), { description: 'One page of the section.' })),
    nextCursor: Type.Optional(NextCursor),
  },
  { description: 'The audit; with section, one page of its result.' },
)

export const getAudit = defineTool({
  name: 'get_audit',
  description:
    'An audit started with audit_app: status (queued, running, completed, failed, cancelled) and progress (pages discovered, scanned, ' +
    'failed, current URL, times, refunded). Poll every 5-10 seconds. Once completed, the answer is a summary of the result: site score ' +
    'and grade, why the crawl stopped (stoppedBy), check counts by status, finding counts by severity and status, the top findings by ' +
    'impact (each with its page count and two example pages), and under more how to get the rest. To page through the result, call ' +
    'again with section: findings (merged across pages, highest impact first), pages (each page with its failing checks), checks ' +
    '(each check once, at its worst) or thirdParties (each third-party host with the pages that load from it); limit sets the items per page (default 20, at most 100; fewer when they would pass 16 KB). ' +
    'Each page returns {section, total, offset, items, nextCursor}: pass nextCursor back as cursor, with the same auditId and section, ' +
    'until it is null.',
  plan: 'free',
  annotations: readOnly('Get an audit'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object(
    {
      auditId: Id('audit', 'aud'),
      section: Type.Optional(
        Type.Union(
          SECTIONS.map((s) => Type.Literal(s)),
          {
            description:
              'One part of a completed result, a page at a time: findings, pages, checks or thirdParties (the third-party hosts pages load from). Without it: the summary.',
          },
        ),
      ),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: SECTION_LIMIT.max,
          default: SECTION_LIMIT.default,
          description: 'Items per page of a section (needs section).',
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
