// The Redis infra while Redis is gone: every call answers or fails within a deadline, and stopping never
// waits for Redis to come back. A real redis-server of its own, killed with SIGKILL.
import { afterAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { createRedisInfra } from '../../shared/infra/redis.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { until, within } from '../harness/wait.ts'

const procs: Subprocess[] = []
afterAll(() => {
  for (const p of procs) p.kill('SIGKILL')
})

async function startRedis(): Promise<{ proc: Subprocess; url: string }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const proc = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdout: 'ignore',
    stderr: 'ignore',
  })
  procs.push(proc)
  const url = `redis://127.0.0.1:${port}`
  await until(async () => (await fetch(`http://127.0.0.1:${port}`).catch((e) => e)) && true, 5_000, 'redis to listen')
  await Bun.sleep(200)
  return { proc, url }
}

/** An infra whose Redis has just been killed, with one subscription made while it was up. */
async function infraWithDeadRedis(
  beforeKill?: (infra: Infra) => Promise<void>,
): Promise<{ infra: Infra; unsubscribe: () => Promise<void> }> {
  const { proc, url } = await startRedis()
  const infra = await createRedisInfra(url, { claimIdleMs: 2_000, heartbeatMs: 500 }, 'down:')
  const unsubscribe = await infra.pubsub.subscribe('scan:1', () => {})
  await beforeKill?.(infra)
  proc.kill('SIGKILL')
  await proc.exited
  await Bun.sleep(300)
  return { infra, unsubscribe }
}

// Each call below hung until Redis came back before its deadline was added; 12 s is well past every deadline.
const BOUND_MS = 12_000

describe('redis infra with Redis down', () => {
  test('unsubscribing returns instead of waiting for Redis to come back', async () => {
    const { infra, unsubscribe } = await infraWithDeadRedis()
    await within(unsubscribe(), BOUND_MS, 'unsubscribe')
    await within(infra.close(), BOUND_MS, 'close')
  }, 30_000)

  test('a new subscription fails with an error instead of waiting', async () => {
    const { infra } = await infraWithDeadRedis()
    const outcome = await within(
      infra.pubsub
        .subscribe('scan:2', () => {})
        .then(
          () => 'subscribed',
          (e: Error) => e.message,
        ),
      BOUND_MS,
      'subscribe',
    )
    expect(outcome).not.toBe('subscribed')
    await within(infra.close(), BOUND_MS, 'close')
  }, 30_000)

  test('publish and key-value calls fail fast', async () => {
    const { infra } = await infraWithDeadRedis()
    await expect(within(infra.pubsub.publish('scan:1', 'x'), BOUND_MS, 'publish')).rejects.toThrow()
    await expect(within(infra.kv.get('k'), BOUND_MS, 'get')).rejects.toThrow()
    await within(infra.close(), BOUND_MS, 'close')
  }, 30_000)

  test('a consumer stops when asked, although Redis is gone', async () => {
    const stop = new AbortController()
    let consuming: Promise<void> = Promise.resolve()
    const { infra } = await infraWithDeadRedis(async (up) => {
      consuming = up.queue.consume('scan', async (d) => d.ack(), { consumer: 'c1', concurrency: 2, signal: stop.signal })
      await Bun.sleep(300)
    })
    await Bun.sleep(1_500)
    stop.abort()
    await within(consuming, BOUND_MS, 'consumer to stop')
    await within(infra.close(), BOUND_MS, 'close')
  }, 30_000)
})
