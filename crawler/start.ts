// The crawler side of a process: a warm browser and the scan workers behind the queue interface.
import type { Config } from '../shared/config.ts'
import type { Database } from '../shared/db/index.ts'
import type { Logger } from '../shared/log.ts'
import type { Infra } from '../shared/infra/types.ts'
import { BrowserPool, chromiumPath } from './browser.ts'
import { startAuditWorker } from './audit-worker.ts'
import { DEFAULT_RECOVERY, startRecovery } from './recovery.ts'
import { startScanWorker, trustedSpki } from './scan-worker.ts'

export async function startCrawler(deps: { config: Config; db: Database; infra: Infra; log: Logger }) {
  const browser = new BrowserPool(chromiumPath(deps.config.CHROMIUM_PATH), deps.log, trustedSpki(deps.config))
  await browser.warm()
  const worker = startScanWorker({ ...deps, browser })
  const audits = startAuditWorker({ ...deps, browser })
  const { config } = deps
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
      await recovery.stop()
      // Audits first: their crawls are aborted and handed back at once, while scans finish (seconds).
      await Promise.all([audits.stop(), worker.stop()])
      await browser.close()
    },
  }
}
