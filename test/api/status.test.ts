// The public status and benchmark endpoints on the real service, production and embedded:
// open incidents newest first, never an error (a cut database reads as no incident), and a benchmark that
// is one exact aggregate, kept 30 s per process.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { statusRoutes } from '../../api/status/index.ts'
import { createAccount } from '../../shared/db/accounts.ts'
import { openIncident, resolveIncident } from '../../shared/db/incidents.ts'
import type { Sql } from '../../shared/db/index.ts'
import { completeScan, createScan } from '../../shared/db/scans.ts'
import { PG_ADMIN_URL, startService, type Mode, type TestService } from '../harness/service.ts'
import { until, within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const get = (svc: TestService, path: string) => within(fetch(`${svc.url}${path}`), 10_000, `GET ${path}`)

async function completedScan(sql: Sql, score: number) {
  const account = await createAccount(sql, 'free')
  const scan = await createScan(sql, account.id, 'https://www.example.com/')
  await completeScan(sql, scan.id, { score, grade: 'C' })
  return scan.id
}

/** The mean to one decimal, as the endpoint promises it (PostgreSQL rounds half away from zero). */
const mean1 = (scores: number[]) => Math.round((scores.reduce((a, b) => a + b, 0) * 10) / scores.length) / 10

/** The benchmark route on its own, over the service's database, with a clock the test moves. */
function benchmarkAt(svc: TestService, clock: { now: number }) {
  const app = statusRoutes(svc.running.services, { now: () => clock.now })
  return async () => (await app.handle(new Request('http://localhost/api/benchmark'))).json()
}

/** Cuts the service off its database: production drops it (terminating its connections), embedded ends the pool. */
async function cutDatabase(svc: TestService) {
  if (svc.mode === 'production') {
    const name = new URL(svc.running.services.config.DATABASE_URL).pathname.slice(1)
    const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} })
    await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)
    await admin.end()
  } else {
    await svc.running.services.db.sql.end({ timeout: 5 })
  }
}

describe.each(['production', 'embedded'] as Mode[])('status and benchmark (%s)', (mode) => {
  let svc: TestService
  let sql: Sql
  beforeAll(async () => {
    svc = await startService(mode, { ROLE: 'api' })
    sql = svc.running.services.db.sql
  }, machineDeadline(60_000))
  afterAll(async () => {
    await svc?.stop()
  })

  test('lists only unresolved incidents, newest first, to any origin', async () => {
    const old = await openIncident(sql, { title: 'Audits slow', severity: 'minor', message: null })
    const gone = await openIncident(sql, { title: 'Was down', severity: 'critical', message: 'fixed' })
    const recent = await openIncident(sql, { title: 'Scans failing', severity: 'major', message: 'We are on it.' })
    await sql`UPDATE incidents SET started_at = now() - interval '2 hours' WHERE id = ${old.id}`
    await sql`UPDATE incidents SET started_at = now() - interval '1 hour' WHERE id = ${gone.id}`
    expect((await resolveIncident(sql, gone.id)).kind).toBe('resolved')

    const res = await get(svc, '/api/status/active')
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('content-type')).toContain('application/json')
    const body = (await res.json()) as { incidents: Array<Record<string, unknown>> }
    expect(body.incidents.map((i) => i.id)).toEqual([recent.id, old.id])
    expect(body.incidents[0]).toEqual({
      id: recent.id,
      title: 'Scans failing',
      severity: 'major',
      message: 'We are on it.',
      startedAt: recent.startedAt.toISOString(),
    })
    expect(body.incidents[1]).toMatchObject({ severity: 'minor', message: null })
  })

  test('a resolved incident leaves the list within the 5 s the answer is kept', async () => {
    const [first] = ((await (await get(svc, '/api/status/active')).json()) as { incidents: Array<{ id: string }> }).incidents
    await resolveIncident(sql, first!.id)
    const t0 = Date.now()
    await until(
      async () => {
        const body = (await (await get(svc, '/api/status/active')).json()) as { incidents: Array<{ id: string }> }
        return !body.incidents.some((i) => i.id === first!.id)
      },
      8_000,
      'the resolved incident to disappear',
      { everyMs: 250 },
    )
    expect(Date.now() - t0).toBeLessThan(machineDeadline(7_000))
  }, 20_000)

  test('the benchmark is null and 0 before any scan completes, to any origin', async () => {
    const res = await get(svc, '/api/benchmark')
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('cache-control')).toBe('public, max-age=30')
    expect(await res.json()).toEqual({ avg: null, count: 0 })
  })

  test('rounds the mean to one decimal, half away from zero', async () => {
    const benchmark = benchmarkAt(svc, { now: 0 })
    // 289 / 4 = 72.25: a float rounded half to even would say 72.2.
    for (const score of [72, 73, 72, 72]) await completedScan(sql, score)
    expect(await benchmark()).toEqual({ avg: 72.3, count: 4 })
  })

  test('the benchmark is the exact mean of every completed scan of every account, under concurrent completions', async () => {
    const clock = { now: 0 }
    const benchmark = benchmarkAt(svc, clock)
    // Scans that are not completed do not count, whatever their score column says.
    const account = await createAccount(sql, 'free')
    const queued = await createScan(sql, account.id, 'https://www.example.com/queued')
    await sql`UPDATE scans SET score = 0 WHERE id = ${queued.id}`
    const failed = await createScan(sql, account.id, 'https://www.example.com/failed')
    await sql`UPDATE scans SET status = 'failed', score = 0 WHERE id = ${failed.id}`

    const scores = [72, 73, 72, 72, ...Array.from({ length: 40 }, (_, i) => (i * 37) % 101)]
    const reads: Array<{ avg: number | null; count: number }> = []
    let writing = true
    const reader = (async () => {
      while (writing) {
        clock.now += 60_000 // every read is past the cache, so each one queries
        reads.push(await benchmark())
      }
    })()
    // Each completion on its own account, all at once.
    await Promise.all(scores.slice(4).map((score) => completedScan(sql, score)))
    writing = false
    await within(reader, 30_000, 'the reader to stop')
    clock.now += 60_000
    expect(await benchmark()).toEqual({ avg: mean1(scores), count: scores.length })
    // Reads taken while scans completed saw some of them, never more than there were.
    expect(reads.length).toBeGreaterThan(0)
    for (const r of reads) expect(r.count).toBeGreaterThanOrEqual(4)
    for (const r of reads) expect(r.count).toBeLessThanOrEqual(scores.length)
  }, 60_000)

  test('keeps the benchmark 30 s per process, then reads it again', async () => {
    const clock = { now: 1_000_000 }
    const benchmark = benchmarkAt(svc, clock)
    const first = (await benchmark()) as { avg: number; count: number }
    await completedScan(sql, 100)
    clock.now += 29_000
    expect(await benchmark()).toEqual(first)
    clock.now += 1_000
    expect(((await benchmark()) as { count: number }).count).toBe(first.count + 1)
  })
})

describe.each(['production', 'embedded'] as Mode[])('a service cut off its database (%s)', (mode) => {
  let svc: TestService
  beforeAll(async () => {
    svc = await startService(mode, { ROLE: 'api' })
  }, machineDeadline(60_000))
  afterAll(async () => {
    await svc?.stop()
  })

  test('the status endpoint reads as no incident, 200, and the benchmark keeps its last answer or says 503 in JSON', async () => {
    const sql = svc.running.services.db.sql
    const open = await openIncident(sql, { title: 'Degraded', severity: 'major', message: null })
    await completedScan(sql, 80)
    const before = (await (await get(svc, '/api/status/active')).json()) as { incidents: Array<{ id: string }> }
    expect(before.incidents.map((i) => i.id)).toEqual([open.id])
    expect(await (await get(svc, '/api/benchmark')).json()).toEqual({ avg: 80, count: 1 })

    await cutDatabase(svc)
    await until(
      async () => {
        const res = await get(svc, '/api/status/active')
        expect(res.status).toBe(200)
        expect(res.headers.get('access-control-allow-origin')).toBe('*')
        const body = (await res.json()) as { incidents: unknown[] }
        return body.incidents.length === 0 && body
      },
      15_000,
      'the status endpoint to read as no incident',
      { everyMs: 250, rethrow: true },
    )
    // This process computed the benchmark before: it keeps serving that answer.
    const kept = await get(svc, '/api/benchmark')
    expect(kept.status).toBe(200)
    expect(await kept.json()).toEqual({ avg: 80, count: 1 })
    // A process that never computed it answers 503, in JSON, to any origin.
    const fresh = await statusRoutes(svc.running.services).handle(new Request('http://localhost/api/benchmark'))
    expect(fresh.status).toBe(503)
    expect(fresh.headers.get('access-control-allow-origin')).toBe('*')
    expect(fresh.headers.get('retry-after')).toBe('30')
    expect(await fresh.json()).toMatchObject({ error: 'unavailable' })
  }, 40_000)
})
