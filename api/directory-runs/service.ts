// start_directory_run: a list of apps scanned or audited as one run. The call records the run and its items
// and puts the run on the queue (kind 'directory'); a driver in an api process (driver.ts, one per run at a
// time, under a lease on the run's row) starts the items a few at a time within the account's limits, reads
// each one's outcome when its scan or audit settles, and ends the run with a summary. A driver that dies is
// replaced: the queue delivers the run again (or recovery re-dispatches it) and the next driver carries on
// from the items' recorded state, so nothing is started or charged twice.
//
// States: queued -> running -> completed | failed. A run completes when every item has settled, some of
// them failed or not ("partial failures do not fail the run"); it fails only when no item succeeded.
import type { Config } from '../../shared/config.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import {
  type DirectoryRunItem,
  type DirectoryRunMode,
  type DirectoryRunRow,
  getDirectoryRun,
  insertDirectoryRun,
} from '../../shared/db/directory-runs.ts'
import type { Database } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { parseTargetUrl } from '../../shared/egress/guard.ts'
import { AppError, errorMessage } from '../../shared/errors.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { newId } from '../../shared/lib/ids.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { AuditRequestOptions, AuditService } from '../audits/service.ts'
import type { ScanService } from '../scans/service.ts'
import { DirectoryRunDriver } from './driver.ts'
import { DIRECTORY_LIMITS } from './limits.ts'

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
  audits: Pick<AuditService, 'start' | 'resolveOptions' | 'summary'>
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
    return new DirectoryRunDriver(this.deps).start(signal)
  }
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
