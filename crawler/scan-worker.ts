// The scan worker: takes scan jobs from the queue, gathers, judges, stores the report in Postgres and
// tells the waiting api over pub/sub. Errors are sorted by consequence:
//   the target's fault (blocked, unreachable) -> scan failed at once, no retry;
//   ours (browser crash, database hiccup)     -> retried on another delivery, failed after the limit.
import { hostname } from 'node:os'
import type { Config } from '../shared/config.ts'
import type { Database } from '../shared/db/index.ts'
import { completeScan, failScan, getScanById, markScanRunning } from '../shared/db/scans.ts'
import { policyFromConfig } from '../shared/egress/guard.ts'
import { isAppError } from '../shared/errors.ts'
import { newId } from '../shared/ids.ts'
import type { Logger } from '../shared/log.ts'
import type { Delivery, Infra } from '../shared/infra/types.ts'
import { platformSignals } from '../shared/platform.ts'
import { runChecks } from '../shared/checks/runner.ts'
import { buildReport } from '../shared/report.ts'
import { scanChannel, type ScanEvent } from '../shared/scan-events.ts'
import type { BrowserPool } from './browser.ts'
import { gather } from './gather.ts'

export const trustedSpki = (config: Config) => config.TRUSTED_CERT_SPKI.split(',').map((s) => s.trim()).filter(Boolean)

export interface WorkerDeps {
  config: Config
  db: Database
  infra: Infra
  log: Logger
  browser: BrowserPool
}

export interface RunningWorker {
  consumer: string
  /** Stops taking jobs and waits for the ones in flight. */
  stop(): Promise<void>
}

export function startScanWorker(deps: WorkerDeps): RunningWorker {
  const consumer = `${hostname()}-${process.pid}-${newId('w').slice(2, 10)}`
  const log = deps.log.child({ worker: consumer })
  const abort = new AbortController()
  const done = deps.infra.queue.consume('scan', (d) => handleScan(deps, d, consumer, log), {
    consumer,
    concurrency: deps.config.WORKER_CONCURRENCY,
    signal: abort.signal,
  })
  log.info('scan worker started', { concurrency: deps.config.WORKER_CONCURRENCY, queue: deps.infra.kind })
  return {
    consumer,
    async stop() {
      abort.abort()
      await done
    },
  }
}

export async function handleScan(deps: WorkerDeps, d: Delivery, consumer: string, parentLog: Logger): Promise<void> {
  const { db, infra, config } = deps
  const scanId = d.job.ref
  const log = parentLog.child({ scanId, delivery: d.deliveryCount })
  const publish = (e: ScanEvent) => infra.pubsub.publish(scanChannel(scanId), JSON.stringify(e)).catch(() => {})

  const scan = await getScanById(db.sql, scanId)
  if (!scan || scan.status === 'completed' || scan.status === 'failed') {
    await d.ack() // already finished, or deleted: a late duplicate
    return
  }
  if (d.deliveryCount > config.JOB_MAX_DELIVERIES) {
    await failScan(db.sql, scanId, { code: 'scan_failed', message: `Gave up after ${config.JOB_MAX_DELIVERIES} attempts` })
    await publish({ type: 'done', status: 'failed' })
    await d.ack()
    log.warn('scan failed for good after repeated attempts')
    return
  }
  if (!(await markScanRunning(db.sql, scanId, consumer))) {
    await d.ack()
    return
  }
  const started = performance.now()
  try {
    const { artifacts, timings } = await gather(scan.url, {
      policy: policyFromConfig(config),
      browser: deps.browser,
      navTimeoutMs: config.NAV_TIMEOUT_MS,
      probeTimeoutMs: config.PROBE_TIMEOUT_MS,
      trustedSpki: trustedSpki(config),
      progress: (p, message) => void publish({ type: 'progress', progress: p, total: 100, message }),
    })
    const tJudge = performance.now()
    const results = runChecks(artifacts)
    timings.checks = Math.round(performance.now() - tJudge)
    timings.total = Math.round(performance.now() - started)
    const report = buildReport(
      { id: scanId, url: scan.url, finalUrl: artifacts.target.finalUrl, createdAt: scan.createdAt.toISOString(), timings },
      results,
    )
    await completeScan(db.sql, scanId, report, platformSignals(artifacts.mainResponse.headers, artifacts.page?.html ?? artifacts.mainResponse.body))
    await publish({ type: 'progress', progress: 100, total: 100, message: `done: score ${report.score} (${report.grade})` })
    await publish({ type: 'done', status: 'completed' })
    await d.ack()
    log.info('scan completed', { score: report.score, ms: timings.total })
  } catch (e) {
    if (isAppError(e) && (e.code === 'target_blocked' || e.code === 'target_unreachable' || e.code === 'invalid_url')) {
      await failScan(db.sql, scanId, { code: e.code, message: e.message })
      await publish({ type: 'done', status: 'failed' })
      await d.ack()
      log.info('scan failed: target', { code: e.code })
      return
    }
    log.warn('scan attempt failed; handing it back', { error: (e as Error).message })
    if (d.deliveryCount >= config.JOB_MAX_DELIVERIES) {
      await failScan(db.sql, scanId, { code: 'scan_failed', message: `Scan failed after ${d.deliveryCount} attempts: ${(e as Error).message}` })
      await publish({ type: 'done', status: 'failed' })
      await d.ack()
    } else {
      await d.release({ countAttempt: true })
    }
  }
}
