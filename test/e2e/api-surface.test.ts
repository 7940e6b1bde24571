// The page's own traffic as the map of its API, end to end: scan_app through the SDK client against the
// careless SPA and its careful twin (test/fixtures/sites/lib/api-spa.ts), with real Chromium. Everything
// the careless one does wrong is found; on the careful one no API finding is medium or worse; the API
// probes stay within their budget and the evidence counts personal data without quoting it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { API_PROBE_BUDGET } from '../../shared/checks/probe-paths.ts'
import { auditEnded, connectClient, ok, payload } from '../harness/client.ts'
import { machineDeadline } from '../harness/machine.ts'
import { startService, type TestService } from '../harness/service.ts'
import { startApiSpa } from '../fixtures/sites/lib/api-spa.ts'
import type { ScanReport } from '../fixtures/sites/lib/serve.ts'

const API_CHECKS = ['api-data-exposure', 'debug-error-page', 'exposed-api-docs', 'cors-credentialed-reflection', 'password-form']
const RANK: Record<string, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 }

type Report = ScanReport & {
  probes: ScanReport['probes'] & { api: { budget: number; sent: number; cors: number; graphql: number; openapi: number; errors: number } }
}

describe('the API a page reveals, scanned end to end (embedded mode)', () => {
  let svc: TestService
  let client: Client
  let careless: Awaited<ReturnType<typeof startApiSpa>>
  let careful: Awaited<ReturnType<typeof startApiSpa>>
  const reports: Record<string, Report> = {}

  const scan = async (site: { url: string }): Promise<Report> => {
    const result = await client.callTool({ name: 'scan_app', arguments: { url: site.url, detail: 'full' } }, undefined, { timeout: 60_000 })
    if (result.isError) throw new Error(`scan_app ${site.url} failed: ${JSON.stringify(payload(result))}`)
    return payload(result) as Report
  }
  const check = (r: Report, id: string) => {
    const c = r.checks.find((x) => x.id === id)
    if (!c) throw new Error(`no ${id} in the report`)
    return c
  }

  beforeAll(async () => {
    svc = await startService('embedded')
    client = await connectClient(svc.mcpUrl, await svc.key())
    careless = await startApiSpa(true)
    careful = await startApiSpa(false)
    reports.careless = await scan(careless)
    reports.careful = await scan(careful)
  }, machineDeadline(120_000))

  afterAll(async () => {
    await client?.close()
    await careless?.stop()
    await careful?.stop()
    await svc?.stop()
  })

  test('finds every planted problem of the careless SPA', () => {
    const r = reports.careless!
    const data = check(r, 'api-data-exposure')
    expect([data.status, data.severity]).toEqual(['fail', 'critical'])
    const exposed = (data.evidence.exposed as Array<{ url: string; counts: Record<string, number> }>)[0]!
    expect(exposed.url).toEndWith('/api/users')
    expect(exposed.counts).toEqual({ emails: 3, passwordHashes: 3 })
    expect(data.evidence.traffic).toMatchObject({
      calls: 4,
      methods: { GET: 3, POST: 1 },
      contentTypes: { 'application/json': 4 },
      graphql: 1,
      credentialed: 1,
      forms: 1,
    })

    // The signed-in answer shared caches may store is in the same check's evidence.
    expect(data.evidence.cacheable).toMatchObject([{ cacheControl: 'public, max-age=600' }])

    const debug = check(r, 'debug-error-page')
    expect(debug.status).toBe('fail')
    expect(JSON.stringify(debug.evidence)).toContain('/api/boom')

    const docs = check(r, 'exposed-api-docs')
    expect([docs.status, docs.severity]).toEqual(['fail', 'medium'])
    expect(docs.evidence.graphql).toMatchObject({ mutations: 3, internal: ['adminDeleteUser', 'internalResetCache'] })
    expect(String((docs.evidence.graphql as { url: string }).url)).toEndWith('/api/graphql')
    expect(docs.evidence.openapi).toMatchObject({ source: 'link', operations: 5, internalOperations: 3 })
    expect(String((docs.evidence.openapi as { url: string }).url)).toEndWith('/api/v1/swagger.json')

    const cors = check(r, 'cors-credentialed-reflection')
    expect([cors.status, cors.severity]).toEqual(['fail', 'critical'])
    const apiPaths = cors.evidence.apiPaths as {
      probed: number
      requests: number
      allowed: Array<{ origin: string; credentials: boolean }>
    }
    expect(apiPaths.probed).toBe(4)
    expect(apiPaths.requests).toBe(8)
    expect(apiPaths.allowed.length).toBe(5)
    expect(new Set(apiPaths.allowed.map((a) => a.origin))).toEqual(new Set(['https://appaudit-cors-probe.example', 'null']))

    const form = check(r, 'password-form')
    expect([form.status, form.severity]).toEqual(['fail', 'high'])
    expect(form.evidence.forms).toEqual([{ action: 'http://auth.careless-partner.example/session', problems: ['http', 'other-site'] }])
  })

  test('reports nothing of medium or higher on the API of the careful twin', () => {
    const r = reports.careful!
    for (const id of API_CHECKS) {
      const c = check(r, id)
      const finding = c.status === 'fail' || c.status === 'warn'
      expect({ id, serious: finding && RANK[c.severity]! >= RANK.medium! }).toEqual({ id, serious: false })
    }
    expect(check(r, 'exposed-api-docs')).toMatchObject({ status: 'info', evidence: { openapi: { internalOperations: 0 } } })
    expect(check(r, 'exposed-api-docs').evidence.graphql).toBeUndefined()
    expect(check(r, 'api-data-exposure').evidence).toMatchObject({ anonymousJsonAnswers: 3 })
  })

  test('sends API probes within their budget, only GET, OPTIONS and the introspection POST, and lists them in the report', () => {
    for (const r of [reports.careless!, reports.careful!]) {
      const api = r.probes.api
      expect(api.sent).toBeLessThanOrEqual(API_PROBE_BUDGET)
      expect(api.cors + api.graphql + api.openapi + api.errors).toBe(api.sent)
      // 4 API paths x 2 origins; /graphql and /api/graphql; 5 well-known documents, and the linked one; one
      // nonsense path under /api, the one prefix the page calls.
      expect(api).toMatchObject({ cors: 8, graphql: 2, openapi: 6, errors: 1 })
      expect(r.probes.sent).toBeLessThanOrEqual(r.probes.budget)
    }
  })

  test("the sites received GET, HEAD and OPTIONS only, besides the page's own GraphQL POST and one introspection POST per endpoint", () => {
    for (const site of [careless, careful]) {
      const methods = new Set(site.received.map((r) => r.method))
      for (const m of methods) expect(['GET', 'HEAD', 'OPTIONS', 'POST']).toContain(m)
      const posts = site.received.filter((r) => r.method === 'POST')
      // The page's query (once) and the introspection query at /graphql and /api/graphql.
      expect(posts.filter((p) => !p.introspection).map((p) => p.path)).toEqual(['/api/graphql'])
      expect(
        posts
          .filter((p) => p.introspection)
          .map((p) => p.path)
          .sort(),
      ).toEqual(['/api/graphql', '/graphql'])
    }
  })

  test('keeps e-mail addresses and password hashes out of the report: counts, not values', () => {
    const whole = JSON.stringify(reports.careless)
    for (const secret of careless.secrets ?? []) expect(whole.includes(secret)).toBe(false)
    expect(whole).not.toContain('careless-shop.example')
  })

  test(
    "an audit records each page's own API traffic: /team's call is judged on /team",
    async () => {
      const started = await ok(client, 'audit_app', { url: careless.url, options: { maxPages: 3, maxDepth: 1 } })
      const done = await auditEnded(client, started.auditId, machineDeadline(90_000))
      expect(done.status).toBe('completed')
      const findings = await ok(client, 'get_audit', { auditId: started.auditId, section: 'findings', limit: 100 })
      const pagesOf = (id: string) =>
        new Set(findings.items.filter((f: { checkId: string }) => f.checkId === id).flatMap((f: { pages: string[] }) => f.pages))
      const origin = new URL(careless.url).origin
      expect(pagesOf('api-data-exposure')).toEqual(new Set([`${origin}/`, `${origin}/team`]))
      expect(pagesOf('password-form').has(`${origin}/team`)).toBe(true)
      expect(JSON.stringify(findings)).not.toContain('careless-shop.example')
    },
    machineDeadline(120_000),
  )
})
