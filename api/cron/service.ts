// The periodic jobs behind /api/cron/*, on plain values: a scheduler calls the routes in
// production; the embedded default, which has none, runs them on a timer (startCronSchedule).
//
// Every job is idempotent: its statements change only rows still in the state they look for, and a refund
// carries its idempotency key. On top of that one run of a job at a time holds a lease in the key-value
// store (Redis in production, so across replicas): a second call while it runs answers `skipped` at once
// instead of dispatching the same lost jobs twice. Either way two calls together do what one does.
import { randomBytes } from 'node:crypto'
import { DeadlineExceeded, within, withDeadline } from '../../shared/lib/async.ts'
import type { Config } from '../../shared/config.ts'
import type { Database } from '../../shared/db/index.ts'
import { expireGracePeriods } from '../../shared/db/billing.ts'
import { expireRows } from '../../shared/db/expiry.ts'
import type { Infra } from '../../shared/infra/types.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { recoverAudits, recoverDirectoryRuns, recoverScans, recoveryOptions } from '../../shared/jobs/recovery.ts'
import type { MonitorService } from '../monitors/service.ts'
import { errorMessage } from '../../shared/errors.ts'

export const CRON_JOBS = ['expire', 'recover', 'monitors'] as const
export type CronJobName = (typeof CRON_JOBS)[number]
export const isCronJob = (s: string): s is CronJobName => (CRON_JOBS as readonly string[]).includes(s)

export type CronResult = { job: CronJobName } & Record<string, unknown>

/**
 * A run that overruns this is answered as timed out, before the server's 120 s idle timeout would cut the
 * request; its lease is left to lapse, since the run may still be working.
 */
export const JOB_DEADLINE_MS = 90_000
/** Longer than any run may take, so a lease outlives its run unless the process died holding it. */
const LEASE_TTL_S = 600
const STORE_DEADLINE_MS = 5_000
/**
 * The embedded default's timer: every five minutes, the first five minutes after start (the crawler has
 * already recovered at start, and what expires can wait that long).
 */
export const SCHEDULE_EVERY_MS = 5 * 60_000

export interface CronDeps {
  config: Pick<Config, 'RECOVERY_GRACE_S' | 'AUDIT_MAX_DURATION_S'>
  db: Pick<Database, 'sql'>
  infra: Pick<Infra, 'queue' | 'pubsub' | 'kv'>
  log: Logger
  /** Runs the due monitors (api/monitors/runner.ts): bounded in monitors and well within JOB_DEADLINE_MS. */
  monitors: Pick<MonitorService, 'runDue'>
}

/** Why a job did not finish: the route answers each with its own status. */
export class CronJobError extends Error {
  constructor(
    readonly kind: 'timeout' | 'failed',
    message: string,
  ) {
    super(message)
  }
}

export class CronService {
  constructor(private readonly deps: CronDeps) {}

  /** Runs a job unless another run of it holds the lease. Throws CronJobError when it cannot finish. */
  async run(job: CronJobName): Promise<CronResult> {
    const { kv } = this.deps.infra
    const lease = `cron:running:${job}`
    let claimed: boolean
    try {
      claimed = await withDeadline(kv.claim(lease, randomBytes(8).toString('hex'), LEASE_TTL_S), STORE_DEADLINE_MS, 'cron lease')
    } catch (e) {
      throw new CronJobError('failed', `the key-value store did not answer: ${errorMessage(e)}`)
    }
    if (!claimed) return { job, skipped: true, reason: 'Another run of this job is in progress; it does the work.' }
    const started = Date.now()
    const running = this.execute(job)
    try {
      const result = await withDeadline(running, JOB_DEADLINE_MS, `cron job ${job}`)
      await within(kv.del(lease), STORE_DEADLINE_MS, false)
      this.deps.log.info('cron job done', { ...result, ms: Date.now() - started })
      return result
    } catch (e) {
      if (e instanceof DeadlineExceeded) {
        // The run goes on in the background and keeps the lease until it ends, then frees it for the next.
        running.then(
          () => kv.del(lease).catch(() => false),
          () => kv.del(lease).catch(() => false),
        )
        throw new CronJobError('timeout', e.message)
      }
      await within(kv.del(lease), STORE_DEADLINE_MS, false)
      throw new CronJobError('failed', errorMessage(e))
    }
  }

  private async execute(job: CronJobName): Promise<CronResult> {
    const { db, infra, log, config } = this.deps
    switch (job) {
      case 'expire':
        // Viewer tokens, MCP sessions, OAuth consent requests and sign-in state live in the key-value
        // store with a time to live: they expire there without this job.
        // A paid plan whose grace period after a failed renewal ran out goes back to free (docs/billing.md).
        return { job, ...(await expireRows(db.sql)), gracePeriodsEnded: (await expireGracePeriods(db.sql, new Date())).length }
      case 'recover': {
        const opts = recoveryOptions(config)
        const scans = await recoverScans(db.sql, infra.queue, log, opts.scans)
        const audits = await recoverAudits(db.sql, infra, log, opts.audits)
        const runs = await recoverDirectoryRuns(db.sql, infra.queue, log, opts.scans.graceSeconds)
        return {
          job,
          scansFailed: scans.failed,
          scansRedispatched: scans.redispatched,
          // Failed as ours, so each was refunded (once: the refund's idempotency key).
          auditsFailed: audits.failed,
          auditsRedispatched: audits.redispatched,
          directoryRunsRedispatched: runs.redispatched,
        }
      }
      case 'monitors':
        // Regressions are recorded in monitor_runs, never sent anywhere (docs/monitors.md).
        return { job, ...(await this.deps.monitors.runDue()) }
    }
  }
}

/**
 * Runs every job in turn on an unref'd timer until stopped; runs never overlap in this process. Stopping
 * waits a few seconds at most for a run in flight: shutdown has its own deadline, and the run's leases lapse.
 */
export function startCronSchedule(deps: CronDeps, opts: { everyMs?: number; firstAfterMs?: number } = {}) {
  const service = new CronService(deps)
  const everyMs = opts.everyMs ?? SCHEDULE_EVERY_MS
  let stopped = false
  let inflight: Promise<void> = Promise.resolve()
  let timer: ReturnType<typeof setTimeout> | undefined
  const runAll = async () => {
    for (const job of CRON_JOBS) {
      if (stopped) return
      await service.run(job).catch((e) => deps.log.warn('scheduled cron job failed', { job, error: errorMessage(e) }))
    }
  }
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      inflight = runAll().finally(() => {
        if (!stopped) schedule(everyMs)
      })
    }, ms)
    timer.unref?.()
  }
  schedule(opts.firstAfterMs ?? everyMs)
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await within(inflight, STORE_DEADLINE_MS, undefined)
    },
  }
}
