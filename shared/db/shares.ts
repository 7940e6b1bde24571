// Public links to reports (/r/{slug}): a scan or an audit its owner chose to share. The slug is the only
// key a visitor holds; it is 128 random bits, so holding it is the permission.
import { randomBytes } from 'node:crypto'
import { base62 } from '../lib/ids.ts'
import type { Sql } from './index.ts'

export type ShareKind = 'scan' | 'audit'

export interface Share {
  slug: string
  accountId: string
  kind: ShareKind
  /** The scan's or the audit's id. */
  targetId: string
  createdAt: Date
}

type Raw = { slug: string; account_id: string; scan_id: string | null; audit_id: string | null; created_at: Date }

const toShare = (r: Raw): Share => ({
  slug: r.slug,
  accountId: r.account_id,
  kind: r.scan_id ? 'scan' : 'audit',
  targetId: (r.scan_id ?? r.audit_id)!,
  createdAt: r.created_at,
})

/** 16 random bytes in base62: always 22 characters of [0-9A-Za-z]. */
export const newSlug = () => base62(randomBytes(16))

/** Whether a string could be a slug at all; anything else is answered 404 without a query. */
export const isSlug = (s: unknown): s is string => typeof s === 'string' && /^[0-9A-Za-z]{22}$/.test(s)

/**
 * Shares a report of this account: its live link, made now or kept from before (sharing twice is one link).
 * Null when the scan or audit is not this account's.
 */
export async function shareReport(sql: Sql, accountId: string, kind: ShareKind, targetId: string): Promise<Share | null> {
  const existing = await findShareOf(sql, accountId, kind, targetId)
  if (existing) return existing
  const scanId = kind === 'scan' ? targetId : null
  const auditId = kind === 'audit' ? targetId : null
  // The owner check and the insert are one statement: a report of another account inserts nothing.
  const table = kind === 'scan' ? sql`scans` : sql`audits`
  const rows = await sql<Raw[]>`
    INSERT INTO report_shares (slug, account_id, scan_id, audit_id)
    SELECT ${newSlug()}, ${accountId}, ${scanId}, ${auditId}
    WHERE EXISTS (SELECT 1 FROM ${table} WHERE id = ${targetId} AND account_id = ${accountId})
    ON CONFLICT DO NOTHING
    RETURNING slug, account_id, scan_id, audit_id, created_at`
  if (rows[0]) return toShare(rows[0])
  // Lost a race with another share of the same report: that one is the link.
  return findShareOf(sql, accountId, kind, targetId)
}

/** The live link of a report of this account, if it is shared. */
export async function findShareOf(sql: Sql, accountId: string, kind: ShareKind, targetId: string): Promise<Share | null> {
  const rows =
    kind === 'scan'
      ? await sql<Raw[]>`SELECT slug, account_id, scan_id, audit_id, created_at FROM report_shares
          WHERE scan_id = ${targetId} AND account_id = ${accountId}`
      : await sql<Raw[]>`SELECT slug, account_id, scan_id, audit_id, created_at FROM report_shares
          WHERE audit_id = ${targetId} AND account_id = ${accountId}`
  return rows[0] ? toShare(rows[0]) : null
}

/** The shares among these reports of an account, by report id (for the dashboard's lists). */
export async function sharedAmong(sql: Sql, accountId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await sql<Raw[]>`SELECT slug, account_id, scan_id, audit_id, created_at FROM report_shares
    WHERE account_id = ${accountId} AND (scan_id = ANY(${ids}) OR audit_id = ANY(${ids}))`
  return new Map(rows.map((r) => [(r.scan_id ?? r.audit_id)!, r.slug]))
}

/** The share a slug names, or null (withdrawn, or never made). */
export async function findShare(sql: Sql, slug: string): Promise<Share | null> {
  if (!isSlug(slug)) return null
  const rows = await sql<Raw[]>`SELECT slug, account_id, scan_id, audit_id, created_at FROM report_shares WHERE slug = ${slug}`
  return rows[0] ? toShare(rows[0]) : null
}

/** Withdraws a report's link: its slug answers 404 from now on. False when it was not shared (or not this account's). */
export async function withdrawShare(sql: Sql, accountId: string, kind: ShareKind, targetId: string): Promise<boolean> {
  const rows =
    kind === 'scan'
      ? await sql`DELETE FROM report_shares WHERE scan_id = ${targetId} AND account_id = ${accountId} RETURNING slug`
      : await sql`DELETE FROM report_shares WHERE audit_id = ${targetId} AND account_id = ${accountId} RETURNING slug`
  return rows.length > 0
}

/** The score and grade of the report a slug names (null while it has none), or null when nothing is shared under it. */
export async function sharedScore(sql: Sql, slug: string): Promise<{ score: number | null; grade: string | null } | null> {
  if (!isSlug(slug)) return null
  const rows = await sql<{ score: number | null; grade: string | null }[]>`
    SELECT coalesce(s.score, (a.result->>'score')::int) AS score, coalesce(s.grade, a.result->>'grade') AS grade
    FROM report_shares r
    LEFT JOIN scans s ON s.id = r.scan_id AND s.status = 'completed'
    LEFT JOIN audits a ON a.id = r.audit_id AND a.status = 'completed'
    WHERE r.slug = ${slug}`
  return rows[0] ?? null
}
