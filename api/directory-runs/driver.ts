// The driver of directory runs: takes 'directory' jobs in an api process and runs each through the one job
// skeleton (shared/jobs/job.ts) under a lease on the run's row (shared/db/lease.ts). One pass a tick: settle
// the items whose scan or audit has ended, start what fits within the run's and the account's limits, renew
// the lease. A run ends when every item has settled or its time is up; on shutdown it is handed back, and the
// next driver carries on from the items' recorded state, so nothing is started or charged twice.
import { hostname } from 'node:os'
import type { Config } from '../../shared/config.ts'
import { getAccount, type Principal } from '../../shared/db/accounts.ts'
import { readAuditRow } from '../../shared/db/audit-results.ts'
import {
  claimDirectoryRun,
  type DirectoryRunItem,
  type DirectoryRunRow,
  failDirectoryRun,
  finishDirectoryRun,
  getDirectoryRunById,
  type ItemOutcome,
  moveDirectoryRunItem,
  releaseDirectoryRun,
  renewDirectoryRunLease,
} from '../../shared/db/directory-runs.ts'
import type { Database } from '../../shared/db/index.ts'
import { getScanById } from '../../shared/db/scans.ts'
import { errorMessage, isAppError } from '../../shared/errors.ts'
import type { Delivery, Infra } from '../../shared/infra/types.ts'
import { runJob } from '../../shared/jobs/job.ts'
import { sleep } from '../../shared/lib/async.ts'
import { newId } from '../../shared/lib/ids.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { AuditRequestOptions, AuditService } from '../audits/service.ts'
import type { ScanService } from '../scans/service.ts'
import { DIRECTORY_LIMITS } from './limits.ts'

type ItemChange = Parameters<typeof moveDirectoryRunItem>[4]

export interface DriverDeps {
  config: Pick<Config, 'SCAN_TIMEOUT_MS' | 'AUDIT_MAX_DURATION_S'>
  db: Pick<Database, 'sql'>
  infra: Pick<Infra, 'queue'>
  log: Logger
  audits: Pick<AuditService, 'start' | 'summary'>
  scans: Pick<ScanService, 'start'>
}

/** Times a run may be taken up by a driver before it is failed (a run that keeps killing its drivers). */
const MAX_DRIVES = 20

/** Passes in a row that may fail (the database or queue unreachable) before the run is handed back. */
const MAX_FAILED_PASSES = 30

/** A run this driver holds the lease of, and the account it acts for. */
interface HeldRun {
  run: DirectoryRunRow
  principal: Principal
}

const settled = (i: DirectoryRunItem) => i.status === 'done' || i.status === 'failed'

export class DirectoryRunDriver {
  constructor(private deps: DriverDeps) {}

  /** Takes 'directory' jobs until `signal` aborts; resolves when the runs in hand are handed back or done. */
  start(signal: AbortSignal): Promise<void> {
    const consumer = `${hostname()}-${process.pid}-dir-${newId('w').slice(2, 8)}`
    return this.deps.infra.queue.consume('directory', (d) => this.drive(d, consumer, signal), {
      consumer,
      concurrency: DIRECTORY_LIMITS.drivenPerProcess,
      signal,
    })
  }

  /** Drives one run to its end, or until shutdown (then hands it back). */
  drive(d: Delivery, worker: string, signal: AbortSignal): Promise<void> {
    const { sql } = this.deps.db
    const log = this.deps.log.child({ runId: d.job.ref, worker })
    return runJob<DirectoryRunRow, HeldRun>(
      d,
      {
        name: 'directory run',
        load: (ref) => getDirectoryRunById(sql, ref),
        isFinished: (run) => run.status === 'completed' || run.status === 'failed',
        claim: (run) => this.claim(d, run, worker),
        run: (held) => this.passes(d, held, worker, signal, log),
        failOurs: (ref, message) => failDirectoryRun(sql, ref, { code: 'directory_run_failed', message }).then(() => {}),
        failTarget: (ref, e) => failDirectoryRun(sql, ref, { code: e.code, message: e.message }).then(() => {}),
        beforeRetry: (ref) =>
          releaseDirectoryRun(sql, ref, worker).then(
            () => {},
            () => {},
          ),
      },
      { maxDeliveries: MAX_DRIVES, log },
    )
  }

  /** Takes the run's lease, or acks the delivery: another driver holds it, its account is gone, or it was interrupted too often. */
  private async claim(d: Delivery, found: DirectoryRunRow, worker: string): Promise<HeldRun | null> {
    const { sql } = this.deps.db
    const run = await claimDirectoryRun(sql, found.id, worker, DIRECTORY_LIMITS.leaseMs)
    // Another driver holds it: its lease says so. Done here; if that driver dies, recovery dispatches the run again.
    if (!run) {
      await d.ack()
      return null
    }
    const account = await getAccount(sql, run.accountId)
    const refused = !account
      ? { code: 'not_found', message: 'The account no longer exists' }
      : run.attempts > MAX_DRIVES
        ? { code: 'directory_run_failed', message: `Interrupted ${MAX_DRIVES} times; its items keep what they reached.` }
        : null
    if (!account || refused) {
      await finishDirectoryRun(sql, run.id, worker, 'failed', refused)
      await d.ack()
      return null
    }
    return { run, principal: { account, credentialId: run.credentialId, kind: 'api_key' } }
  }

  /**
   * A pass a tick until every item has settled (the run ends), the lease is lost (its new holder carries on),
   * shutdown or too many failed passes in a row (handed back), or the passes run out (handed back, so the
   * next delivery ends it). Bounded: one pass per tick until the deadline and a pass more to settle what is
   * left; at least one, so a run found past its deadline is settled (its open items fail with timeout).
   */
  private async passes(d: Delivery, held: HeldRun, worker: string, signal: AbortSignal, log: Logger): Promise<void> {
    const { run } = held
    const deadline = runDeadline(run, this.deps.config)
    const tick = DIRECTORY_LIMITS.tickMs[run.mode]
    log.info('directory run driving', { mode: run.mode, items: run.items.length, attempt: run.attempts })
    const maxPasses = Math.max(1, Math.ceil((deadline - Date.now()) / tick)) + 2
    let items = run.items
    let failures = 0
    for (let pass = 0; pass < maxPasses; pass++) {
      if (signal.aborted) return this.handBack(d, run.id, worker, false)
      try {
        items = await this.advance(held, items, Date.now() >= deadline)
        failures = 0
      } catch (e) {
        // PostgreSQL or the queue blinked: the items keep what they reached; try again next tick, for a while.
        log.warn('directory run pass failed', { error: errorMessage(e), failures: ++failures })
        if (failures >= MAX_FAILED_PASSES) return this.handBack(d, run.id, worker, true)
        // Keep the lease while the store blinks, so no second driver takes the run meanwhile.
        if ((await this.renew(run.id, worker).catch(() => null)) === false) return this.leaveToNewHolder(d, log)
        await sleep(tick, signal)
        continue
      }
      if (items.every(settled)) return this.end(d, run.id, worker, items, log)
      // Lost the lease (a long stall): whoever took the run over carries on.
      if (!(await this.renew(run.id, worker))) return this.leaveToNewHolder(d, log)
      await sleep(tick, signal)
    }
    // Past every pass: nothing more can settle here.
    return this.handBack(d, run.id, worker, true)
  }

  private renew(runId: string, worker: string) {
    return renewDirectoryRunLease(this.deps.db.sql, runId, worker, DIRECTORY_LIMITS.leaseMs)
  }

  private async handBack(d: Delivery, runId: string, worker: string, countAttempt: boolean) {
    await releaseDirectoryRun(this.deps.db.sql, runId, worker).catch(() => {})
    await d.release({ countAttempt })
  }

  private async leaveToNewHolder(d: Delivery, log: Logger) {
    log.warn('directory run lease lost; leaving it to its new holder')
    await d.ack()
  }

  /** Every item has settled: the run completes when one of them is done, and fails otherwise. */
  private async end(d: Delivery, runId: string, worker: string, items: DirectoryRunItem[], log: Logger) {
    const ok = items.some((i) => i.status === 'done')
    await finishDirectoryRun(
      this.deps.db.sql,
      runId,
      worker,
      ok ? 'completed' : 'failed',
      ok ? null : { code: 'directory_run_failed', message: 'No app in the run could be scanned; each item says why.' },
    )
    log.info('directory run ended', {
      status: ok ? 'completed' : 'failed',
      done: items.filter((i) => i.status === 'done').length,
      failed: items.filter((i) => i.status === 'failed').length,
    })
    await d.ack()
  }

  /** One pass: settles what finished, starts what fits, and returns the items as they now stand. */
  private async advance({ run, principal }: HeldRun, items: DirectoryRunItem[], late: boolean): Promise<DirectoryRunItem[]> {
    const { db } = this.deps
    const next = [...items]
    const set = async (i: number, change: ItemChange) => {
      if (await moveDirectoryRunItem(db.sql, run.id, next[i]!.position, next[i]!.status, change)) {
        next[i] = { ...next[i]!, ...change, error: change.error ?? null, outcome: change.outcome ?? null } as DirectoryRunItem
      }
    }
    for (let i = 0; i < next.length; i++) {
      const item = next[i]!
      if (item.status !== 'dispatched') continue
      const settledAs = await this.outcomeOf(run, item)
      if (settledAs) await set(i, settledAs)
      else if (late)
        await set(i, { status: 'failed', error: { code: 'timeout', message: 'Still running when the run reached its time limit' } })
    }
    let inFlight = next.filter((x) => x.status === 'dispatched').length
    for (let i = 0; i < next.length; i++) {
      const item = next[i]!
      if (item.status !== 'pending') continue
      if (late) {
        await set(i, { status: 'failed', error: { code: 'timeout', message: 'Not started before the run reached its time limit' } })
        continue
      }
      if (inFlight >= DIRECTORY_LIMITS.inFlightPerRun[run.mode]) break
      const started = await this.dispatch(run, principal, item)
      if (started === 'wait') break
      // An audit's item is recorded by dispatch() itself (before the audit starts); a scan's is recorded here.
      if (run.mode === 'audit') next[i] = { ...item, ...started, error: started.error ?? null, outcome: null } as DirectoryRunItem
      else await set(i, started)
      if (started.status === 'dispatched') inFlight++
    }
    return next
  }

  /** Starts one item: its scan or audit id, a failure that is the item's (blocked, unreachable...), or 'wait' for a free slot. */
  private async dispatch(run: DirectoryRunRow, principal: Principal, item: DirectoryRunItem): Promise<ItemChange | 'wait'> {
    const { db } = this.deps
    if (run.mode === 'audit') {
      // The audit's id is recorded on the item before the audit is started and charged: a driver that dies
      // in between leaves an item whose audit never existed (it fails), never one that is charged twice.
      const auditId = newId('aud')
      if (!(await moveDirectoryRunItem(db.sql, run.id, item.position, 'pending', { status: 'dispatched', auditId }))) return 'wait'
      try {
        await this.deps.audits.start(principal, item.url, run.options as AuditRequestOptions, undefined, auditId)
        return { status: 'dispatched', auditId }
      } catch (e) {
        if (!isAppError(e)) throw e
        if (e.code === 'rate_limited' || e.code === 'scanner_unavailable') {
          await moveDirectoryRunItem(db.sql, run.id, item.position, 'dispatched', { status: 'pending' })
          return 'wait'
        }
        await moveDirectoryRunItem(db.sql, run.id, item.position, 'dispatched', {
          status: 'failed',
          error: { code: e.code, message: e.message },
        })
        return { status: 'failed', error: { code: e.code, message: e.message } }
      }
    }
    try {
      // A scan nobody waits on: when the queue is unreachable it stays queued and recovery dispatches it.
      const scanId = await this.deps.scans.start(principal, item.url, { queueDown: 'recover' })
      return { status: 'dispatched', scanId }
    } catch (e) {
      if (!isAppError(e)) throw e
      // The account's scans in flight are at the plan's cap (its own scan_app calls count too): wait for one.
      if (e.code === 'rate_limited' || e.code === 'scanner_unavailable') return 'wait'
      return { status: 'failed', error: { code: e.code, message: e.message } }
    }
  }

  /** How a dispatched item settled, or null while its scan or audit still runs. */
  private async outcomeOf(run: DirectoryRunRow, item: DirectoryRunItem): Promise<ItemChange | null> {
    const { sql } = this.deps.db
    if (item.scanId) {
      const scan = await getScanById(sql, item.scanId)
      if (!scan) return { status: 'failed', error: { code: 'not_found', message: 'The scan was deleted' } }
      if (scan.status === 'failed') return { status: 'failed', error: scan.error ?? { code: 'scan_failed', message: 'The scan failed' } }
      if (scan.status !== 'completed') return null
      const report = (scan.report ?? {}) as { score?: number; grade?: string; advice?: Array<Record<string, unknown>> }
      return { status: 'done', outcome: outcome(report.score, report.grade, report.advice ?? []) }
    }
    if (item.auditId) {
      // Its state only: the result (megabytes for a large audit) is never read here, its stored summary is.
      const audit = await readAuditRow(sql, run.accountId, item.auditId)
      // Its id is recorded before it starts: none means its driver stopped in between (nothing was charged).
      if (!audit)
        return { status: 'failed', error: { code: 'audit_failed', message: 'The audit was not started: its run was interrupted first' } }
      if (audit.status === 'failed' || audit.status === 'cancelled')
        return { status: 'failed', error: audit.error ?? { code: 'audit_failed', message: `The audit was ${audit.status}` } }
      if (audit.status !== 'completed') return null
      const summary = await this.deps.audits.summary(run.accountId, item.auditId, DIRECTORY_LIMITS.worstPerItem)
      const head = (summary?.head ?? {}) as { score?: number; grade?: string }
      return { status: 'done', outcome: outcome(head.score, head.grade, summary?.topFindings ?? []) }
    }
    return { status: 'failed', error: { code: 'internal', message: 'Dispatched without a scan or audit' } }
  }
}

function outcome(score: unknown, grade: unknown, worst: Array<Record<string, unknown>>): ItemOutcome {
  return {
    score: typeof score === 'number' ? score : null,
    grade: typeof grade === 'string' ? grade : null,
    worst: worst.slice(0, DIRECTORY_LIMITS.worstPerItem).map((f) => ({
      checkId: String(f.checkId ?? ''),
      severity: String(f.severity ?? ''),
      title: String(f.title ?? '').slice(0, 120),
    })),
  }
}

/**
 * When a run stops waiting: long enough for every item to run one after another at the run's parallelism,
 * each taking its longest (a scan's timeout; an audit's duration cap and its queueing), counted from creation.
 */
export function runDeadline(
  run: Pick<DirectoryRunRow, 'mode' | 'items' | 'options' | 'createdAt'>,
  config: Pick<Config, 'SCAN_TIMEOUT_MS' | 'AUDIT_MAX_DURATION_S'>,
) {
  const rounds = Math.ceil(run.items.length / DIRECTORY_LIMITS.inFlightPerRun[run.mode])
  const perItemMs =
    run.mode === 'scan'
      ? config.SCAN_TIMEOUT_MS + 30_000
      : (Number(run.options.maxDurationSeconds) || config.AUDIT_MAX_DURATION_S) * 1000 + 5 * 60_000
  return run.createdAt.getTime() + rounds * perItemMs + 5 * 60_000
}
