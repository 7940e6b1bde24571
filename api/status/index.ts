// Public endpoints, no authentication, readable from any origin (CORS *):
//   GET /api/status/active  {incidents: [{id, title, severity, message, startedAt}]}, unresolved, newest
//                           first; never an error: a failure reads as {incidents: []} with 200.
//   GET /api/benchmark      {avg, count}: the mean score of every completed scan (one decimal; null when
//                           there is none) and how many; 503 JSON only when it was never computed here.
// Each process reuses its answers briefly (service.ts); Cache-Control lets browsers and CDNs do the same.
import Elysia from 'elysia'
import { withCors } from '../http/cors.ts'
import type { Services } from '../services.ts'
import { BENCHMARK_TTL_MS, INCIDENTS_TTL_MS, StatusService, type StatusDeps } from './service.ts'

const json = (status: number, body: unknown, cacheControl: string) =>
  withCors(Response.json(body, { status, headers: { 'cache-control': cacheControl } }))

export function statusRoutes(services: Pick<Services, 'db' | 'log'>, overrides: Partial<StatusDeps> = {}) {
  const service = new StatusService({ sql: services.db.sql, log: services.log, ...overrides })
  const maxAge = (ms: number) => `public, max-age=${Math.floor(ms / 1000)}`
  return new Elysia({ name: 'status' })
    .get('/api/status/active', async () => {
      // The service never throws; the catch keeps the promise even if building the answer ever did.
      const body = await service.active().catch(() => ({ incidents: [] }))
      return json(200, body, maxAge(INCIDENTS_TTL_MS))
    })
    .get('/api/benchmark', async () => {
      try {
        return json(200, await service.benchmark(), maxAge(BENCHMARK_TTL_MS))
      } catch {
        const res = json(503, { error: 'unavailable', message: 'The benchmark cannot be computed right now; retry shortly.' }, 'no-store')
        res.headers.set('retry-after', '30')
        return res
      }
    })
}
