import { Type } from '@sinclair/typebox'
import { AppError } from '../../../shared/errors.ts'
import { CategorySchema, CheckStatusSchema, SeveritySchema } from '../../../shared/report-schema.ts'
import { penaltyOf } from '../../../shared/scoring.ts'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Id, Limit, strict } from './schemas.ts'

const DEFAULT_STATUS = ['fail', 'warn'] as const
const DEFAULT_LIMIT = 20

const OFFSET_CURSOR = /^(scn_[0-9A-Za-z]+):(\d{1,6})$/

export const encodeOffset = (scanId: string, offset: number) => Buffer.from(`${scanId}:${offset}`).toString('base64url')

/** The offset in a get_findings cursor, or null when it is malformed or belongs to another scan. */
export function decodeOffset(scanId: string, cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null
  const m = OFFSET_CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m || m[1] !== scanId) return null
  return Number(m[2])
}

const nonEmpty = <T>(list: readonly T[] | undefined): readonly T[] | null => (list && list.length > 0 ? list : null)

export const getFindings = defineTool({
  name: 'get_findings',
  description:
    'The checks of a completed scan of this account, highest impact first, filtered and one page at a time. ' +
    'Filters take lists (a check matches any value in a list). Without a status filter only findings are returned: status fail and warn; ' +
    'pass status ["pass","fail","warn","info","skipped","error"] for every check. Returns {scanId, url, total, items, nextCursor}; ' +
    'pass nextCursor back as cursor for the next page (null on the last).',
  plan: 'free',
  annotations: readOnly('Get findings'),
  input: Type.Object(
    {
      scanId: Id('scan', 'scn'),
      severity: Type.Optional(Type.Array(SeveritySchema, { maxItems: 5, description: 'Only these severities.' })),
      category: Type.Optional(Type.Array(CategorySchema, { maxItems: 20, description: 'Only these categories.' })),
      status: Type.Optional(Type.Array(CheckStatusSchema, { maxItems: 6, description: 'Only these statuses (default: fail and warn).' })),
      limit: Limit,
      cursor: Cursor,
    },
    strict,
  ),
  run: async (input, ctx) => {
    const offset = input.cursor === undefined ? 0 : decodeOffset(input.scanId, input.cursor)
    if (offset === null) {
      throw new AppError(
        'invalid_params',
        'cursor is not a get_findings cursor of this scan: pass nextCursor from the previous page unchanged, with the same scanId.',
        {
          details: [{ path: '/cursor', message: 'Invalid cursor' }],
        },
      )
    }
    const { scan, report } = await ctx.services.findings.completedScan(ctx.principal, input.scanId)
    const status = nonEmpty(input.status) ?? DEFAULT_STATUS
    const severity = nonEmpty(input.severity)
    const category = nonEmpty(input.category)
    const matching = ctx.services.findings
      .byImpact(report)
      .filter(
        (c) =>
          (status as readonly string[]).includes(c.status) &&
          (!severity || severity.includes(c.severity)) &&
          (!category || category.includes(c.category)),
      )
    const limit = input.limit ?? DEFAULT_LIMIT
    const end = offset + limit
    return {
      scanId: scan.id,
      url: report.url,
      score: report.score,
      grade: report.grade,
      filter: { status, severity: severity ?? null, category: category ?? null },
      total: matching.length,
      items: matching.slice(offset, end).map((c) => ({ ...c, impact: penaltyOf(c) })),
      nextCursor: end < matching.length ? encodeOffset(scan.id, end) : null,
    }
  },
})
