// The /api/cron/monitors job. One run, bounded in monitors and in time:
//   1. settle the runs of earlier calls whose scans have finished since (compare, record regressions);
//   2. claim the due monitors, each moved to its next slot in the same statement (claimDueMonitors);
//   3. start a scan for each through ScanService.start, as scan_app does: the target checked first, the
//      account's cap of scans in flight respected, the scan row written, its id handed to the queue;
//   4. wait for those scans, settling each as it finishes, until the run's budget is spent. What is still
//      running then is settled by a later run, so a slow scanner delays a comparison but loses none.
// Regressions are recorded in monitor_runs and never sent anywhere (no outbound events).
import { mapLimit, sleep } from '../../shared/lib/async.ts'
import type { Config } from '../../shared/config.ts'
import type { Database } from '../../shared/db/index.ts'
import {
  claimDueMonitors,
  type DueMonitor,
  deferMonitor,
  finishedRuns,
  recordFailedStart,
  type RunFacts,
  type RunSettlement,
  settleRun,
  startRun,
} from '../../shared/db/monitor-runs.ts'
import { AppError, type ErrorCode, ERROR_CODES, errorMessage, isAppError, isTargetFault } from '../../shared/errors.ts'
import { asComparable, diffReports, type Regression, resolveRegressions } from '../../shared/report/monitor-diff.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { ScanService } from '../scans/service.ts'

export interface MonitorDeps {
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts'>
  db: Pick<Database, 'sql'>
  log: Logger
  scans: Pick<ScanService, 'start'>
}

export interface MonitorLimits {
  /** Monitors claimed per run; the others stay due and the next run takes them. */
  perRun: number
  /** Scans being started at once (each resolves its target first). */
  startConcurrency: number
  /** Past this, claimed monitors not yet started are given back, due at once, for the next run. */
  startBudgetMs: number
  /** The run returns by then, whatever is still running: under the cron route's 90 s deadline. */
  runBudgetMs: number
  /** Runs of earlier calls settled per run. */
  settleBatch: number
  /** A monitor whose account has its cap of scans in flight is tried again within this. */
  deferSeconds: number
  /** How often the wait reads which scans have finished. */
  pollMs: number
}

export const MONITOR_LIMITS: MonitorLimits = {
  perRun: 50,
  startConcurrency: 8,
  startBudgetMs: 30_000,
  runBudgetMs: 70_000,
  settleBatch: 200,
  deferSeconds: 600,
  pollMs: 1_000,
}

export interface MonitorRunResult {
  /** Monitors claimed by this run. */
  due: number
  started: number
  /** The target was refused before any scan (blocked, or its name did not resolve): recorded as a failed run. */
  refused: number
  /** Not started now (the account's scans in flight were at its cap, or the start budget ran out): due again soon. */
  deferred: number
  /** Failed on our side while starting; logged. */
  errors: number
  /** Runs compared and closed by this call, of this call's scans or earlier ones. */
  settled: number
  /** Of the settled runs, those recorded as alerts under their monitor's notifyOn. */
  alerts: number
  /** This call's scans still running when it returned: a later run settles them. */
  pending: number
}

/** A failure the target caused (it does not resolve, or resolves to a blocked address) is worth an alert; ours is not. */
const alertsOnFailure = (code: string) => code in ERROR_CODES && isTargetFault(new AppError(code as ErrorCode))

/**
 * How a run settles: failed when its scan failed, is gone or has no report (an alert when the target caused
 * it); else compared with the monitor's previous completed scan of the page: what got worse and better,
 * which earlier regressions this scan resolves, and whether that is worth an alert under notifyOn.
 */
export function settlementOf(f: RunFacts, at: string): RunSettlement {
  const current = f.scan?.status === 'completed' ? asComparable(f.scan.report) : null
  if (!current || !f.scan) {
    const error = f.scan?.error ?? { code: 'scan_failed', message: f.scan ? 'The scan has no report.' : 'The scan is gone.' }
    return { status: 'failed', error, alert: alertsOnFailure(error.code) }
  }
  const previous = f.previous ? asComparable(f.previous.report) : null
  const diff = previous ? diffReports(previous, current) : { regressions: [], improvements: [] }
  const scanId = f.scan.id
  const resolved = f.open.flatMap((o) => {
    const r = resolveRegressions(o.regressions, current, { scanId, at })
    return r.changed ? [{ id: o.id, items: r.items, open: r.open }] : []
  })
  const regressions: Regression[] = diff.regressions.map((i) => ({ ...i, resolvedAt: null, resolvedByScanId: null }))
  return {
    status: 'completed',
    score: current.score,
    previousScanId: f.previous?.scanId ?? null,
    previousScore: previous?.score ?? null,
    regressions,
    improvements: diff.improvements,
    alert: f.notifyOn === 'any' ? regressions.length + diff.improvements.length > 0 : regressions.length > 0,
    resolved,
  }
}

type Started = { kind: 'started'; runId: string } | { kind: 'refused' } | { kind: 'deferred' }

async function startMonitorScan(deps: MonitorDeps, m: DueMonitor, limits: MonitorLimits): Promise<Started> {
  const { db, scans } = deps
  let scanId: string
  try {
    // Unlike scan_app, nobody waits on this scan: when the queue is unreachable it stays queued and recovery
    // dispatches it, rather than failing a run the owner never asked to have failed.
    scanId = await scans.start({ account: { id: m.accountId, plan: m.plan } }, m.url, { queueDown: 'recover' })
  } catch (e) {
    if (!isAppError(e)) throw e
    // The account's scans in flight are at its plan's cap: tried again soon.
    if (e.code === 'rate_limited') {
      await deferMonitor(db.sql, m.id, limits.deferSeconds)
      return { kind: 'deferred' }
    }
    // The target was refused (blocked, or its name did not resolve) before any scan existed.
    await recordFailedStart(db.sql, m.id, { code: e.code, message: e.message }, isTargetFault(e))
    return { kind: 'refused' }
  }
  return { kind: 'started', runId: await startRun(db.sql, m.id, scanId) }
}

export async function runDueMonitors(deps: MonitorDeps, limits: MonitorLimits = MONITOR_LIMITS): Promise<MonitorRunResult> {
  const t0 = Date.now()
  const { sql } = deps.db
  const log = deps.log.child({ component: 'monitors' })
  const result: MonitorRunResult = { due: 0, started: 0, refused: 0, deferred: 0, errors: 0, settled: 0, alerts: 0, pending: 0 }
  const settle = async (ids: readonly string[]) => {
    for (const id of ids) {
      const s = await settleRun(sql, id, (facts) => settlementOf(facts, new Date().toISOString()))
      if (!s) continue
      result.settled++
      if (s.alert) result.alerts++
      if (s.regressions > 0) log.info('monitor regression recorded', { monitorId: s.monitorId, runId: s.id, regressions: s.regressions })
    }
  }

  await settle(await finishedRuns(sql, { limit: limits.settleBatch }))

  const due = await claimDueMonitors(sql, limits.perRun)
  result.due = due.length
  const waiting: string[] = []
  await mapLimit(due, limits.startConcurrency, async (m) => {
    try {
      if (Date.now() - t0 > limits.startBudgetMs) {
        await deferMonitor(sql, m.id, 0)
        result.deferred++
        return
      }
      const started = await startMonitorScan(deps, m, limits)
      if (started.kind === 'started') {
        result.started++
        waiting.push(started.runId)
      } else result[started.kind]++
    } catch (e) {
      // Its slot has moved on already; the next slot runs it. Logged, since it is a fault on our side.
      result.errors++
      log.error('monitor scan not started', { monitorId: m.id, error: errorMessage(e) })
    }
  })

  let left = waiting
  while (left.length > 0 && Date.now() - t0 < limits.runBudgetMs) {
    await sleep(Math.min(limits.pollMs, limits.runBudgetMs - (Date.now() - t0)))
    try {
      const done = await finishedRuns(sql, { ids: left, limit: left.length })
      await settle(done)
      left = left.filter((id) => !done.includes(id))
    } catch (e) {
      // The database went away (a shutdown, an outage): stop waiting; a later run settles what is left.
      log.warn('stopped waiting for monitor scans', { error: errorMessage(e), pending: left.length })
      break
    }
  }
  result.pending = left.length
  return result
}
