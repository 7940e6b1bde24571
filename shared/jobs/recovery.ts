// Postgres is the source of truth for scans and audits; the queue is only dispatch. Scans Postgres holds as
// unfinished whose job the queue no longer holds (lost with Redis, or with the process of the embedded
// default) are dispatched again. Ones nobody will wait for any more are failed with a reason.
// Shared by the crawler's own periodic recovery (crawler/recovery-loop.ts) and /api/cron/recover (api/cron/).
import type { Config } from '../config.ts'
import { failAuditAndRefund, unheldAudits } from '../db/audits.ts'
import { orphanedDirectoryRuns } from '../db/directory-runs.ts'
import type { Sql } from '../db/index.ts'
import { failScan, unfinishedScans } from '../db/scans.ts'
import type { Infra, JobQueue } from '../infra/types.ts'
import type { Logger } from '../lib/log.ts'
import { endViewer } from '../protocol/viewer.ts'

export interface RecoveryOptions {
  /** A scan younger than this may still be on its way into the queue: left alone. */
  graceSeconds: number
  /** A scan unfinished for longer than this is failed rather than run. */
  abandonSeconds: number
}

/** scan_app waits SCAN_TIMEOUT_MS, 10 minutes at the most: no one waits for a scan unfinished for longer. */
export const SCAN_ABANDON_S = 600
/** The least time an audit may go unheld before it is failed; longer when AUDIT_MAX_DURATION_S is. */
export const AUDIT_ABANDON_MIN_S = 3_600

/** The thresholds a deployment's configuration implies, the same for the crawler and for the cron route. */
export function recoveryOptions(config: Pick<Config, 'RECOVERY_GRACE_S' | 'AUDIT_MAX_DURATION_S'>): {
  scans: RecoveryOptions
  audits: RecoveryOptions
} {
  const graceSeconds = config.RECOVERY_GRACE_S
  return {
    scans: { graceSeconds, abandonSeconds: SCAN_ABANDON_S },
    // An audit may run for AUDIT_MAX_DURATION_S; one unheld for three times that is not coming back.
    audits: { graceSeconds, abandonSeconds: Math.max(AUDIT_ABANDON_MIN_S, 3 * config.AUDIT_MAX_DURATION_S) },
  }
}

export async function recoverScans(sql: Sql, queue: JobQueue, log: Logger, opts: RecoveryOptions) {
  const abandoned = await unfinishedScans(sql, opts.abandonSeconds)
  for (const id of abandoned) await failScan(sql, id, { code: 'scan_failed', message: 'Interrupted and not resumed in time' })
  const held = await queue.heldRefs('scan')
  const lost = (await unfinishedScans(sql, opts.graceSeconds)).filter((id) => !held.has(id) && !abandoned.includes(id))
  for (const id of lost) await queue.enqueue({ kind: 'scan', ref: id })
  if (abandoned.length || lost.length) log.info('recovered scans', { failed: abandoned.length, redispatched: lost.length })
  return { failed: abandoned.length, redispatched: lost.length }
}

/**
 * Audits Postgres holds as queued or running that no worker holds (lease free or expired) and the queue
 * does not hold either are dispatched again; a worker that takes one resumes from its stored pages. Ones
 * unheld for longer than anyone would still wait are failed as ours and refunded: only by the caller whose
 * update failed it, and the refund's idempotency key pays it back once whoever else tries.
 */
export async function recoverAudits(sql: Sql, infra: Pick<Infra, 'queue' | 'pubsub' | 'kv'>, log: Logger, opts: RecoveryOptions) {
  const abandoned = await unheldAudits(sql, opts.abandonSeconds)
  for (const id of abandoned) {
    await failAuditAndRefund(sql, id, { code: 'audit_failed', message: 'Interrupted and not resumed in time' })
    await endViewer(infra.pubsub, infra.kv, id).catch(() => {})
  }
  const held = await infra.queue.heldRefs('audit')
  const lost = (await unheldAudits(sql, opts.graceSeconds)).filter((id) => !held.has(id) && !abandoned.includes(id))
  for (const id of lost) await infra.queue.enqueue({ kind: 'audit', ref: id })
  if (abandoned.length || lost.length) log.info('recovered audits', { failed: abandoned.length, redispatched: lost.length })
  return { failed: abandoned.length, redispatched: lost.length }
}

/**
 * Directory runs Postgres holds as unfinished that no driver holds and the queue does not hold either are
 * dispatched again; the driver that takes one carries on from its items. None is ever failed here: the
 * driver ends a run that is past its time limit itself.
 */
export async function recoverDirectoryRuns(sql: Sql, queue: JobQueue, log: Logger, graceSeconds: number) {
  const held = await queue.heldRefs('directory')
  const lost = (await orphanedDirectoryRuns(sql, graceSeconds)).filter((id) => !held.has(id))
  for (const id of lost) await queue.enqueue({ kind: 'directory', ref: id })
  if (lost.length) log.info('recovered directory runs', { redispatched: lost.length })
  return { redispatched: lost.length }
}

/**
 * How long a live-viewer link lives: as long as its audit can still be running (queued, crawled for up to
 * its duration, taken over after a crash until recovery gives up on it), and never less than
 * VIEWER_TOKEN_TTL_S. The end of the crawl kills the link sooner.
 */
export function viewerLinkTtlS(
  config: Pick<Config, 'RECOVERY_GRACE_S' | 'AUDIT_MAX_DURATION_S' | 'VIEWER_TOKEN_TTL_S'>,
  maxDurationSeconds: number,
) {
  const canRun = recoveryOptions(config).audits.abandonSeconds + maxDurationSeconds
  return Math.min(MAX_VIEWER_LINK_TTL_S, Math.max(config.VIEWER_TOKEN_TTL_S, canRun))
}

/** Below VIEWER_ENDED_TTL_S (7 days), so a link opened after its crawl says "ended", not "not valid". */
const MAX_VIEWER_LINK_TTL_S = 6 * 86_400
