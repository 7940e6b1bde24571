// Postgres is the source of truth for scans and audits; the queue is only dispatch. Scans Postgres holds as
// unfinished whose job the queue no longer holds (lost with Redis, or with the process of the embedded
// default) are dispatched again. Ones nobody will wait for any more are failed with a reason.
import { failAudit, unheldAudits } from '../shared/db/audits.ts'
import type { Sql } from '../shared/db/index.ts'
import { refundAudit } from '../shared/db/ledger.ts'
import { failScan, unfinishedScans } from '../shared/db/scans.ts'
import type { Logger } from '../shared/log.ts'
import type { Infra, JobQueue } from '../shared/infra/types.ts'
import { endViewer } from '../shared/viewer.ts'

export interface RecoveryOptions {
  /** A scan younger than this may still be on its way into the queue: left alone. */
  graceSeconds: number
  /** A scan unfinished for longer than this is failed rather than run. */
  abandonSeconds: number
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
 * unheld for longer than anyone would still wait are failed as ours and refunded.
 */
export async function recoverAudits(sql: Sql, infra: Pick<Infra, 'queue' | 'pubsub' | 'kv'>, log: Logger, opts: RecoveryOptions) {
  const abandoned = await unheldAudits(sql, opts.abandonSeconds)
  for (const id of abandoned) {
    if (await failAudit(sql, id, { code: 'audit_failed', message: 'Interrupted and not resumed in time' })) await refundAudit(sql, id)
    await endViewer(infra.pubsub, infra.kv, id).catch(() => {})
  }
  const held = await infra.queue.heldRefs('audit')
  const lost = (await unheldAudits(sql, opts.graceSeconds)).filter((id) => !held.has(id) && !abandoned.includes(id))
  for (const id of lost) await infra.queue.enqueue({ kind: 'audit', ref: id })
  if (abandoned.length || lost.length) log.info('recovered audits', { failed: abandoned.length, redispatched: lost.length })
  return { failed: abandoned.length, redispatched: lost.length }
}

export interface RecoverySchedule {
  everyMs: number
  scans: RecoveryOptions
  audits: RecoveryOptions
}

export const DEFAULT_RECOVERY: RecoverySchedule = {
  everyMs: 30_000,
  scans: { graceSeconds: 15, abandonSeconds: 600 },
  audits: { graceSeconds: 15, abandonSeconds: 3_600 },
}

/** Recovery at start and then every `everyMs`, until stopped. */
export function startRecovery(
  sql: Sql,
  infra: Pick<Infra, 'queue' | 'pubsub' | 'kv'>,
  log: Logger,
  schedule: RecoverySchedule = DEFAULT_RECOVERY,
) {
  const run = async () => {
    await recoverScans(sql, infra.queue, log, schedule.scans).catch((e) =>
      log.warn('scan recovery failed', { error: (e as Error).message }),
    )
    await recoverAudits(sql, infra, log, schedule.audits).catch((e) => log.warn('audit recovery failed', { error: (e as Error).message }))
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
