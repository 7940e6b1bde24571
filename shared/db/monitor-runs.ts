// The cron job's side of monitors (api/monitors/runner.ts): claiming due monitors, recording the runs their
// scans start, and settling each run once its scan has finished, as the runner decides from what is read.
// Claiming a due monitor moves it to its next slot in the same statement, and a run is settled only while it
// is still pending, under its row lock: two cron runs at once never start one monitor twice in a slot, nor
// compare one scan twice.
import { newId } from '../lib/ids.ts'
import type { ChangeItem, Regression } from '../report/monitor-diff.ts'
import type { Plan } from './accounts.ts'
import type { Sql } from './index.ts'
import type { NotifyOn } from './monitors.ts'

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
 * Accounts take turns: every account's most overdue monitor comes before any account's second, so one
 * account with many monitors due never holds back another's. A slot missed while nothing ran is not made
 * up: the next one is counted from now.
 */
export async function claimDueMonitors(sql: Sql, max: number): Promise<DueMonitor[]> {
  const rows = await sql<Array<{ id: string; account_id: string; plan: Plan; url: string }>>`
    WITH ranked AS (
      SELECT m.id, m.next_run_at, row_number() OVER (PARTITION BY m.account_id ORDER BY m.next_run_at, m.id) AS turn
      FROM monitors m JOIN accounts a ON a.id = m.account_id
      WHERE m.enabled AND m.next_run_at <= now() AND a.plan <> 'free'
    ), due AS (
      SELECT m.id FROM monitors m JOIN ranked r ON r.id = m.id
      WHERE m.enabled AND m.next_run_at <= now()
      ORDER BY r.turn, r.next_run_at, r.id
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

/** Records a run that could not start a scan (the target was refused before any scan existed). */
export async function recordFailedStart(
  sql: Sql,
  monitorId: string,
  error: { code: string; message: string },
  alert: boolean,
): Promise<void> {
  await sql`
    WITH run AS (
      INSERT INTO monitor_runs (id, monitor_id, status, error, alert, settled_at)
      VALUES (${newId('mrn')}, ${monitorId}, 'failed', ${sql.json(error)}, ${alert}, now())
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
 * What settling a run is decided from: its monitor, its scan as it ended (null: gone) and, for a completed
 * scan, the monitor's previous completed scan of the same page and its earlier runs of that page with
 * regressions still open.
 */
export interface RunFacts {
  monitorId: string
  notifyOn: NotifyOn
  scan: { id: string; status: 'completed' | 'failed'; report: unknown; error: { code: string; message: string } | null } | null
  previous: { scanId: string; report: unknown } | null
  open: Array<{ id: string; regressions: Regression[] }>
}

/** How a run settles (api/monitors/runner.ts decides it): failed, or compared with the previous scan. */
export type RunSettlement =
  | { status: 'failed'; error: { code: string; message: string }; alert: boolean }
  | {
      status: 'completed'
      score: number
      previousScanId: string | null
      previousScore: number | null
      regressions: Regression[]
      improvements: ChangeItem[]
      alert: boolean
      /** Earlier runs whose regressions changed (some resolved by this scan): their items and how many stay open. */
      resolved: Array<{ id: string; items: Regression[]; open: number }>
    }

/**
 * Settles a pending run whose scan has finished as `decide` says, given what it reads, and records that in
 * one transaction under the run's row lock (and the locks of the earlier runs it may resolve). Null when
 * there is nothing to do: already settled (by a concurrent run) or the scan has not finished.
 */
export async function settleRun(sql: Sql, runId: string, decide: (facts: RunFacts) => RunSettlement): Promise<SettledRun | null> {
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
    const completed = r.scan_id !== null && r.scan_status === 'completed'
    // Earlier runs only, by creation: the subquery keeps the timestamps' microseconds, which a Date would cut.
    const before = () => tx`(SELECT created_at FROM monitor_runs WHERE id = ${runId})`
    const [prev] = completed
      ? await tx<Array<{ scan_id: string; report: unknown }>>`
          SELECT s.id AS scan_id, s.report FROM monitor_runs p JOIN scans s ON s.id = p.scan_id
          WHERE p.monitor_id = ${r.monitor_id} AND p.status = 'completed' AND s.url = ${r.scan_url} AND p.created_at < ${before()}
          ORDER BY p.created_at DESC, p.id DESC LIMIT 1`
      : []
    // Only a scan of the same page resolves a regression (a monitor moved to another URL starts afresh).
    const open = completed
      ? await tx<Array<{ id: string; regressions: Regression[] }>>`
          SELECT p.id, p.regressions FROM monitor_runs p JOIN scans s ON s.id = p.scan_id
          WHERE p.monitor_id = ${r.monitor_id} AND p.open_regressions > 0 AND p.created_at < ${before()} AND s.url = ${r.scan_url}
          ORDER BY p.created_at, p.id
          FOR UPDATE OF p`
      : []
    const s = decide({
      monitorId: r.monitor_id,
      notifyOn: r.notify_on,
      scan: r.scan_id ? { id: r.scan_id, status: r.scan_status as 'completed' | 'failed', report: r.report, error: r.scan_error } : null,
      previous: prev ? { scanId: prev.scan_id, report: prev.report } : null,
      open: [...open],
    })
    if (s.status === 'failed') {
      await tx`
        UPDATE monitor_runs SET status = 'failed', error = ${tx.json(s.error)}, alert = ${s.alert}, settled_at = now() WHERE id = ${runId}`
      return { id: runId, monitorId: r.monitor_id, status: 'failed' as const, alert: s.alert, regressions: 0 }
    }
    for (const o of s.resolved) {
      await tx`UPDATE monitor_runs SET regressions = ${tx.json(o.items as never)}, open_regressions = ${o.open} WHERE id = ${o.id}`
    }
    await tx`
      UPDATE monitor_runs SET status = 'completed', score = ${s.score}, previous_scan_id = ${s.previousScanId},
        previous_score = ${s.previousScore}, regressions = ${tx.json(s.regressions as never)},
        improvements = ${tx.json(s.improvements as never)}, open_regressions = ${s.regressions.length}, alert = ${s.alert},
        settled_at = now()
      WHERE id = ${runId}`
    return { id: runId, monitorId: r.monitor_id, status: 'completed' as const, alert: s.alert, regressions: s.regressions.length }
  }) as Promise<SettledRun | null>
}
