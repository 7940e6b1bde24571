// Reading parts of a stored audit result without shipping all of it. A 500-page result is a few MB of
// jsonb; the tools answer with a summary or one page of a list, so PostgreSQL cuts out what is asked
// for (jsonpath slices and key filters) and only that crosses the wire and gets parsed.
import { type AuditRaw, type AuditRow, toAudit } from './audits.ts'
import type { Sql } from './index.ts'
import type { StoredAuditSummary, SummaryParts } from '../report/audit-summary.ts'

/** The lists of a result that are read a slice at a time. */
export type ResultList = 'findings' | 'pages' | 'checks' | 'thirdParties'

/** Every column of an audit but its result. */
const ROW_COLUMNS =
  'id, account_id, app_id, url, options, status, pages_discovered, pages_scanned, pages_failed, current_url, error, attempts, worker, lease_until, charged_from, refunded, created_at, started_at, finished_at, authenticated'

type Raw = Omit<AuditRaw, 'result'>

/** The row with its result left out (null): the caller reads the parts it needs. */
const toRow = (r: Raw): AuditRow => toAudit({ ...r, result: null })

/** The audit without its result (cheap whatever the result's size); null when it is not this account's. */
export async function readAuditRow(sql: Sql, accountId: string, auditId: string): Promise<AuditRow | null> {
  const [r] = await sql<Raw[]>`SELECT ${sql.unsafe(ROW_COLUMNS)} FROM audits WHERE id = ${auditId} AND account_id = ${accountId}`
  return r ? toRow(r) : null
}

/**
 * Every top-level field of the result but its long lists. Measured on a 2.5 MB result: deleting the lists
 * by key array skips them without copying, and jsonpath reads are cheap, while `->` per field and jsonpath's
 * keyvalue() (which copies every value, the lists too) cost many times more.
 */
const HEAD = `result - '{pages,findings,checks,siteChecks,thirdParties}'::text[]`

/** What get_audit's summary shows of an audit (shared/report/audit-report.ts summaryParts), with its row. */
export interface AuditSummaryParts extends SummaryParts {
  row: AuditRow
}

/**
 * An audit's summary as stored: the summary written when it completed (`stored`: its lists cut by summaryOf),
 * or the same fields cut out of its result, its first findings and third parties as the result holds them.
 */
export interface AuditSummaryRead extends Omit<StoredAuditSummary, 'head'> {
  row: AuditRow
  stored: boolean
  /** Null until the audit has a result. */
  head: Record<string, unknown> | null
  totals: Record<ResultList, number>
}

/**
 * What get_audit's summary is made of; null when the audit is not this account's. A completed audit's summary
 * was stored when it completed (a few KB, migration 016) and is read when `useStored`; otherwise, and for one
 * completed before that, it is cut out of the result with the first `top` findings and third parties.
 */
export async function readAuditSummary(
  sql: Sql,
  accountId: string,
  auditId: string,
  top: number,
  opts: { useStored: boolean },
): Promise<AuditSummaryRead | null> {
  const [stored] = await sql<Array<Raw & { summary: StoredAuditSummary | null }>>`
    SELECT ${sql.unsafe(ROW_COLUMNS)}, summary FROM audits WHERE id = ${auditId} AND account_id = ${accountId}`
  if (!stored) return null
  if (stored.summary && opts.useStored) return { ...stored.summary, row: toRow(stored), stored: true }
  const [r] = await sql<
    Array<
      Raw & {
        head: Record<string, unknown> | null
        severities: string[] | null
        statuses: string[] | null
        top: Array<Record<string, unknown>> | null
        top_third: Array<Record<string, unknown>> | null
        third_total: number | null
        pages_total: number | null
        checks_total: number | null
      }
    >
  >`
    SELECT ${sql.unsafe(ROW_COLUMNS)},
      ${sql.unsafe(HEAD)} AS head,
      jsonb_path_query_array(result, '$.findings[*].severity') AS severities,
      jsonb_path_query_array(result, '$.findings[*].status') AS statuses,
      jsonb_path_query_array(result, '$.findings[0 to $last]', jsonb_build_object('last', ${Math.max(0, top - 1)}::int)) AS top,
      jsonb_path_query_array(result, '$.thirdParties[0 to $last]', jsonb_build_object('last', ${Math.max(0, top - 1)}::int)) AS top_third,
      (jsonb_path_query_first(result, '$.thirdParties.size()'))::int AS third_total,
      (jsonb_path_query_first(result, '$.pages.size()'))::int AS pages_total,
      (jsonb_path_query_first(result, '$.checks.size()'))::int AS checks_total
    FROM audits WHERE id = ${auditId} AND account_id = ${accountId}`
  if (!r) return null
  const severities = r.severities ?? []
  return {
    row: toRow(r),
    stored: false,
    head: r.head,
    severities,
    statuses: r.statuses ?? [],
    top: r.top ?? [],
    topThird: r.top_third ?? [],
    totals: { findings: severities.length, pages: r.pages_total ?? 0, checks: r.checks_total ?? 0, thirdParties: r.third_total ?? 0 },
  }
}

export interface AuditSlice {
  row: AuditRow
  /** The result's score and grade (null until it has a result). */
  score: number | null
  grade: string | null
  total: number
  items: Array<Record<string, unknown>>
  /** The result's site-wide checks, whole (small), when asked for. */
  siteChecks?: Array<Record<string, unknown>>
}

/**
 * Items [offset, offset + count) of one list of the result, with the list's length; null when the audit is
 * not this account's.
 */
export async function readAuditSlice(
  sql: Sql,
  accountId: string,
  auditId: string,
  list: ResultList,
  offset: number,
  count: number,
  opts: { siteChecks?: boolean } = {},
): Promise<AuditSlice | null> {
  const path = `$.${list}[$from to $to]`
  const size = `$.${list}.size()`
  const [r] = await sql<
    Array<Raw & { score: number | null; grade: string | null; items: unknown[] | null; total: number | null; site: unknown[] | null }>
  >`
    SELECT ${sql.unsafe(ROW_COLUMNS)},
      (jsonb_path_query_first(result, '$.score'))::float8 AS score,
      jsonb_path_query_first(result, '$.grade') #>> '{}' AS grade,
      jsonb_path_query_array(result, ${path}::jsonpath, jsonb_build_object('from', ${offset}::int, 'to', ${offset + Math.max(1, count) - 1}::int)) AS items,
      (jsonb_path_query_first(result, ${size}::jsonpath))::int AS total,
      ${opts.siteChecks ? sql`jsonb_path_query_array(result, '$.siteChecks[*]')` : sql`NULL::jsonb`} AS site
    FROM audits WHERE id = ${auditId} AND account_id = ${accountId}`
  if (!r) return null
  return {
    row: toRow(r),
    score: r.score,
    grade: r.grade,
    total: r.total ?? 0,
    items: count > 0 ? ((r.items ?? []) as Array<Record<string, unknown>>) : [],
    ...(opts.siteChecks ? { siteChecks: (r.site ?? []) as Array<Record<string, unknown>> } : {}),
  }
}

/** The result's head and some of its lists whole (findings, siteChecks), for readers that filter them. */
export async function readAuditLists(
  sql: Sql,
  accountId: string,
  auditId: string,
): Promise<{
  row: AuditRow
  head: Record<string, unknown> | null
  findings: Array<Record<string, unknown>>
  siteChecks: Array<Record<string, unknown>>
} | null> {
  const [r] = await sql<Array<Raw & { head: Record<string, unknown> | null; findings: unknown[] | null; site: unknown[] | null }>>`
    SELECT ${sql.unsafe(ROW_COLUMNS)}, ${sql.unsafe(HEAD)} AS head,
      jsonb_path_query_array(result, '$.findings[*]') AS findings, jsonb_path_query_array(result, '$.siteChecks[*]') AS site
    FROM audits WHERE id = ${auditId} AND account_id = ${accountId}`
  if (!r) return null
  return {
    row: toRow(r),
    head: r.head,
    findings: (r.findings ?? []) as Array<Record<string, unknown>>,
    siteChecks: (r.site ?? []) as Array<Record<string, unknown>>,
  }
}
