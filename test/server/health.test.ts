// Liveness and readiness of every kind of process: /healthz while the process runs, /readyz only while the
// database, Redis (cut here through a relay) and, for a crawler, its browser answer; a crawler-only process
// answers them on a port of its own; a stopping process is not ready. Real PostgreSQL, Redis and Chromium.
import { afterAll, describe, expect, test } from 'bun:test'
import { healthResponse, PROBE_DEADLINE_MS, readiness } from '../../shared/lib/health.ts'
import { REDIS_URL, startService, type TestService } from '../harness/service.ts'
import { startRelay } from '../harness/tcp-relay.ts'
import { until } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const started: TestService[] = []
afterAll(async () => {
  for (const s of started) await s.stop().catch(() => {})
}, 60_000)

const get = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) })
  return { status: res.status, body: await res.json().catch(() => null) }
}

describe('readiness on plain values', () => {
  test('every probe must answer within its deadline; a stopping process is never ready', async () => {
    const ok = { name: 'database', check: async () => 1 }
    const failing = { name: 'redis', check: async () => Promise.reject(new Error('connect ECONNREFUSED\n  at stack')) }
    const hanging = { name: 'browser', check: () => new Promise(() => {}) }
    expect(await readiness([ok], () => false)).toEqual({ ready: true, checks: { database: 'ok' } })
    const t0 = performance.now()
    const r = await readiness([ok, failing, hanging], () => false)
    expect(performance.now() - t0).toBeLessThan(PROBE_DEADLINE_MS + machineDeadline(1_000))
    expect(r).toEqual({
      ready: false,
      checks: { database: 'ok', redis: 'connect ECONNREFUSED', browser: `no answer within ${PROBE_DEADLINE_MS} ms` },
    })
    expect(await readiness([ok], () => true)).toEqual({ ready: false, checks: { process: 'stopping' } })
    expect(healthResponse('/other', async () => r, {})).toBeNull()
  }, 10_000)
})

describe('an api process', () => {
  test('is alive and ready; with Redis cut it stays alive but is not ready, and is ready again when Redis is back', async () => {
    const redis = new URL(REDIS_URL)
    const relay = await startRelay(redis.hostname, Number(redis.port || 6379))
    const svc = await startService('production', { ROLE: 'api', REDIS_URL: `redis://127.0.0.1:${relay.port}` })
    started.push(svc)
    const port = svc.running.port!
    expect(await get(port, '/healthz')).toMatchObject({ status: 200, body: { ok: true, role: 'api' } })
    expect(await get(port, '/readyz')).toMatchObject({ status: 200, body: { ready: true, checks: { database: 'ok', redis: 'ok' } } })

    await relay.cut()
    const down = await until(
      async () => {
        const r = await get(port, '/readyz')
        return r.status === 503 && r
      },
      20_000,
      'not ready without Redis',
    )
    expect(down.body.checks.database).toBe('ok')
    // Failed, never why (an error can name internal hosts): that goes to the log.
    expect(down.body.checks.redis).toBe('failed')
    expect((await get(port, '/healthz')).status).toBe(200)

    await relay.restore()
    await until(async () => (await get(port, '/readyz')).status === 200, 30_000, 'ready again')
    await svc.stop()
    await relay.stop()
  }, 90_000)
})

describe('a crawler-only process', () => {
  test('answers its probes on a port of its own, its browser among the checks', async () => {
    const svc = await startService('production', { ROLE: 'crawler', HEALTH_PORT: '0' })
    started.push(svc)
    expect(svc.running.port).toBeNull()
    const port = svc.running.healthPort!
    expect(port).toBeGreaterThan(0)
    expect(await get(port, '/healthz')).toMatchObject({ status: 200, body: { ok: true, role: 'crawler' } })
    expect(await get(port, '/readyz')).toMatchObject({
      status: 200,
      body: { ready: true, checks: { database: 'ok', redis: 'ok', browser: 'ok' } },
    })
    expect((await fetch(`http://127.0.0.1:${port}/api/mcp`)).status).toBe(404)
    await svc.stop()
  }, 90_000)
})
