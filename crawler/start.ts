// The crawler side of a process: a warm browser and the scan workers behind the queue interface.
import type { Config } from '../shared/config.ts'
import type { Database } from '../shared/db/index.ts'
import type { Logger } from '../shared/lib/log.ts'
import type { Infra, JobQueue } from '../shared/infra/types.ts'
import { BrowserPool, chromiumPath } from './browser.ts'
import { startAuditWorker } from './audit-worker.ts'
import { DEFAULT_RECOVERY, startRecovery } from './recovery-loop.ts'
import { startScanWorker, trustedSpki } from './scan-worker.ts'
import { WarmPages } from './gather/warm-page.ts'
import { policyFromConfig } from '../shared/egress/guard.ts'
import { startPodCost } from './pod-cost.ts'
import { warmUp } from './warm-up.ts'

export async function startCrawler(given: { config: Config; db: Database; infra: Infra; log: Logger }) {
  const browser = new BrowserPool(chromiumPath(given.config.CHROMIUM_PATH), given.log, trustedSpki(given.config), {
    sharedRenderer: given.config.CRAWL_SHARED_RENDERER,
  })
  await browser.warm()
  const { config } = given
  // On Kubernetes the pod says how busy it is (its deletion cost), so a scale-down takes an idle one first.
  const cost = startPodCost(
    config.POD_NAME
      ? {
          podName: config.POD_NAME,
          namespace: config.POD_NAMESPACE,
          apiUrl: config.K8S_API_URL,
          serviceAccountDir: config.K8S_SERVICE_ACCOUNT_DIR,
          log: given.log,
        }
      : null,
  )
  const jobs = { inFlight: 0 }
  const deps = { ...given, infra: { ...given.infra, queue: countingQueue(given.infra.queue, jobs, (n) => cost.set(n)) } }
  // Scans' pages made ahead, set aside while an audit crawls (audit-crawl.ts).
  const warm = new WarmPages(browser, policyFromConfig(config), config.WARM_SLOTS, config.WORKER_CONCURRENCY, config.SCAN_PAGES_KEPT)
  // Ready only once the first scan's costs are paid: code run once, the first page made ahead (warm-up.ts).
  // Before the workers start, so no job is taken by a process that is not ready (nor yet stops on SIGTERM).
  if (config.WARM_UP) {
    warm.prepare()
    await warmUp({ browser, warm, navTimeoutMs: config.NAV_TIMEOUT_MS, probeTimeoutMs: config.PROBE_TIMEOUT_MS }, given.log)
  }
  const worker = startScanWorker({ ...deps, browser, warm })
  const audits = startAuditWorker({ ...deps, browser, warm })
  const grace = config.RECOVERY_GRACE_S
  const recovery = startRecovery(deps.db.sql, deps.infra, deps.log, {
    everyMs: config.RECOVERY_INTERVAL_MS,
    scans: { ...DEFAULT_RECOVERY.scans, graceSeconds: grace },
    // An audit may run for AUDIT_MAX_DURATION_S; one unheld for three times that is not coming back.
    audits: { graceSeconds: grace, abandonSeconds: Math.max(DEFAULT_RECOVERY.audits.abandonSeconds, 3 * config.AUDIT_MAX_DURATION_S) },
  })
  return {
    worker,
    browser,
    async stop() {
      browser.shuttingDown()
      await recovery.stop()
      // Audits first: their crawls are aborted and handed back at once, while scans finish (seconds).
      await Promise.all([audits.stop(), worker.stop()])
      await browser.close()
      await cost.stop()
    },
  }
}

/** The queue as the workers see it, counting the jobs they hold (the pod's deletion cost). */
function countingQueue(queue: JobQueue, jobs: { inFlight: number }, changed: (n: number) => void): JobQueue {
  return {
    enqueue: (job) => queue.enqueue(job),
    heldRefs: (kind) => queue.heldRefs(kind),
    close: () => queue.close(),
    consume: (kind, handler, opts) =>
      queue.consume(
        kind,
        async (d) => {
          changed(++jobs.inFlight)
          try {
            await handler(d)
          } finally {
            changed(--jobs.inFlight)
          }
        },
        opts,
      ),
  }
}
