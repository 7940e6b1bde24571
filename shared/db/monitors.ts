// Monitors and their runs (migration 008, docs/monitors.md). Claiming a due monitor moves it to its next
// slot in the same statement, and a run is settled only while it is still pending, under its row lock: two
// cron runs at once never start one monitor twice in a slot, nor compare one scan twice.
import { AppError, type ErrorCode, ERROR_CODES, isTargetFault } from '../errors.ts'
import { newId } from '../lib/ids.ts'
import { asComparable, type ChangeItem, diffReports, type Regression, resolveRegressions } from '../report/monitor-diff.ts'
import type { Plan } from './accounts.ts'
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
): Promise<{ monitor: MonitorRow; created: boolean; changed: boolean }> {
  return sql.begin(async (tx) => {
    // Inside the transaction: its upsert locks the app row until commit, and a refused call adds no app.
    const appId = await upsertApp(tx as unknown as Sql, accountId, origin)
    const [cur] = await tx<Raw[]>`SELECT * FROM monitors WHERE app_id = ${appId}`
    const current = cur ? toMonitor(cur) : null
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

// ---- The cron job's side ----

export interface DueMonitor {
  id: string
  accountId: string
  plan: Plan
  url: string
}

/**
 * Claims up to `max` due monitors of paid accounts and moves each to its next slot from now, in one
 * statement: rows another claim holds are skipped, and a row it has just moved no longer passes
 * `next_run_at <= now()` when rechecked, so a monitor is claimed once per slot however many runs race.
 * A slot missed while nothing ran is not made up: the next one is counted from now.
 */
export async function claimDueMonitors(sql: Sql, max: number): Promise<DueMonitor[]> {
  const rows = await sql<Array<{ id: string; account_id: string; plan: Plan; url: string }>>`
    WITH due AS (
      SELECT m.id FROM monitors m JOIN accounts a ON a.id = m.account_id
      WHERE m.enabled AND m.next_run_at <= now() AND a.plan <> 'free'
      ORDER BY m.next_run_at, m.id
      LIMIT ${max}
      FOR UPDATE OF m SKIP LOCKED
    )
    UPDATE monitors m SET next_run_at = monitor_next_run(m.schedule, m.hour, m.weekday, now())
    FROM due, accounts a
    WHERE m.id = due.id AND a.id = m.account_id
    RETURNING m.id, m.account_id, a.plan, m.url`
  return rows.map((r) => ({ id: r.id, accountId: r.account_id, plan: r.plan, url: r.url }))
}

/** Gives a claimed monitor back to be run within `seconds` (its scan could not be started yet). */
export async function deferMonitor(sql: Sql, id: string, seconds: number): Promise<void> {
  await sql`UPDATE monitors SET next_run_at = LEAST(next_run_at, now() + make_interval(secs => ${seconds})) WHERE id = ${id}`
}

/** Records a run whose scan was started; the cron job settles it once the scan has finished. */
export async function startRun(sql: Sql, monitorId: string, scanId: string): Promise<string> {
  const id = newId('mrn')
  await sql`
    WITH run AS (INSERT INTO monitor_runs (id, monitor_id, scan_id) VALUES (${id}, ${monitorId}, ${scanId}) RETURNING monitor_id)
    UPDATE monitors SET last_run_at = now(), last_scan_id = ${scanId} FROM run WHERE monitors.id = run.monitor_id`
  return id
}

/** A failure the target caused (it does not resolve, or resolves to a blocked address) is worth an alert; ours is not. */
const alertsOnFailure = (code: string) => code in ERROR_CODES && isTargetFault(new AppError(code as ErrorCode))

/** Records a run that could not start a scan (the target was refused before any scan existed). */
export async function recordFailedStart(sql: Sql, monitorId: string, error: { code: string; message: string }): Promise<void> {
  await sql`
    WITH run AS (
      INSERT INTO monitor_runs (id, monitor_id, status, error, alert, settled_at)
      VALUES (${newId('mrn')}, ${monitorId}, 'failed', ${sql.json(error)}, ${alertsOnFailure(error.code)}, now())
      RETURNING monitor_id
    )
    UPDATE monitors SET last_run_at = now() FROM run WHERE monitors.id = run.monitor_id`
}

/** Pending runs whose scan has finished (or is gone), oldest first: those to settle, among `ids` when given. */
export async function finishedRuns(sql: Sql, opts: { ids?: readonly string[]; limit: number }): Promise<string[]> {
  if (opts.ids?.length === 0) return []
  const rows = await sql<{ id: string }[]>`
    SELECT r.id FROM monitor_runs r LEFT JOIN scans s ON s.id = r.scan_id
    WHERE r.status = 'pending' AND (s.id IS NULL OR s.status IN ('completed', 'failed'))
      ${opts.ids ? sql`AND r.id IN ${sql(opts.ids as string[])}` : sql``}
    ORDER BY r.created_at, r.id
    LIMIT ${opts.limit}`
  return rows.map((r) => r.id)
}

export interface SettledRun {
  id: string
  monitorId: string
  status: 'completed' | 'failed'
  alert: boolean
  regressions: number
}

/**
 * Compares a pending run's finished scan with the monitor's previous completed scan of the same page,
 * records what got worse and better, marks as resolved the earlier regressions this scan no longer shows,
 * and settles the run. Null when there is nothing to do: already settled (by a concurrent run) or the scan
 * has not finished.
 */
export async function settleRun(sql: Sql, runId: string): Promise<SettledRun | null> {
  return sql.begin(async (tx) => {
    const [r] = await tx<
      Array<{
        monitor_id: string
        notify_on: NotifyOn
        scan_id: string | null
        scan_status: string | null
        scan_url: string | null
        report: unknown
        scan_error: { code: string; message: string } | null
      }>
    >`
      SELECT r.monitor_id, m.notify_on, s.id AS scan_id, s.status AS scan_status, s.url AS scan_url, s.report, s.error AS scan_error
      FROM monitor_runs r JOIN monitors m ON m.id = r.monitor_id LEFT JOIN scans s ON s.id = r.scan_id
      WHERE r.id = ${runId} AND r.status = 'pending'
      FOR UPDATE OF r`
    if (!r || r.scan_status === 'queued' || r.scan_status === 'running') return null
    const current = r.scan_status === 'completed' ? asComparable(r.report) : null
    if (!current || !r.scan_id) {
      const error = r.scan_error ?? { code: 'scan_failed', message: r.scan_id ? 'The scan has no report.' : 'The scan is gone.' }
      const alert = alertsOnFailure(error.code)
      await tx`
        UPDATE monitor_runs SET status = 'failed', error = ${tx.json(error)}, alert = ${alert}, settled_at = now() WHERE id = ${runId}`
      return { id: runId, monitorId: r.monitor_id, status: 'failed' as const, alert, regressions: 0 }
    }
    // Earlier runs only, by creation: the subquery keeps the timestamps' microseconds, which a Date would cut.
    const before = () => tx`(SELECT created_at FROM monitor_runs WHERE id = ${runId})`
    const [prev] = await tx<Array<{ scan_id: string; report: unknown }>>`
      SELECT s.id AS scan_id, s.report FROM monitor_runs p JOIN scans s ON s.id = p.scan_id
      WHERE p.monitor_id = ${r.monitor_id} AND p.status = 'completed' AND s.url = ${r.scan_url} AND p.created_at < ${before()}
      ORDER BY p.created_at DESC, p.id DESC LIMIT 1`
    const previous = prev ? asComparable(prev.report) : null
    const diff = previous ? diffReports(previous, current) : { regressions: [], improvements: [] }
    const at = new Date().toISOString()
    // Only a scan of the same page resolves a regression (a monitor moved to another URL starts afresh).
    const open = await tx<Array<{ id: string; regressions: Regression[] }>>`
      SELECT p.id, p.regressions FROM monitor_runs p JOIN scans s ON s.id = p.scan_id
      WHERE p.monitor_id = ${r.monitor_id} AND p.open_regressions > 0 AND p.created_at < ${before()} AND s.url = ${r.scan_url}
      ORDER BY p.created_at, p.id
      FOR UPDATE OF p`
    for (const o of open) {
      const resolved = resolveRegressions(o.regressions, current, { scanId: r.scan_id, at })
      if (!resolved.changed) continue
      await tx`
        UPDATE monitor_runs SET regressions = ${tx.json(resolved.items as never)}, open_regressions = ${resolved.open} WHERE id = ${o.id}`
    }
    const regressions: Regression[] = diff.regressions.map((i) => ({ ...i, resolvedAt: null, resolvedByScanId: null }))
    const alert = r.notify_on === 'any' ? regressions.length + diff.improvements.length > 0 : regressions.length > 0
    await tx`
      UPDATE monitor_runs SET status = 'completed', score = ${current.score}, previous_scan_id = ${prev?.scan_id ?? null},
        previous_score = ${previous?.score ?? null}, regressions = ${tx.json(regressions as never)},
        improvements = ${tx.json(diff.improvements as never)}, open_regressions = ${regressions.length}, alert = ${alert},
        settled_at = now()
      WHERE id = ${runId}`
    return { id: runId, monitorId: r.monitor_id, status: 'completed' as const, alert, regressions: regressions.length }
  }) as Promise<SettledRun | null>
}
