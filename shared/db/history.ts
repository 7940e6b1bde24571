// An account's history for scan_history: its scans and its whole-site audits in one newest-first listing,
// each row marked with its kind, paged by the same (created_at, id) keyset as the scan listing. Scan and
// audit ids have different prefixes, so the id still breaks ties between rows of the same microsecond.
import type { Sql } from './index.ts'
import type { Keyset, Page, ScanListFilter, ScanListItem } from './scans.ts'
import type { AuditStatus } from './audits.ts'

export type HistoryItem = (ScanListItem & { kind: 'scan' }) | (Omit<ScanListItem, 'status'> & { kind: 'audit'; status: AuditStatus })

export async function listHistory(sql: Sql, accountId: string, f: ScanListFilter): Promise<Page<HistoryItem>> {
  // Built anew for each use: the same filters apply to both tables.
  const filters = (t: 'scans' | 'audits') => sql`
    ${f.appId !== undefined ? sql`AND ${sql(t)}.app_id = ${f.appId}` : sql``}
    ${f.origin !== undefined ? sql`AND ${sql(t)}.app_id = (SELECT p.id FROM apps p WHERE p.account_id = ${accountId} AND p.origin = ${f.origin})` : sql``}
    ${f.after ? sql`AND (${sql(t)}.created_at, ${sql(t)}.id) < (${f.after.at}::text::timestamptz, ${f.after.id})` : sql``}`
  const rows = await sql<
    Array<{
      kind: 'scan' | 'audit'
      id: string
      app_id: string
      url: string
      status: string
      score: number | null
      grade: string | null
      created_at: Date
      finished_at: Date | null
      at_key: string
    }>
  >`
    SELECT * FROM (
      (SELECT 'scan' AS kind, scans.id, scans.app_id, scans.url, scans.status, scans.score, scans.grade, scans.created_at, scans.finished_at
        FROM scans WHERE scans.account_id = ${accountId} ${filters('scans')}
        ORDER BY scans.created_at DESC, scans.id DESC LIMIT ${f.limit + 1})
      UNION ALL
      -- An audit's score and grade are in its result, only once it completed; the LIMIT comes first so that
      -- only the audits on this page have their (large) results opened.
      (SELECT 'audit', a.id, a.app_id, a.url, a.status,
          CASE WHEN a.status = 'completed' THEN (a.result ->> 'score')::int END,
          CASE WHEN a.status = 'completed' THEN a.result ->> 'grade' END,
          a.created_at, a.finished_at
        FROM (SELECT * FROM audits WHERE audits.account_id = ${accountId} ${filters('audits')}
              ORDER BY created_at DESC, id DESC LIMIT ${f.limit + 1}) a)
    ) h
    CROSS JOIN LATERAL (SELECT to_char(h.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key) k
    ORDER BY h.created_at DESC, h.id DESC
    LIMIT ${f.limit + 1}`
  const more = rows.length > f.limit
  const page = rows.slice(0, f.limit)
  const last = page[page.length - 1]
  return {
    items: page.map(
      (r) =>
        ({
          kind: r.kind,
          id: r.id,
          appId: r.app_id,
          url: r.url,
          status: r.status,
          score: r.score,
          grade: r.grade,
          createdAt: r.created_at,
          finishedAt: r.finished_at,
        }) as HistoryItem,
    ),
    next: more && last ? ({ at: last.at_key, id: last.id } satisfies Keyset) : null,
  }
}
