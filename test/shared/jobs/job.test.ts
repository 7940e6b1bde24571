// The one job skeleton every queue consumer runs (scans, audits, directory runs): which outcome a delivery
// gets, decided in order, and by the error code's consequence when an attempt throws.
import { describe, expect, test } from 'bun:test'
import { AppError } from '../../../shared/errors.ts'
import type { Delivery } from '../../../shared/infra/types.ts'
import { type JobSteps, runJob } from '../../../shared/jobs/job.ts'
import { createLogger } from '../../../shared/lib/log.ts'

const log = createLogger('error')

/** A delivery that records what became of it. */
function delivery(deliveryCount = 1) {
  const outcome: string[] = []
  const d: Delivery = {
    job: { kind: 'test', ref: 'job_1' },
    deliveryCount,
    ack: async () => void outcome.push('ack'),
    release: async (opts) => void outcome.push(opts?.countAttempt ? 'release counted' : 'release uncounted'),
  }
  return { d, outcome }
}

/** Steps over one row, recording every step called; `run` does what the test says. */
function steps(row: { finished: boolean } | null, run: () => Promise<void>) {
  const called: string[] = []
  const s: JobSteps<{ finished: boolean }, string> = {
    name: 'job',
    load: async () => row,
    isFinished: (r) => r.finished,
    claim: async () => {
      called.push('claim')
      return 'held'
    },
    run: async () => {
      called.push('run')
      await run()
    },
    failOurs: async (_ref, message) => void called.push(`failOurs: ${message}`),
    failTarget: async (_ref, e) => void called.push(`failTarget: ${e.code}`),
    beforeRetry: async () => void called.push('beforeRetry'),
    cleanup: () => void called.push('cleanup'),
  }
  return { s, called }
}

const ok = async () => {}

describe('runJob', () => {
  test('acks a late duplicate (a finished or deleted row) without claiming it', async () => {
    for (const row of [{ finished: true }, null]) {
      const { d, outcome } = delivery()
      const { s, called } = steps(row, ok)
      await runJob(d, s, { maxDeliveries: 3, log })
      expect(outcome).toEqual(['ack'])
      expect(called).toEqual([])
    }
  })

  test('fails a job delivered more often than allowed, as ours, without running it', async () => {
    const { d, outcome } = delivery(4)
    const { s, called } = steps({ finished: false }, ok)
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual(['failOurs: Gave up after 3 attempts'])
    expect(outcome).toEqual(['ack'])
  })

  test('leaves the outcome to the claim step when the claim says the job is not ours to run', async () => {
    const { d, outcome } = delivery()
    const { s, called } = steps({ finished: false }, ok)
    s.claim = async () => null
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual([])
    expect(outcome).toEqual([])
  })

  test("leaves a successful attempt's acks to its run step, and cleans up", async () => {
    const { d, outcome } = delivery()
    const { s, called } = steps({ finished: false }, ok)
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual(['claim', 'run', 'cleanup'])
    expect(outcome).toEqual([])
  })

  test("fails a target's fault at once, with its code, and never retries it", async () => {
    const { d, outcome } = delivery()
    const { s, called } = steps({ finished: false }, async () => {
      throw new AppError('target_unreachable', 'no answer')
    })
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual(['claim', 'run', 'failTarget: target_unreachable', 'cleanup'])
    expect(outcome).toEqual(['ack'])
  })

  test('hands a fault of ours back, counting the attempt, before the last delivery', async () => {
    const { d, outcome } = delivery(2)
    const { s, called } = steps({ finished: false }, async () => {
      throw new Error('browser crashed')
    })
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual(['claim', 'run', 'beforeRetry', 'cleanup'])
    expect(outcome).toEqual(['release counted'])
  })

  test('an attempt that ended its job and then failed (its ack, while Redis restarts) is not failed, even on the last delivery', async () => {
    const row = { finished: false }
    const { d, outcome } = delivery(3)
    const { s, called } = steps(row, async () => {
      row.finished = true
      throw new Error('The client is offline')
    })
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual(['claim', 'run', 'cleanup'])
    expect(outcome).toEqual(['ack'])
  })

  test('fails a fault of ours on the last delivery, saying why', async () => {
    const { d, outcome } = delivery(3)
    const { s, called } = steps({ finished: false }, async () => {
      throw new Error('browser crashed')
    })
    await runJob(d, s, { maxDeliveries: 3, log })
    expect(called).toEqual(['claim', 'run', 'failOurs: Job failed after 3 attempts: browser crashed', 'cleanup'])
    expect(outcome).toEqual(['ack'])
  })
})
