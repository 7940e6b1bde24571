// Monitors and the listings of their runs (migration 008, docs/monitors.md), as monitor_app, get_account and
// the dashboard read and change them. The cron job's side (due monitors, starting and settling runs) is
// monitor-runs.ts.
import { newId } from '../lib/ids.ts'
import type { ChangeItem, Regression } from '../report/monitor-diff.ts'
import type { Sql } from './index.ts'
import { upsertApp } from './scans.ts'

export type Schedule = 'daily' | 'weekly'
export type NotifyOn = 'regression' | 'any'

export interface MonitorSettings {
  url: string
  schedule: Schedule
  /** 0-23, UTC. */
  hour: number
  /** 0 (Sunday) to 6; null for a daily monitor. */
  weekday: number | null
  notifyOn: NotifyOn
  enabled: boolean
}

export interface MonitorRow extends MonitorSettings {
  id: string
  accountId: string
  appId: string
  nextRunAt: Date
  lastRunAt: Date | null
  lastScanId: string | null
  createdAt: Date
  updatedAt: Date
}

type Raw = {
  id: string
  account_id: string
  app_id: string
  url: string
  schedule: Schedule
  hour: number
  weekday: number | null
  notify_on: NotifyOn
  enabled: boolean
  next_run_at: Date
  last_run_at: Date | null
  last_scan_id: string | null
  created_at: Date
  updated_at: Date
}

const toMonitor = (r: Raw): MonitorRow => ({
  id: r.id,
  accountId: r.account_id,
  appId: r.app_id,
  url: r.url,
  schedule: r.schedule,
  hour: r.hour,
  weekday: r.weekday,
  notifyOn: r.notify_on,
  enabled: r.enabled,
  nextRunAt: r.next_run_at,
  lastRunAt: r.last_run_at,
  lastScanId: r.last_scan_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

const sameSettings = (a: MonitorSettings, b: MonitorSettings) =>
  a.url === b.url &&
  a.schedule === b.schedule &&
  a.hour === b.hour &&
  a.weekday === b.weekday &&
  a.notifyOn === b.notifyOn &&
  a.enabled === b.enabled

/**
 * Creates or updates the account's monitor of an app (one per app), adding the app when it is new. `decide`
 * gets the current monitor (null: none) while the app row is locked, so concurrent calls apply one after
 * the other, and returns what to store; it may throw to change nothing. The next slot is computed anew only when the schedule changed or a
 * paused monitor is resumed: calling again with the same arguments changes nothing, not even a due slot.
 */
export async function saveMonitor(
  sql: Sql,
  accountId: string,
  origin: string,
  decide: (current: MonitorRow | null) => MonitorSettings,
  cap?: { max: number; refused: (max: number) => Error },
): Promise<{ monitor: MonitorRow; created: boolean; changed: boolean }> {
  return sql.begin(async (tx) => {
    // The account row first: new monitors of one account are counted one call at a time.
    if (cap) await tx`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`
    // Inside the transaction: its upsert locks the app row until commit, and a refused call adds no app.
    const appId = await upsertApp(tx as unknown as Sql, accountId, origin)
    const [cur] = await tx<Raw[]>`SELECT * FROM monitors WHERE app_id = ${appId}`
    const current = cur ? toMonitor(cur) : null
    if (!current && cap) {
      const [held] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM monitors WHERE account_id = ${accountId}`
      if (held!.n >= cap.max) throw cap.refused(cap.max)
    }
    const s = decide(current)
    const next = () => tx`monitor_next_run(${s.schedule}::text, ${s.hour}::int, ${s.weekday}::int, now())`
    if (!current) {
      const [row] = await tx<Raw[]>`
        INSERT INTO monitors (id, account_id, app_id, url, schedule, hour, weekday, notify_on, enabled, next_run_at)
        VALUES (${newId('mon')}, ${accountId}, ${appId}, ${s.url}, ${s.schedule}, ${s.hour}, ${s.weekday}, ${s.notifyOn}, ${s.enabled}, ${next()})
        RETURNING *`
      return { monitor: toMonitor(row!), created: true, changed: true }
    }
    if (sameSettings(current, s)) return { monitor: current, created: false, changed: false }
    const reschedule =
      s.schedule !== current.schedule || s.hour !== current.hour || s.weekday !== current.weekday || (s.enabled && !current.enabled)
    const [row] = await tx<Raw[]>`
      UPDATE monitors SET url = ${s.url}, schedule = ${s.schedule}, hour = ${s.hour}, weekday = ${s.weekday},
        notify_on = ${s.notifyOn}, enabled = ${s.enabled}, next_run_at = ${reschedule ? next() : tx`next_run_at`}, updated_at = now()
      WHERE id = ${current.id}
      RETURNING *`
    return { monitor: toMonitor(row!), created: false, changed: true }
  }) as Promise<{ monitor: MonitorRow; created: boolean; changed: boolean }>
}

/** The account's monitor of the app with this origin, or null. */
export async function findMonitorByOrigin(sql: Sql, accountId: string, origin: string): Promise<MonitorRow | null> {
  const [row] = await sql<Raw[]>`
    SELECT m.* FROM monitors m JOIN apps a ON a.id = m.app_id
    WHERE m.account_id = ${accountId} AND a.origin = ${origin}`
  return row ? toMonitor(row) : null
}

/** Deletes the account's monitor of the app with this origin, and its runs; false when there was none. */
export async function deleteMonitorByOrigin(sql: Sql, accountId: string, origin: string): Promise<boolean> {
  const r = await sql`
    DELETE FROM monitors m USING apps a WHERE a.id = m.app_id AND m.account_id = ${accountId} AND a.origin = ${origin}`
  return r.count > 0
}

export async function deleteMonitor(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const r = await sql`DELETE FROM monitors WHERE id = ${id} AND account_id = ${accountId}`
  return r.count > 0
}

/** Pauses or resumes a monitor; a resumed one waits for its next slot from now. Null when it is not this account's. */
export async function setMonitorEnabled(sql: Sql, accountId: string, id: string, enabled: boolean): Promise<MonitorRow | null> {
  const [row] = await sql<Raw[]>`
    UPDATE monitors SET enabled = ${enabled}, updated_at = now(),
      next_run_at = CASE WHEN ${enabled}::boolean AND NOT enabled THEN monitor_next_run(schedule, hour, weekday, now()) ELSE next_run_at END
    WHERE id = ${id} AND account_id = ${accountId}
    RETURNING *`
  return row ? toMonitor(row) : null
}

export interface MonitorSummary extends MonitorRow {
  origin: string
  /** Of the latest completed run. */
  lastScore: number | null
  lastGrade: string | null
  /** Regressions recorded by its runs that no later scan has resolved. */
  openRegressions: number
}

/** The account's monitors, newest first, at most `limit`, and how many it has in all. */
export async function listMonitors(sql: Sql, accountId: string, limit: number): Promise<{ total: number; items: MonitorSummary[] }> {
  const rows = await sql<
    Array<Raw & { origin: string; last_score: number | null; last_grade: string | null; open: number; total: number }>
  >`
    SELECT m.*, a.origin, lr.score AS last_score, lr.grade AS last_grade, COALESCE(o.open, 0)::int AS open, (count(*) OVER ())::int AS total
    FROM monitors m JOIN apps a ON a.id = m.app_id
    LEFT JOIN LATERAL (
      SELECT r.score, s.grade FROM monitor_runs r LEFT JOIN scans s ON s.id = r.scan_id
      WHERE r.monitor_id = m.id AND r.status = 'completed' ORDER BY r.created_at DESC, r.id DESC LIMIT 1
    ) lr ON true
    LEFT JOIN LATERAL (
      SELECT sum(r.open_regressions) AS open FROM monitor_runs r WHERE r.monitor_id = m.id AND r.open_regressions > 0
    ) o ON true
    WHERE m.account_id = ${accountId}
    ORDER BY m.created_at DESC, m.id DESC
    LIMIT ${limit}`
  return {
    total: rows[0]?.total ?? 0,
    items: rows.map((r) => ({
      ...toMonitor(r),
      origin: r.origin,
      lastScore: r.last_score,
      lastGrade: r.last_grade,
      openRegressions: r.open,
    })),
  }
}

export type RunStatus = 'pending' | 'completed' | 'failed'

export interface MonitorRunItem {
  id: string
  monitorId: string
  scanId: string | null
  status: RunStatus
  score: number | null
  previousScanId: string | null
  previousScore: number | null
  regressions: Regression[]
  improvements: ChangeItem[]
  openRegressions: number
  alert: boolean
  error: { code: string; message: string } | null
  createdAt: Date
  settledAt: Date | null
}

type RunRaw = {
  id: string
  monitor_id: string
  scan_id: string | null
  status: RunStatus
  score: number | null
  previous_scan_id: string | null
  previous_score: number | null
  regressions: Regression[]
  improvements: ChangeItem[]
  open_regressions: number
  alert: boolean
  error: MonitorRunItem['error']
  created_at: Date
  settled_at: Date | null
}

const toRun = (r: RunRaw): MonitorRunItem => ({
  id: r.id,
  monitorId: r.monitor_id,
  scanId: r.scan_id,
  status: r.status,
  score: r.score,
  previousScanId: r.previous_scan_id,
  previousScore: r.previous_score,
  regressions: r.regressions,
  improvements: r.improvements,
  openRegressions: r.open_regressions,
  alert: r.alert,
  error: r.error,
  createdAt: r.created_at,
  settledAt: r.settled_at,
})

/** The latest `perMonitor` runs of each of the account's monitors, newest first. */
export async function listRecentRuns(sql: Sql, accountId: string, perMonitor: number): Promise<MonitorRunItem[]> {
  const rows = await sql<RunRaw[]>`
    SELECT x.* FROM (
      SELECT r.*, row_number() OVER (PARTITION BY r.monitor_id ORDER BY r.created_at DESC, r.id DESC) AS rn
      FROM monitor_runs r JOIN monitors m ON m.id = r.monitor_id WHERE m.account_id = ${accountId}
    ) x WHERE x.rn <= ${perMonitor}
    ORDER BY x.monitor_id, x.created_at DESC, x.id DESC`
  return rows.map(toRun)
}

/** The account's runs with regressions no later scan has resolved, newest first. */
export async function listOpenRegressionRuns(sql: Sql, accountId: string, limit: number): Promise<MonitorRunItem[]> {
  const rows = await sql<RunRaw[]>`
    SELECT r.* FROM monitor_runs r JOIN monitors m ON m.id = r.monitor_id
    WHERE m.account_id = ${accountId} AND r.open_regressions > 0
    ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`
  return rows.map(toRun)
}
