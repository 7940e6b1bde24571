// Listings only the dashboard needs: an account's recent audits, for the apps page.
import type { Sql } from './index.ts'

export interface AuditListItem {
  id: string
  appId: string
  url: string
  status: string
  pagesScanned: number
  pagesDiscovered: number
  /** Completed audits only. */
  score: number | null
  grade: string | null
  createdAt: Date
}

export async function listRecentAudits(sql: Sql, accountId: string, limit: number): Promise<AuditListItem[]> {
  const rows = await sql<
    {
      id: string
      app_id: string
      url: string
      status: string
      pages_scanned: number
      pages_discovered: number
      score: number | null
      grade: string | null
      created_at: Date
    }[]
  >`
    SELECT id, app_id, url, status, pages_scanned, pages_discovered, (result->>'score')::int AS score, result->>'grade' AS grade, created_at
    FROM audits
    WHERE account_id = ${accountId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
  return rows.map((r) => ({
    id: r.id,
    appId: r.app_id,
    url: r.url,
    status: r.status,
    pagesScanned: r.pages_scanned,
    pagesDiscovered: r.pages_discovered,
    score: r.score,
    grade: r.grade,
    createdAt: r.created_at,
  }))
}
