// The scan worker: takes scan jobs from the queue, gathers, judges, stores the report in Postgres and
// tells the waiting api over pub/sub. Errors are sorted by consequence:
//   the target's fault (blocked, unreachable) -> scan failed at once, no retry;
//   ours (browser crash, database hiccup)     -> retried on another delivery, failed after the limit.
// The decisions themselves are shared/jobs/job.ts's, the same for audits and directory runs.
import { hostname } from 'node:os'
import type { Config } from '../shared/config.ts'
import type { Database } from '../shared/db/index.ts'
import { completeScan, failScan, getScanById, markScanRunning, type ScanRow } from '../shared/db/scans.ts'
import { policyFromConfig } from '../shared/egress/guard.ts'
import type { ErrorCode } from '../shared/errors.ts'
import { newId } from '../shared/lib/ids.ts'
import type { Logger } from '../shared/lib/log.ts'
import type { Delivery, Infra } from '../shared/infra/types.ts'
import { platformSignals } from '../shared/report/platform.ts'
import { BASELINE_PROBE } from '../shared/checks/probe-paths.ts'
import { runChecks } from '../shared/checks/runner.ts'
import { buildReport } from '../shared/report/scan-report.ts'
import { scanChannel, type ScanEvent } from '../shared/protocol/scan-events.ts'
import type { BrowserPool } from './browser.ts'
import { gather } from './gather/index.ts'
import { WarmPages } from './gather/warm-page.ts'
import { runJob } from '../shared/jobs/job.ts'

export const trustedSpki = (config: Config) =>
  config.TRUSTED_CERT_SPKI.split(',')
    .map((s) => s.trim())
    .filter(Boolean)

export interface WorkerDeps {
  config: Config
  db: Database
  infra: Infra
  log: Logger
  browser: BrowserPool
  /** Pages opened ahead of scans (made by startScanWorker). */
  warm?: WarmPages
}

export interface RunningWorker {
  consumer: string
  /** Stops taking jobs and waits for the ones in flight. */
  stop(): Promise<void>
}

export function startScanWorker(given: WorkerDeps): RunningWorker {
  const consumer = `${hostname()}-${process.pid}-${newId('w').slice(2, 10)}`
  const log = given.log.child({ worker: consumer })
  const abort = new AbortController()
  // The first scan's page opens now; each scan opens the next one's when it ends.
  const warm =
    given.warm ??
    new WarmPages(
      given.browser,
      policyFromConfig(given.config),
      given.config.WARM_SLOTS,
      given.config.WORKER_CONCURRENCY,
      given.config.SCAN_PAGES_KEPT,
    )
  warm.prepare()
  const deps = { ...given, warm }
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
      await warm.close()
    },
  }
}

export async function handleScan(deps: WorkerDeps, d: Delivery, consumer: string, parentLog: Logger): Promise<void> {
  const { db, infra, config } = deps
  const scanId = d.job.ref
  const log = parentLog.child({ scanId, delivery: d.deliveryCount })
  const publish = (e: ScanEvent) => infra.pubsub.publish(scanChannel(scanId), JSON.stringify(e)).catch(() => {})
  const fail = async (error: { code: ErrorCode; message: string }) => {
    await failScan(db.sql, scanId, error)
    await publish({ type: 'done', status: 'failed' })
  }

  await runJob(
    d,
    {
      name: 'scan',
      load: (ref) => getScanById(db.sql, ref),
      isFinished: (scan) => scan.status === 'completed' || scan.status === 'failed',
      async claim(scan) {
        if (await markScanRunning(db.sql, scanId, consumer)) return scan
        await d.ack()
        return null
      },
      run: (scan) => scanOnce(deps, scan, d, log, publish),
      failOurs: (_ref, message) => fail({ code: 'scan_failed', message }),
      failTarget: (_ref, e) => fail({ code: e.code, message: e.message }),
    },
    { maxDeliveries: config.JOB_MAX_DELIVERIES, log },
  )
}

/** One attempt: gather, judge, store the report, tell the waiting api, ack. */
async function scanOnce(deps: WorkerDeps, scan: ScanRow, d: Delivery, log: Logger, publish: (e: ScanEvent) => Promise<void>) {
  const { db, config } = deps
  const scanId = scan.id
  const started = performance.now()
  const { artifacts, timings, probes } = await gather(scan.url, {
    policy: policyFromConfig(config),
    browser: deps.browser,
    navTimeoutMs: config.NAV_TIMEOUT_MS,
    probeTimeoutMs: config.PROBE_TIMEOUT_MS,
    trustedSpki: trustedSpki(config),
    progress: (p, message) => void publish({ type: 'progress', progress: p, total: 100, message }),
    ...(deps.warm ? { warm: deps.warm, owner: scan.accountId } : {}),
  })
  const tJudge = performance.now()
  const results = runChecks(artifacts)
  timings.checks = Math.round(performance.now() - tJudge)
  timings.total = Math.round(performance.now() - started)
  const report = buildReport(
    { id: scanId, url: scan.url, finalUrl: artifacts.target.finalUrl, createdAt: scan.createdAt.toISOString(), timings, probes },
    results,
  )
  await completeScan(
    db.sql,
    scanId,
    report,
    // The 404 probe's body: default error pages name the server or framework (Apache, Express, Django...).
    platformSignals(artifacts.mainResponse.headers, artifacts.page?.html ?? artifacts.mainResponse.body, {
      setCookies: artifacts.mainResponse.setCookies,
      errorPages: [artifacts.probes[BASELINE_PROBE]?.body ?? ''],
    }),
  )
  await publish({ type: 'progress', progress: 100, total: 100, message: `done: score ${report.score} (${report.grade})` })
  await publish({ type: 'done', status: 'completed' })
  await d.ack()
  log.info('scan completed', { score: report.score, ms: timings.total })
}
