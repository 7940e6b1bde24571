// The job queue, pub/sub and key-value contracts, run against both implementations.
import { afterEach, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { createMemoryInfra } from '../../shared/infra/memory.ts'
import { createRedisInfra } from '../../shared/infra/redis.ts'
import type { Delivery, Infra, QueueTuning } from '../../shared/infra/types.ts'
import { REDIS_URL } from '../harness/service.ts'
import { until } from '../harness/wait.ts'

const TUNING: QueueTuning = { claimIdleMs: 600, heartbeatMs: 150 }
const opened: Infra[] = []

const impls: Array<[string, () => Promise<Infra>]> = [
  ['memory', async () => createMemoryInfra(TUNING)],
  ['redis', async () => createRedisInfra(REDIS_URL, TUNING, `test:${randomBytes(4).toString('hex')}:`)],
]

async function open(make: () => Promise<Infra>) {
  const i = await make()
  opened.push(i)
  return i
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((i) => i.close()))
})

describe.each(impls)('%s queue', (_name, make) => {
  test('delivers each job once and not again after ack', async () => {
    const infra = await open(make)
    const seen: string[] = []
    const stop = new AbortController()
    const done = infra.queue.consume(
      'scan',
      async (d) => {
        seen.push(d.job.ref)
        expect(d.deliveryCount).toBe(1)
        await d.ack()
      },
      { consumer: 'c1', concurrency: 2, signal: stop.signal },
    )
    for (let i = 0; i < 20; i++) await infra.queue.enqueue({ kind: 'scan', ref: `r${i}` })
    await until(() => seen.length === 20, 5_000, 'seen.length === 20', { everyMs: 20 })
    await Bun.sleep(TUNING.claimIdleMs + 300)
    stop.abort()
    await done
    expect(seen.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`).sort())
  })

  test('a job whose handler throws is delivered again with a higher count', async () => {
    const infra = await open(make)
    const counts: number[] = []
    const stop = new AbortController()
    const done = infra.queue.consume(
      'scan',
      async (d) => {
        counts.push(d.deliveryCount)
        if (d.deliveryCount < 2) throw new Error('worker crashed')
        await d.ack()
      },
      { consumer: 'c1', concurrency: 1, signal: stop.signal },
    )
    await infra.queue.enqueue({ kind: 'scan', ref: 'x' })
    await until(() => counts.length === 2, 8_000, 'counts.length === 2', { everyMs: 20 })
    stop.abort()
    await done
    expect(counts).toEqual([1, 2])
  })

  test('release hands a job back at once; only a counted release counts', async () => {
    const infra = await open(make)
    const seen: Delivery['deliveryCount'][] = []
    const stop = new AbortController()
    const done = infra.queue.consume(
      'scan',
      async (d) => {
        seen.push(d.deliveryCount)
        if (seen.length === 1) return d.release() // graceful hand-back: not an attempt
        if (seen.length === 2) return d.release({ countAttempt: true })
        await d.ack()
      },
      { consumer: 'c1', concurrency: 1, signal: stop.signal },
    )
    await infra.queue.enqueue({ kind: 'scan', ref: 'y' })
    await until(() => seen.length === 3, 3_000, 'seen.length === 3', { everyMs: 20 })
    stop.abort()
    await done
    expect(seen).toEqual([1, 1, 2])
  })

  test('pub/sub delivers to subscribers until they unsubscribe', async () => {
    const infra = await open(make)
    const got: string[] = []
    const unsub = await infra.pubsub.subscribe('scan:abc', (m) => got.push(m))
    await infra.pubsub.publish('scan:abc', 'one')
    await infra.pubsub.publish('scan:other', 'nope')
    await until(() => got.length === 1, 5_000, 'got.length === 1', { everyMs: 20 })
    await unsub()
    await infra.pubsub.publish('scan:abc', 'two')
    await Bun.sleep(100)
    expect(got).toEqual(['one'])
  })

  test('key-value entries expire and can be touched and deleted', async () => {
    const infra = await open(make)
    await infra.kv.set('k', 'v', 1)
    expect(await infra.kv.get('k')).toBe('v')
    expect(await infra.kv.touch('k', 60)).toBe(true)
    expect(await infra.kv.del('k')).toBe(true)
    expect(await infra.kv.get('k')).toBeNull()
    expect(await infra.kv.touch('k', 60)).toBe(false)
    await infra.kv.set('short', 'v', 1)
    await Bun.sleep(1_100)
    expect(await infra.kv.get('short')).toBeNull()
  })
})

describe('redis queue across consumers', () => {
  test('a job held by a consumer that died is taken over from the pending list', async () => {
    const prefix = `test:${randomBytes(4).toString('hex')}:`
    const a = await open(() => createRedisInfra(REDIS_URL, TUNING, prefix))
    const b = await open(() => createRedisInfra(REDIS_URL, TUNING, prefix))
    const stopA = new AbortController()
    let aGot = false
    // Consumer A takes the job and never finishes: its process "dies" (connection closed, no ack).
    const aDone = a.queue.consume(
      'scan',
      async () => {
        aGot = true
        await new Promise(() => {})
      },
      { consumer: 'dead', concurrency: 1, signal: stopA.signal },
    )
    await a.queue.enqueue({ kind: 'scan', ref: 'orphan' })
    await until(() => aGot, 5_000, 'aGot', { everyMs: 20 })
    void aDone
    await a.close() // heartbeats stop with the connection
    opened.splice(opened.indexOf(a), 1)

    const stopB = new AbortController()
    const taken: Array<{ ref: string; count: number }> = []
    const bDone = b.queue.consume(
      'scan',
      async (d) => {
        taken.push({ ref: d.job.ref, count: d.deliveryCount })
        await d.ack()
      },
      { consumer: 'alive', concurrency: 1, signal: stopB.signal },
    )
    await until(() => taken.length === 1, 5_000, 'taken.length === 1', { everyMs: 20 })
    stopB.abort()
    await bDone
    expect(taken).toEqual([{ ref: 'orphan', count: 2 }])
  })

  test('a live consumer heartbeats a long job, so no one else takes it', async () => {
    const prefix = `test:${randomBytes(4).toString('hex')}:`
    const a = await open(() => createRedisInfra(REDIS_URL, TUNING, prefix))
    const b = await open(() => createRedisInfra(REDIS_URL, TUNING, prefix))
    const holders: string[] = []
    const stop = new AbortController()
    const handler = (name: string) => async (d: Delivery) => {
      holders.push(name)
      await Bun.sleep(TUNING.claimIdleMs * 3) // far longer than the claim idle time
      await d.ack()
    }
    const da = a.queue.consume('scan', handler('a'), { consumer: 'a', concurrency: 1, signal: stop.signal })
    await a.queue.enqueue({ kind: 'scan', ref: 'long' })
    await until(() => holders.length === 1, 5_000, 'holders.length === 1', { everyMs: 20 })
    const db = b.queue.consume('scan', handler('b'), { consumer: 'b', concurrency: 1, signal: stop.signal })
    await Bun.sleep(TUNING.claimIdleMs * 3 + 200)
    stop.abort()
    await Promise.all([da, db])
    expect(holders).toEqual(['a'])
  })
})
