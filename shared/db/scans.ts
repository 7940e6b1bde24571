// Apps and scans. A scan row is the source of truth for a scan's state; the queue only carries its id.
import { newId } from '../lib/ids.ts'
import type { PlatformSignals } from '../report/platform.ts'
import type { Sql } from './index.ts'

export type ScanStatus = 'queued' | 'running' | 'completed' | 'failed'

export interface ScanRow {
  id: string
  accountId: string
  appId: string
  url: string
  status: ScanStatus
  score: number | null
  grade: string | null
  report: unknown
  error: { code: string; message: string } | null
  attempts: number
  createdAt: Date
  startedAt: Date | null
  finishedAt: Date | null
  /**
   * What the worker recorded to tell the hosting platform, as stored (asPlatformSignals in shared/report/platform.ts
   * reads it); null for scans recorded without it.
   */
  platformSignals: unknown
}

type Raw = {
  id: string
  account_id: string
  app_id: string
  url: string
  status: ScanStatus
  score: number | null
  grade: string | null
  report: unknown
  error: ScanRow['error']
  attempts: number
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
  platform_signals?: unknown
}

const toScan = (r: Raw): ScanRow => ({
  id: r.id,
  accountId: r.account_id,
  appId: r.app_id,
  url: r.url,
  status: r.status,
  score: r.score,
  grade: r.grade,
  report: r.report,
  error: r.error,
  attempts: r.attempts,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  platformSignals: r.platform_signals ?? null,
})

/** The app an URL belongs to is its origin; one row per account and origin. */
export async function upsertApp(sql: Sql, accountId: string, origin: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO apps (id, account_id, origin) VALUES (${newId('app')}, ${accountId}, ${origin})
    ON CONFLICT (account_id, origin) DO UPDATE SET origin = EXCLUDED.origin
    RETURNING id`
  return row!.id
}

export async function createScan(sql: Sql, accountId: string, url: string): Promise<ScanRow> {
  const appId = await upsertApp(sql, accountId, new URL(url).origin)
  const [row] = await sql<Raw[]>`
    INSERT INTO scans (id, account_id, app_id, url) VALUES (${newId('scn')}, ${accountId}, ${appId}, ${url})
    RETURNING *`
  return toScan(row!)
}

/**
 * Records a scan unless the account already has `maxInFlight` scans queued or running that started within
 * `windowSeconds` (older ones are left to recovery). The account row is locked for the count and the insert,
 * so concurrent callers on any replica never pass the cap. Null when the cap is reached.
 */
export async function createScanUnderCap(
  sql: Sql,
  accountId: string,
  url: string,
  cap: { maxInFlight: number; windowSeconds: number },
): Promise<ScanRow | null> {
  const appId = await upsertApp(sql, accountId, new URL(url).origin)
  return sql.begin(async (tx) => {
    await tx`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`
    const [row] = await tx<Raw[]>`
      INSERT INTO scans (id, account_id, app_id, url)
      SELECT ${newId('scn')}, ${accountId}, ${appId}, ${url}
      WHERE (SELECT count(*) FROM scans WHERE account_id = ${accountId} AND status IN ('queued', 'running')
             AND created_at > now() - make_interval(secs => ${cap.windowSeconds})) < ${cap.maxInFlight}
      RETURNING *`
    return row ? toScan(row) : null
  }) as Promise<ScanRow | null>
}

export async function getScan(sql: Sql, accountId: string, id: string): Promise<ScanRow | null> {
  const [row] = await sql<Raw[]>`SELECT * FROM scans WHERE id = ${id} AND account_id = ${accountId}`
  return row ? toScan(row) : null
}

/** Worker side: the scan by id alone (the job carries no account). */
export async function getScanById(sql: Sql, id: string): Promise<ScanRow | null> {
  const [row] = await sql<Raw[]>`SELECT * FROM scans WHERE id = ${id}`
  return row ? toScan(row) : null
}

/** Claims a scan for a worker. Returns false when it is already finished (a late redelivery). */
export async function markScanRunning(sql: Sql, id: string, worker: string): Promise<boolean> {
  const r = await sql`
    UPDATE scans SET status = 'running', worker = ${worker}, attempts = attempts + 1, started_at = now()
    WHERE id = ${id} AND status IN ('queued', 'running')`
  return r.count > 0
}

/** Stores the finished report and, when given, the platform signals of the scanned response. */
export async function completeScan(
  sql: Sql,
  id: string,
  report: { score: number; grade: string },
  platformSignals: PlatformSignals | null = null,
): Promise<void> {
  await sql`
    UPDATE scans SET status = 'completed', score = ${report.score}, grade = ${report.grade},
      report = ${sql.json(report as never)}, error = NULL, finished_at = now(),
      platform_signals = ${platformSignals ? sql.json(platformSignals as never) : null}
    WHERE id = ${id} AND status IN ('queued', 'running')`
}

export async function failScan(sql: Sql, id: string, error: { code: string; message: string }): Promise<void> {
  await sql`
    UPDATE scans SET status = 'failed', error = ${sql.json(error)}, finished_at = now()
    WHERE id = ${id} AND status IN ('queued', 'running')`
}

/**
 * Scans still queued or running after `olderThanSeconds` are dispatched again by the caller:
 * their job may have been lost with Redis. Returns their ids.
 */
export async function unfinishedScans(sql: Sql, olderThanSeconds: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM scans WHERE status IN ('queued', 'running')
      AND created_at < now() - make_interval(secs => ${olderThanSeconds})
    ORDER BY created_at LIMIT 1000`
  return rows.map((r) => r.id)
}

// ---- Listings, newest first, with keyset pagination ----

/** A position in a newest-first listing: the last row's time (microseconds, UTC) and id. */
export interface Keyset {
  at: string
  id: string
}

export interface Page<T> {
  items: T[]
  /** Where the next page starts; null on the last page. */
  next: Keyset | null
}

/**
 * Timestamps keep their microseconds in keys: a JavaScript Date would cut them and skip or repeat rows. Keys go
 * back to the database as text (`::text::timestamptz`): a parameter typed timestamptz would be serialised
 * through a Date by the client and lose them again.
 */
const KEY_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const KEY_ID = /^[a-z]{3}_[0-9A-Za-z]{1,60}$/

/** An opaque cursor for a keyset of one listing; `kind` stops a cursor from one listing being used in another. */
export function encodeKeyset(kind: string, key: Keyset): string {
  return Buffer.from(JSON.stringify({ k: kind, t: key.at, i: key.id })).toString('base64url')
}

/** The keyset in a cursor from encodeKeyset, or null when it is not one of `kind`. */
export function decodeKeyset(kind: string, cursor: string): Keyset | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k?: unknown; t?: unknown; i?: unknown }
    if (v.k !== kind || typeof v.t !== 'string' || typeof v.i !== 'string') return null
    if (!KEY_AT.test(v.t) || Number.isNaN(Date.parse(v.t)) || !KEY_ID.test(v.i)) return null
    return { at: v.t, id: v.i }
  } catch {
    return null
  }
}

export interface ScanListItem {
  id: string
  appId: string
  url: string
  status: ScanStatus
  score: number | null
  grade: string | null
  createdAt: Date
  finishedAt: Date | null
}

export interface ScanListFilter {
  appId?: string
  /** Only scans of the app with this origin. */
  origin?: string
  after?: Keyset | null
  limit: number
}

/** This account's scans, newest first by (created_at, id). */
export async function listScans(sql: Sql, accountId: string, f: ScanListFilter): Promise<Page<ScanListItem>> {
  const rows = await sql<
    Array<{
      id: string
      app_id: string
      url: string
      status: ScanStatus
      score: number | null
      grade: string | null
      created_at: Date
      finished_at: Date | null
      at_key: string
    }>
  >`
    SELECT s.id, s.app_id, s.url, s.status, s.score, s.grade, s.created_at, s.finished_at,
      to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key
    FROM scans s
    WHERE s.account_id = ${accountId}
      ${f.appId !== undefined ? sql`AND s.app_id = ${f.appId}` : sql``}
      ${f.origin !== undefined ? sql`AND s.app_id = (SELECT a.id FROM apps a WHERE a.account_id = ${accountId} AND a.origin = ${f.origin})` : sql``}
      ${f.after ? sql`AND (s.created_at, s.id) < (${f.after.at}::text::timestamptz, ${f.after.id})` : sql``}
    ORDER BY s.created_at DESC, s.id DESC
    LIMIT ${f.limit + 1}`
  const more = rows.length > f.limit
  const page = rows.slice(0, f.limit)
  const last = page[page.length - 1]
  return {
    items: page.map((r) => ({
      id: r.id,
      appId: r.app_id,
      url: r.url,
      status: r.status,
      score: r.score,
      grade: r.grade,
      createdAt: r.created_at,
      finishedAt: r.finished_at,
    })),
    next: more && last ? { at: last.at_key, id: last.id } : null,
  }
}

export interface AppRow {
  id: string
  origin: string
  createdAt: Date
}

export async function getApp(sql: Sql, accountId: string, appId: string): Promise<AppRow | null> {
  const [row] = await sql<Array<{ id: string; origin: string; created_at: Date }>>`
    SELECT id, origin, created_at FROM apps WHERE id = ${appId} AND account_id = ${accountId}`
  return row ? { id: row.id, origin: row.origin, createdAt: row.created_at } : null
}

export interface AppListItem extends AppRow {
  scans: number
  /** When the app last had a scan (or was added, before any scan). */
  lastActivityAt: Date
  /** The newest scan, whatever its state. */
  latestScan: { id: string; status: ScanStatus; score: number | null; grade: string | null; createdAt: Date } | null
  /** The newest completed scan: the app's current score. */
  latestCompletedScan: { id: string; score: number | null; grade: string | null; createdAt: Date } | null
}

/** This account's apps, most recent activity first by (last scan or creation time, id). */
export async function listApps(sql: Sql, accountId: string, f: { after?: Keyset | null; limit: number }): Promise<Page<AppListItem>> {
  const rows = await sql<
    Array<{
      id: string
      origin: string
      created_at: Date
      activity: Date
      at_key: string
      scans: number
      l_id: string | null
      l_status: ScanStatus | null
      l_score: number | null
      l_grade: string | null
      l_created_at: Date | null
      c_id: string | null
      c_score: number | null
      c_grade: string | null
      c_created_at: Date | null
    }>
  >`
    SELECT p.id, p.origin, p.created_at, p.activity,
      to_char(p.activity AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key,
      c.scans,
      l.id AS l_id, l.status AS l_status, l.score AS l_score, l.grade AS l_grade, l.created_at AS l_created_at,
      lc.id AS c_id, lc.score AS c_score, lc.grade AS c_grade, lc.created_at AS c_created_at
    FROM (
      SELECT a.id, a.origin, a.created_at, a.activity FROM (
        SELECT ap.id, ap.origin, ap.created_at,
          COALESCE((SELECT max(s.created_at) FROM scans s WHERE s.app_id = ap.id), ap.created_at) AS activity
        FROM apps ap WHERE ap.account_id = ${accountId}
      ) a
      ${f.after ? sql`WHERE (a.activity, a.id) < (${f.after.at}::text::timestamptz, ${f.after.id})` : sql``}
      ORDER BY a.activity DESC, a.id DESC
      LIMIT ${f.limit + 1}
    ) p
    CROSS JOIN LATERAL (SELECT count(*)::int AS scans FROM scans s WHERE s.app_id = p.id) c
    LEFT JOIN LATERAL (
      SELECT s.id, s.status, s.score, s.grade, s.created_at FROM scans s WHERE s.app_id = p.id
      ORDER BY s.created_at DESC, s.id DESC LIMIT 1
    ) l ON true
    LEFT JOIN LATERAL (
      SELECT s.id, s.score, s.grade, s.created_at FROM scans s WHERE s.app_id = p.id AND s.status = 'completed'
      ORDER BY s.created_at DESC, s.id DESC LIMIT 1
    ) lc ON true
    ORDER BY p.activity DESC, p.id DESC`
  const more = rows.length > f.limit
  const page = rows.slice(0, f.limit)
  const last = page[page.length - 1]
  return {
    items: page.map((r) => ({
      id: r.id,
      origin: r.origin,
      createdAt: r.created_at,
      scans: r.scans,
      lastActivityAt: r.activity,
      latestScan: r.l_id ? { id: r.l_id, status: r.l_status!, score: r.l_score, grade: r.l_grade, createdAt: r.l_created_at! } : null,
      latestCompletedScan: r.c_id ? { id: r.c_id, score: r.c_score, grade: r.c_grade, createdAt: r.c_created_at! } : null,
    })),
    next: more && last ? { at: last.at_key, id: last.id } : null,
  }
}
