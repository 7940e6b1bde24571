// The crawler's own recovery, at start and then every RECOVERY_INTERVAL_MS: what it does lives in
// shared/jobs/recovery.ts, which /api/cron/recover runs too (the api may not import the crawler).
import type { Sql } from '../shared/db/index.ts'
import type { Infra } from '../shared/infra/types.ts'
import type { Logger } from '../shared/lib/log.ts'
import { AUDIT_ABANDON_MIN_S, type RecoveryOptions, recoverAudits, recoverScans, SCAN_ABANDON_S } from '../shared/jobs/recovery.ts'
import { errorMessage } from '../shared/errors.ts'

// Named here as before, for the callers and tests that import them from the crawler.
export { recoverAudits, recoverScans, type RecoveryOptions }

export interface RecoverySchedule {
  everyMs: number
  scans: RecoveryOptions
  audits: RecoveryOptions
}

export const DEFAULT_RECOVERY: RecoverySchedule = {
  everyMs: 30_000,
  scans: { graceSeconds: 15, abandonSeconds: SCAN_ABANDON_S },
  audits: { graceSeconds: 15, abandonSeconds: AUDIT_ABANDON_MIN_S },
}

/** Recovery at start and then every `everyMs`, until stopped. */
export function startRecovery(
  sql: Sql,
  infra: Pick<Infra, 'queue' | 'pubsub' | 'kv'>,
  log: Logger,
  schedule: RecoverySchedule = DEFAULT_RECOVERY,
) {
  const run = async () => {
    await recoverScans(sql, infra.queue, log, schedule.scans).catch((e) => log.warn('scan recovery failed', { error: errorMessage(e) }))
    await recoverAudits(sql, infra, log, schedule.audits).catch((e) => log.warn('audit recovery failed', { error: errorMessage(e) }))
  }
  const first = run()
  const timer = setInterval(run, schedule.everyMs)
  return {
    async stop() {
      clearInterval(timer)
      await first
    },
  }
}
