// An audit probes the API that pages other than the start page call, and the site checks judge every page's
// calls: a real server on port 0, a real Chromium, the crawl engine as the audit worker runs it.
import { afterAll, describe, expect, test } from 'bun:test'
import { crawlSite, type CrawledPage } from '../../../crawler/audit/crawl.ts'
import { SiteApi } from '../../../crawler/audit/site-api.ts'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { API_ERROR_PROBE } from '../../../shared/checks/probe-paths.ts'
import type { ApiCall } from '../../../shared/checks/types.ts'
import { createLogger } from '../../../shared/lib/log.ts'

const log = createLogger('warn')
const pool = new BrowserPool(chromiumPath(''), log)

const STACK =
  'Error: relation "orders" does not exist\n    at Query.run (/srv/shop/node_modules/pg/lib/query.js:88:17)\n    at async list (/srv/shop/routes/orders.js:12:9)'
const html = (body: string) =>
  new Response(`<!doctype html><html lang="en"><head><title>Shop</title></head><body>${body}</body></html>`, {
    headers: { 'content-type': 'text/html; charset=utf-8' },
  })
const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** What the server received, method and path with the Origin sent. */
const received: Array<{ method: string; path: string; origin: string | null }> = []
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(req) {
    const u = new URL(req.url)
    const origin = req.headers.get('origin')
    received.push({ method: req.method, path: u.pathname, origin })
    if (u.pathname === '/') return html(`<a href="/account">Account</a><script>fetch('/api/status')</script>`)
    if (u.pathname === '/account')
      return html(`<a href="/">Home</a><script>fetch('/internal/orders');fetch('/internal/profile',{credentials:'include'})</script>`)
    if (u.pathname === '/api/status') return json({ ok: true })
    if (u.pathname === '/internal/orders') return json({ error: 'internal', stack: STACK }, 500)
    // Reflects any Origin with credentials: what the CORS probe must find, and only the crawl's pages reveal.
    if (u.pathname === '/internal/profile')
      return json(
        { plan: 'free' },
        200,
        origin ? { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' } : {},
      )
    return new Response('not found', { status: 404 })
  },
})
const START = `http://127.0.0.1:${server.port}/`

afterAll(async () => {
  await pool.close()
  server.stop(true)
})

async function audit(maxPages: number) {
  received.length = 0
  const pages: CrawledPage[] = []
  const summary = await crawlSite(
    {
      startUrl: START,
      maxPages,
      maxDepth: 3,
      maxDurationMs: 120_000,
      concurrency: 1,
      navTimeoutMs: 10_000,
      signal: new AbortController().signal,
    },
    { browser: pool, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 5_000 },
    { onDiscovered: () => {}, onPageStart: () => {}, onPage: async (p) => void pages.push(p) },
  )
  const status = (id: string) => summary.siteChecks.find((c) => c.id === id)
  return { summary, pages, status }
}

describe("an audit's API map", () => {
  test('the API another page calls is judged and probed: its stack trace and its credentialed CORS are found', async () => {
    const { pages, status } = await audit(10)
    expect(pages.map((p) => new URL(p.url).pathname).sort()).toEqual(['/', '/account'])
    const debug = status('debug-error-page')!
    expect(debug.status).toBe('fail')
    expect(JSON.stringify(debug.evidence)).toContain('/internal/orders')
    const cors = status('cors-credentialed-reflection')!
    expect(cors.status).toBe('fail')
    expect(JSON.stringify(cors.evidence)).toContain('/internal/profile')
    // The probes after the crawl: each new API path with a foreign and a "null" Origin, one error path under
    // /internal/; nothing the start page's scan had probed is sent again, and never a write.
    const probesOf = (path: string) => received.filter((r) => r.path === path && r.origin !== null && r.method === 'GET')
    expect(
      probesOf('/internal/profile')
        .map((r) => r.origin)
        .sort(),
    ).toContain('null')
    expect(received.filter((r) => r.path === `/internal/${API_ERROR_PROBE}`)).toHaveLength(1)
    expect(received.filter((r) => r.path === `/api/${API_ERROR_PROBE}`)).toHaveLength(1)
    expect(probesOf('/api/status')).toHaveLength(2)
    expect(received.every((r) => ['GET', 'HEAD', 'OPTIONS', 'POST'].includes(r.method))).toBe(true)
    for (const r of received.filter((r) => r.method === 'POST')) expect(r.path).toMatch(/graphql$/)
  }, 120_000)

  test('an audit of the start page alone judges only its calls: nothing is found, and no /internal/ probe is sent', async () => {
    const { pages, status } = await audit(1)
    expect(pages).toHaveLength(1)
    expect(status('debug-error-page')!.status).toBe('pass')
    expect(status('cors-credentialed-reflection')!.status).toBe('pass')
    expect(received.filter((r) => r.path.startsWith('/internal/') && r.origin !== null)).toHaveLength(0)
  }, 120_000)
})

describe('SiteApi', () => {
  const call = (url: string, status = 200, method = 'GET'): ApiCall => ({
    url,
    method,
    resourceType: 'fetch',
    requestContentType: null,
    credentialed: false,
    authorization: false,
    graphql: false,
    status,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    bodyTruncated: false,
  })

  test('keeps each call once by method, path and outcome, and at most its limit', () => {
    const api = new SiteApi(5)
    api.add([call('http://h/api/a?x=1'), call('http://h/api/a?x=2'), call('http://h/api/a', 500), call('http://h/api/a', 200, 'POST')])
    expect(api.size).toBe(3)
    api.add(Array.from({ length: 50 }, (_, i) => call(`http://h/api/n${i}`)))
    expect(api.size).toBe(5)
    api.add(undefined)
    expect(api.size).toBe(5)
  })
})
