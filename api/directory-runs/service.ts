// start_directory_run: a list of apps scanned or audited as one run. The call records the run and its items
// and puts the run on the queue (kind 'directory'); a driver in an api process (drive(), one per run at a
// time, under a lease on the run's row) starts the items a few at a time within the account's limits, reads
// each one's outcome when its scan or audit settles, and ends the run with a summary. A driver that dies is
// replaced: the queue delivers the run again (or recovery re-dispatches it) and the next driver carries on
// from the items' recorded state, so nothing is started or charged twice.
//
// States: queued -> running -> completed | failed. A run completes when every item has settled, some of
// them failed or not ("partial failures do not fail the run"); it fails only when no item succeeded.
import { hostname } from 'node:os'
import type { Config } from '../../shared/config.ts'
import { getAccount, type Principal } from '../../shared/db/accounts.ts'
import { readAuditRow, readAuditSummary } from '../../shared/db/audit-results.ts'
import {
  claimDirectoryRun,
  type DirectoryRunItem,
  type DirectoryRunMode,
  type DirectoryRunRow,
  finishDirectoryRun,
  getDirectoryRun,
  getDirectoryRunById,
  insertDirectoryRun,
  type ItemOutcome,
  releaseDirectoryRun,
  renewDirectoryRunLease,
  moveDirectoryRunItem,
} from '../../shared/db/directory-runs.ts'
import type { Database } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { getScanById } from '../../shared/db/scans.ts'
import { AppError, isAppError, errorMessage } from '../../shared/errors.ts'
import { newId } from '../../shared/lib/ids.ts'
import type { Delivery, Infra } from '../../shared/infra/types.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { AuditRequestOptions, AuditService } from '../audits/service.ts'
import type { ScanService } from '../scans/service.ts'
import { parseTargetUrl } from '../../shared/egress/guard.ts'

export const DIRECTORY_LIMITS = {
  /** Most URLs in one run, by mode: an audit run is capped by the hourly audit starts (AUDIT_STARTS). */
  maxUrls: { scan: 50, audit: 20 },
  /** Items of one run in flight at once, by mode. A scan also counts against the plan's scans in flight. */
  inFlightPerRun: { scan: 3, audit: 2 },
  /** Runs queued or running at once per account. */
  unfinishedPerAccount: 2,
  /** Runs one api process drives at once. */
  drivenPerProcess: 4,
  /** How often a driver looks at its items. */
  tickMs: { scan: 1_000, audit: 3_000 },
  /** The driver's lease on its run; renewed every tick. */
  leaseMs: 30_000,
  /** Worst findings kept per item for the summary table. */
  worstPerItem: 2,
} as const

type ItemChange = Parameters<typeof moveDirectoryRunItem>[4]

export interface StartDirectoryRunInput {
  urls?: string[]
  mode?: DirectoryRunMode
  options?: AuditRequestOptions
  runId?: string
}

interface Deps {
  config: Config
  db: Database
  infra: Infra
  log: Logger
  audits: Pick<AuditService, 'start' | 'resolveOptions'>
  scans: Pick<ScanService, 'start'>
}

export class DirectoryRunService {
  constructor(private deps: Deps) {}

  /** start_directory_run: with urls, starts a run; with runId, reads one. */
  async startOrRead(principal: Principal, input: StartDirectoryRunInput) {
    if ((input.urls === undefined) === (input.runId === undefined)) {
      throw new AppError('invalid_params', 'Pass urls to start a run, or runId to read one: exactly one of them.', {
        details: [{ path: input.urls === undefined ? '/urls' : '/runId', message: 'urls or runId' }],
      })
    }
    if (input.runId !== undefined) {
      if (input.mode !== undefined || input.options !== undefined) {
        throw new AppError('invalid_params', 'mode and options start a run; with runId, pass nothing else.', {
          details: [{ path: input.mode !== undefined ? '/mode' : '/options', message: 'Not with runId' }],
        })
      }
      return this.get(principal, input.runId)
    }
    return this.start(principal, input.urls!, input.mode ?? 'scan', input.options)
  }

  async start(principal: Principal, rawUrls: string[], mode: DirectoryRunMode, requested?: AuditRequestOptions) {
    const { db, infra, log } = this.deps
    if (mode === 'scan' && requested !== undefined) {
      throw new AppError('invalid_params', 'options (maxPages, maxDepth, maxDurationSeconds) apply to mode audit only.', {
        details: [{ path: '/options', message: 'Only with mode audit' }],
      })
    }
    // Each URL must be one a scan could take; whether it resolves and answers is each item's own outcome.
    const parsed = rawUrls.map((u, i) => {
      const p = parseTargetUrl(u.trim())
      if (!p.ok) {
        throw new AppError('invalid_url', `urls[${i}] (${JSON.stringify(u.slice(0, 200))}): ${p.message}. Nothing was started.`, {
          details: [{ path: `/urls/${i}`, message: p.message }],
        })
      }
      return p.url.href
    })
    // The same page twice is one item: the first keeps its place.
    const urls = [...new Set(parsed)]
    const cap = DIRECTORY_LIMITS.maxUrls[mode]
    if (urls.length > cap) {
      throw new AppError('invalid_params', `A ${mode} run takes at most ${cap} URLs (${urls.length} distinct given); split the list.`, {
        details: [{ path: '/urls', message: `At most ${cap} for mode ${mode}` }],
      })
    }
    const accountId = principal.account.id
    const options = mode === 'audit' ? this.deps.audits.resolveOptions(requested) : {}
    if (mode === 'audit') {
      // Each audit is charged as it starts; refuse a list the account cannot pay for whole, before any.
      const b = await getBalance(db.sql, accountId)
      const payable = Math.max(0, b.allowance - b.used) + b.credits
      if (payable < urls.length) {
        throw new AppError(
          'allowance_exhausted',
          `This run needs ${urls.length} audits; the account can pay for ${payable} now (${Math.max(0, b.allowance - b.used)} left of ` +
            `the weekly allowance, ${b.credits} credits). Shorten the list, add credits, or wait for ${b.resetsAt}. Nothing was started.`,
          { needed: urls.length, payable, allowance: b.allowance, used: b.used, credits: b.credits, resetsAt: b.resetsAt },
        )
      }
    }
    const run = await insertDirectoryRun(
      db.sql,
      { id: newId('dir'), accountId, credentialId: principal.credentialId, mode, options, urls },
      DIRECTORY_LIMITS.unfinishedPerAccount,
    )
    if (!run) {
      throw new AppError(
        'rate_limited',
        `This account already has ${DIRECTORY_LIMITS.unfinishedPerAccount} directory runs in progress; retry when one has finished.`,
        { retryAfter: 60, limit: DIRECTORY_LIMITS.unfinishedPerAccount },
      )
    }
    try {
      await infra.queue.enqueue({ kind: 'directory', ref: run.id })
    } catch (e) {
      // Recorded and queued in Postgres: recovery dispatches it when the queue is back.
      log.warn('directory run not queued; recovery dispatches it', { runId: run.id, error: errorMessage(e) })
    }
    log.info('directory run queued', { runId: run.id, mode, urls: urls.length })
    return runView(run, this.deps.config.baseUrl)
  }

  async get(principal: Principal, runId: string) {
    const run = await getDirectoryRun(this.deps.db.sql, principal.account.id, runId)
    if (!run) throw new AppError('not_found', `No directory run ${runId} in this account`)
    return runView(run, this.deps.config.baseUrl)
  }

  /** For the dashboard route: the run of this account, or null. */
  async read(accountId: string, runId: string) {
    const run = await getDirectoryRun(this.deps.db.sql, accountId, runId)
    return run ? runView(run, this.deps.config.baseUrl) : null
  }

  /** Takes 'directory' jobs until `signal` aborts; resolves when the runs in hand are handed back or done. */
  startDriver(signal: AbortSignal): Promise<void> {
    const consumer = `${hostname()}-${process.pid}-dir-${newId('w').slice(2, 8)}`
    return this.deps.infra.queue.consume('directory', (d) => this.drive(d, consumer, signal), {
      consumer,
      concurrency: DIRECTORY_LIMITS.drivenPerProcess,
      signal,
    })
  }

  /** Drives one run to its end, or until shutdown (then hands it back). */
  async drive(d: Delivery, worker: string, signal: AbortSignal): Promise<void> {
    const { db, log: parent } = this.deps
    const runId = d.job.ref
    const log = parent.child({ runId, worker })
    const existing = await getDirectoryRunById(db.sql, runId)
    if (!existing || existing.status === 'completed' || existing.status === 'failed') return d.ack()
    const run = await claimDirectoryRun(db.sql, runId, worker, DIRECTORY_LIMITS.leaseMs)
    // Another driver holds it: its lease says so. Done here; if that driver dies, recovery dispatches the run again.
    if (!run) return d.ack()
    const account = await getAccount(db.sql, run.accountId)
    if (!account) {
      await finishDirectoryRun(db.sql, runId, worker, 'failed', { code: 'not_found', message: 'The account no longer exists' })
      return d.ack()
    }
    if (run.attempts > MAX_DRIVES) {
      await finishDirectoryRun(db.sql, runId, worker, 'failed', {
        code: 'directory_run_failed',
        message: `Interrupted ${MAX_DRIVES} times; its items keep what they reached.`,
      })
      return d.ack()
    }
    const principal: Principal = { account, credentialId: run.credentialId, kind: 'api_key' }
    const deadline = runDeadline(run, this.deps.config)
    const tick = DIRECTORY_LIMITS.tickMs[run.mode]
    log.info('directory run driving', { mode: run.mode, items: run.items.length, attempt: run.attempts })
    // Bounded: one pass per tick until the deadline, and a pass more to settle what is left.
    // At least one pass, so a run found past its deadline is settled (its open items fail with timeout).
    const maxPasses = Math.max(1, Math.ceil((deadline - Date.now()) / tick)) + 2
    let items = run.items
    let failures = 0
    for (let pass = 0; pass < maxPasses; pass++) {
      if (signal.aborted) {
        await releaseDirectoryRun(db.sql, runId, worker).catch(() => {})
        return d.release({ countAttempt: false })
      }
      const late = Date.now() >= deadline
      try {
        items = await this.advance(run, principal, items, late)
        failures = 0
      } catch (e) {
        // PostgreSQL or the queue blinked: the items keep what they reached; try again next tick, for a while.
        log.warn('directory run pass failed', { error: errorMessage(e), failures: ++failures })
        if (failures >= MAX_FAILED_PASSES) {
          await releaseDirectoryRun(db.sql, runId, worker).catch(() => {})
          return d.release({ countAttempt: true })
        }
        // Keep the lease while the store blinks, so no second driver takes the run meanwhile.
        if ((await renewDirectoryRunLease(db.sql, runId, worker, DIRECTORY_LIMITS.leaseMs).catch(() => null)) === false) {
          log.warn('directory run lease lost; leaving it to its new holder')
          return d.ack()
        }
        await sleepUnless(tick, signal)
        continue
      }
      if (items.every(settled)) {
        const ok = items.some((i) => i.status === 'done')
        await finishDirectoryRun(
          db.sql,
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
        return d.ack()
      }
      if (!(await renewDirectoryRunLease(db.sql, runId, worker, DIRECTORY_LIMITS.leaseMs))) {
        // Lost the lease (a long stall): whoever took the run over carries on.
        log.warn('directory run lease lost; leaving it to its new holder')
        return d.ack()
      }
      await sleepUnless(tick, signal)
    }
    // Past every pass: nothing more can settle here. Hand it back so the next delivery ends it.
    await releaseDirectoryRun(db.sql, runId, worker).catch(() => {})
    return d.release({ countAttempt: true })
  }

  /** One pass: settles what finished, starts what fits, and returns the items as they now stand. */
  private async advance(run: DirectoryRunRow, principal: Principal, items: DirectoryRunItem[], late: boolean): Promise<DirectoryRunItem[]> {
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
      const summary = await readAuditSummary(sql, run.accountId, item.auditId, DIRECTORY_LIMITS.worstPerItem)
      const head = (summary?.head ?? {}) as { score?: number; grade?: string }
      return { status: 'done', outcome: outcome(head.score, head.grade, summary?.topFindings ?? []) }
    }
    return { status: 'failed', error: { code: 'internal', message: 'Dispatched without a scan or audit' } }
  }
}

/** Times a run may be taken up by a driver before it is failed (a run that keeps killing its drivers). */
const MAX_DRIVES = 20

/** Passes in a row that may fail (the database or queue unreachable) before the run is handed back. */
const MAX_FAILED_PASSES = 30

const settled = (i: DirectoryRunItem) => i.status === 'done' || i.status === 'failed'

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

function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

/** What start_directory_run and /api/directory-runs/{id} show: state, a summary, and one row per app. */
export function runView(run: DirectoryRunRow, baseUrl: string) {
  const count = (s: DirectoryRunItem['status']) => run.items.filter((i) => i.status === s).length
  const scores = run.items.map((i) => i.outcome?.score).filter((s): s is number => typeof s === 'number')
  const lowest = run.items.filter((i) => typeof i.outcome?.score === 'number').sort((a, b) => a.outcome!.score! - b.outcome!.score!)[0]
  const ended = run.status === 'completed' || run.status === 'failed'
  return {
    runId: run.id,
    status: run.status,
    mode: run.mode,
    ...(run.mode === 'audit' ? { options: run.options } : {}),
    watch: `${baseUrl}/api/directory-runs/${run.id}`,
    summary: {
      total: run.items.length,
      pending: count('pending'),
      running: count('dispatched'),
      done: count('done'),
      failed: count('failed'),
      averageScore: scores.length ? Math.round(scores.reduce((a, b) => a + b, 0) / scores.length) : null,
      lowest: lowest ? { url: lowest.url, score: lowest.outcome!.score, grade: lowest.outcome!.grade } : null,
    },
    items: run.items.map((i) => ({
      url: i.url,
      status: i.status,
      ...(i.scanId ? { scanId: i.scanId } : {}),
      ...(i.auditId ? { auditId: i.auditId } : {}),
      score: i.outcome?.score ?? null,
      grade: i.outcome?.grade ?? null,
      worst: (i.outcome?.worst ?? []).map((w) => ({ checkId: w.checkId, severity: w.severity })),
      ...(i.error ? { error: i.error } : {}),
    })),
    ...(run.error ? { error: run.error } : {}),
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    next: ended
      ? `Done. get_scan {scanId} or get_audit {auditId} reads an app's full result; get_fix_brief {scanId|auditId} says how to fix it.`
      : `Call start_directory_run {runId: "${run.id}"} again in ${run.mode === 'scan' ? 'a few seconds' : 'a minute'} to follow it.`,
  }
}
