import { Type } from '@sinclair/typebox'
import { encodeOffset, fitting, nextCursor, offsetOf } from '../../pagination.ts'
import { AppError } from '../../../shared/errors.ts'
import { CategorySchema, CheckStatusSchema, SeveritySchema } from '../../../shared/report/schema.ts'
import { penaltyOf } from '../../../shared/report/scoring.ts'
import { defineTool, readOnly } from './types.ts'
import { Cursor, Id, Limit, NextCursor, strict } from './schemas.ts'

const DEFAULT_STATUS = ['fail', 'warn'] as const
const DEFAULT_LIMIT = 20
/** An audit's merged findings can list 100 pages each: a page of them stops before this many bytes of items. */
const AUDIT_ITEMS_BYTES = 12 * 1024

/** Exactly one of scanId and auditId, or invalid_params saying so. */
export function oneTarget(input: { scanId?: string; auditId?: string }): { scanId: string } | { auditId: string } {
  if (input.scanId !== undefined && input.auditId === undefined) return { scanId: input.scanId }
  if (input.auditId !== undefined && input.scanId === undefined) return { auditId: input.auditId }
  throw new AppError('invalid_params', 'Pass exactly one of scanId (a scan, scn_...) and auditId (an audit, aud_...).', {
    details: [{ path: '/', message: 'Exactly one of scanId and auditId is required' }],
  })
}

const nonEmpty = <T>(list: readonly T[] | undefined): readonly T[] | null => (list && list.length > 0 ? list : null)

/** A scan's answer names scanId, an audit's auditId; items are a scan's checks or an audit's merged findings. */
const Output = Type.Object(
  { url: Type.String(), total: Type.Integer(), items: Type.Array(Type.Unknown()), nextCursor: NextCursor },
  { description: 'Also scanId or auditId, score, grade, filter. total: items on every page.' },
)

export const getFindings = defineTool({
  name: 'get_findings',
  description:
    'Findings of a completed scan (scanId) or audit (auditId, merged across pages), highest impact first, a page at a time. ' +
    'Filters are lists (any value matches); status defaults to fail and warn.',
  plan: 'free',
  annotations: readOnly('Get findings'),
  input: Type.Object(
    {
      scanId: Type.Optional(Id('scn')),
      auditId: Type.Optional(Id('aud')),
      severity: Type.Optional(Type.Array(SeveritySchema, { maxItems: 5 })),
      category: Type.Optional(Type.Array(CategorySchema, { maxItems: 20 })),
      status: Type.Optional(Type.Array(CheckStatusSchema, { maxItems: 6, description: 'Default [fail, warn].' })),
      limit: Limit,
      cursor: Cursor,
    },
    strict,
  ),
  output: Output,
  run: async (input, ctx) => {
    const target = oneTarget(input)
    const status = nonEmpty(input.status) ?? DEFAULT_STATUS
    const severity = nonEmpty(input.severity)
    const category = nonEmpty(input.category)
    const limit = input.limit ?? DEFAULT_LIMIT
    /** A check or merged finding the filters keep (a list matches any of its values). */
    const matches = (f: { status?: unknown; severity?: unknown; category?: unknown }) =>
      (status as readonly unknown[]).includes(f.status) &&
      (!severity || (severity as readonly unknown[]).includes(f.severity)) &&
      (!category || (category as readonly unknown[]).includes(f.category))
    if ('auditId' in target) {
      const { auditId } = target
      // The scope is not the scan's bare id: an audit's cursor never reads a scan's list, nor get_audit's.
      const offset = offsetOf(`get_findings:${auditId}`, input.cursor, `get_findings for audit ${auditId}`)
      const { audit, head, findings } = await ctx.services.findings.auditFindings(ctx.principal, auditId)
      const matching = findings.filter(matches)
      const items = fitting(matching.slice(offset, offset + limit), AUDIT_ITEMS_BYTES)
      return {
        auditId: audit.id,
        url: audit.url,
        score: head.score,
        grade: head.grade,
        filter: { status, severity: severity ?? null, category: category ?? null },
        total: matching.length,
        items,
        nextCursor: nextCursor(`get_findings:${auditId}`, offset, items.length, matching.length),
      }
    }
    const offset = offsetOf(target.scanId, input.cursor, `get_findings for scan ${target.scanId}`)
    const { scan, report } = await ctx.services.findings.completedScan(ctx.principal, target.scanId)
    const matching = ctx.services.findings.byImpact(report).filter(matches)
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
