// The one skeleton every queue consumer runs a delivered job through: the scan and audit workers (crawler/)
// and the directory-run driver (api/directory-runs/driver.ts). The order of decisions:
//   finished or deleted          -> a late duplicate: ack;
//   delivered too many times     -> fail for a reason of ours (refund what was charged), ack;
//   not ours to run (claim says) -> the claim step has acked or released;
//   the attempt throws           -> after the job ended (its ack failed): ack again, nothing else;
//                                   the target's fault (shared/errors.ts decides): fail now, no retry, ack;
//                                   else ours: hand it back counting the attempt, or on the last
//                                   delivery fail it (and refund), ack.
// What a job does when it succeeds, and the acks of its own outcomes, belong to its run step.
import { isTargetFault, type AppError, errorMessage } from '../errors.ts'
import type { Logger } from '../lib/log.ts'
import type { Delivery } from '../infra/types.ts'

export interface JobSteps<Row, Claim> {
  /** 'scan', 'audit' or 'directory run': names the job in log lines and failure messages. */
  name: string
  load(ref: string): Promise<Row | null>
  isFinished(row: Row): boolean
  /** Takes the job for this worker; null when it must not run here, after acking or releasing it. */
  claim(row: Row): Promise<Claim | null>
  run(claim: Claim): Promise<void>
  /** Ends the job as failed for a reason of ours, giving back what it was charged. */
  failOurs(ref: string, message: string): Promise<void>
  /** Ends the job as failed for a reason of the target's. */
  failTarget(ref: string, error: AppError): Promise<void>
  /** Before a failed attempt is handed back for another try. */
  beforeRetry?(ref: string): Promise<void>
  /** After an attempt, whatever became of it. */
  cleanup?(claim: Claim): void
  /** Said after "failed for good after repeated attempts" (e.g. that the charge was refunded). */
  givenUpNote?: string
}

export async function runJob<Row, Claim>(
  d: Delivery,
  steps: JobSteps<Row, Claim>,
  opts: { maxDeliveries: number; log: Logger },
): Promise<void> {
  const { log, maxDeliveries } = opts
  const ref = d.job.ref
  const row = await steps.load(ref)
  if (!row || steps.isFinished(row)) {
    await d.ack() // finished, or deleted: a late duplicate
    return
  }
  if (d.deliveryCount > maxDeliveries) {
    await steps.failOurs(ref, `Gave up after ${maxDeliveries} attempts`)
    await d.ack()
    log.warn(`${steps.name} failed for good after repeated attempts${steps.givenUpNote ?? ''}`)
    return
  }
  const claim = await steps.claim(row)
  if (claim === null) return
  try {
    await steps.run(claim)
  } catch (e) {
    if (isTargetFault(e)) {
      await steps.failTarget(ref, e)
      await d.ack()
      log.info(`${steps.name} failed: target`, { code: e.code })
      return
    }
    const message = errorMessage(e)
    // The attempt stored its outcome and only what followed failed (its ack while Redis restarts): not a failed
    // attempt. Neither failed as ours (which would tell its watchers it failed) nor handed back; the ack is tried
    // again, and a redelivery finds the job finished.
    const now = await steps.load(ref).catch(() => null)
    if (now && steps.isFinished(now)) {
      log.warn(`${steps.name} ended, but what followed failed`, { error: message })
      await d.ack().catch(() => {})
      return
    }
    log.warn(`${steps.name} attempt failed; handing it back`, { error: message })
    if (d.deliveryCount >= maxDeliveries) {
      const title = steps.name[0]!.toUpperCase() + steps.name.slice(1)
      await steps.failOurs(ref, `${title} failed after ${d.deliveryCount} attempts: ${message}`)
      await d.ack()
    } else {
      await steps.beforeRetry?.(ref)
      await d.release({ countAttempt: true })
    }
  } finally {
    steps.cleanup?.(claim)
  }
}
