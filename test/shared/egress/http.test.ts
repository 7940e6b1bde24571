// The plain-HTTP client's http:// path: checked by the proxy's own guard, then sent straight to the checked
// address with the URL's Host (shared/egress/http.ts). Real servers on 127.0.0.1, port 0; names come from a
// fake resolver, so no real lookup is made and a request that reached the server can only have gone to the
// address the check returned.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fetchHop, followRedirects, type HopOptions } from '../../../shared/egress/http.ts'
import type { EgressPolicy, Resolver } from '../../../shared/egress/guard.ts'
import { type EgressProxy, startEgressProxy } from '../../../shared/egress/proxy.ts'

const STRICT: EgressPolicy = { allowPrivate: false, trustedHosts: [] }
const OPEN: EgressPolicy = { allowPrivate: true, trustedHosts: [] }
const HOP: HopOptions = { userAgent: 'test', timeoutMs: 5_000, bodyLimit: 64 * 1024 }

const table =
  (names: Record<string, string[]>): Resolver =>
  async (host) => {
    const list = names[host]
    if (!list) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return list.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))
  }

type Hit = { path: string; host: string | null; method: string }
let hits: Hit[] = []
let target: ReturnType<typeof Bun.serve>
let port = 0
const proxies: EgressProxy[] = []

async function proxyFor(policy: EgressPolicy, resolver?: Resolver): Promise<EgressProxy> {
  const p = await startEgressProxy(policy, resolver ? { resolver } : {})
  proxies.push(p)
  return p
}

beforeAll(() => {
  target = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const u = new URL(req.url)
      hits.push({ path: u.pathname + u.search, host: req.headers.get('host'), method: req.method })
      if (u.pathname === '/moved') return new Response(null, { status: 302, headers: { location: u.searchParams.get('to') ?? '/' } })
      // A target's own header of the proxy's verdict's name is only a header.
      return new Response(`hello ${u.pathname}`, { headers: { 'x-egress-blocked': 'forged-by-target' } })
    },
  })
  port = target.port as number
})

afterAll(async () => {
  target?.stop(true)
  await Promise.all(proxies.map((p) => p.stop()))
})

describe('http:// requests go to the address the proxy checked', () => {
  test('a name is resolved by the guard and the request reaches its checked address with the URL as Host', async () => {
    hits = []
    const p = await proxyFor({ allowPrivate: false, trustedHosts: ['app.test'] }, table({ 'app.test': ['127.0.0.1'] }))
    const got = await fetchHop(p, `http://app.test:${port}/page?q=1`, HOP)
    expect(got.ok).toBe(true)
    if (!got.ok) return
    expect(got.status).toBe(200)
    expect(got.url).toBe(`http://app.test:${port}/page?q=1`)
    expect(new TextDecoder().decode(got.body)).toBe('hello /page')
    expect(hits).toEqual([{ path: '/page?q=1', host: `app.test:${port}`, method: 'GET' }])
    expect(p.blocked).toEqual([])
  })

  test('a blocked address is refused before any connection and recorded among the proxy refusals', async () => {
    hits = []
    const p = await proxyFor(STRICT, table({ 'evil.test': ['127.0.0.1'] }))
    for (const url of [`http://evil.test:${port}/x`, `http://127.0.0.1:${port}/y`]) {
      const got = await fetchHop(p, url, HOP)
      expect(got).toMatchObject({ ok: false, code: 'target_blocked', reason: 'loopback' })
    }
    expect(hits).toEqual([])
    expect(p.blocked).toEqual([
      { host: 'evil.test', port: port, reason: 'loopback' },
      { host: '127.0.0.1', port: port, reason: 'loopback' },
    ])
  })

  test('a name that does not resolve is unreachable, not blocked', async () => {
    const p = await proxyFor(OPEN, table({}))
    const got = await fetchHop(p, `http://nowhere.test:${port}/`, HOP)
    expect(got).toMatchObject({ ok: false, code: 'target_unreachable' })
    expect(p.blocked).toEqual([])
  })

  test('when the first checked address refuses the connection, the next one is tried', async () => {
    hits = []
    // 127.0.0.2 is loopback too, with nothing listening on the target's port there.
    const p = await proxyFor(OPEN, table({ 'two.test': ['127.0.0.2', '127.0.0.1'] }))
    const got = await fetchHop(p, `http://two.test:${port}/both`, HOP)
    expect(got).toMatchObject({ ok: true, status: 200 })
    expect(hits.map((h) => h.path)).toEqual(['/both'])
  })

  test('nothing listening: unreachable with the connection error as the reason', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const gone = closed.port
    closed.stop(true)
    const p = await proxyFor(OPEN)
    const got = await fetchHop(p, `http://127.0.0.1:${gone}/`, HOP)
    expect(got).toEqual({ ok: false, code: 'target_unreachable', reason: 'ECONNREFUSED' })
  })

  test("a target's own verdict header is not the proxy's: the answer is read as it is", async () => {
    const p = await proxyFor(OPEN)
    const got = await fetchHop(p, `http://127.0.0.1:${port}/h`, HOP)
    expect(got).toMatchObject({ ok: true, status: 200 })
  })

  test('redirects are followed one hop at a time, each checked again: a hop to a blocked address ends the chain', async () => {
    hits = []
    const p = await proxyFor(
      { allowPrivate: false, trustedHosts: ['app.test'] },
      table({ 'app.test': ['127.0.0.1'], 'inner.test': ['127.0.0.1'] }),
    )
    const to = encodeURIComponent(`http://inner.test:${port}/secret`)
    const chain = await followRedirects(p, `http://app.test:${port}/moved?to=${to}`, { ...HOP, maxRedirects: 5 })
    expect(chain.hops.map((h) => h.status)).toEqual([302])
    expect(chain.last).toMatchObject({ ok: false, code: 'target_blocked', reason: 'loopback' })
    expect(hits.map((h) => h.path)).toEqual([`/moved?to=${to}`])
    expect(p.blocked).toEqual([{ host: 'inner.test', port: port, reason: 'loopback' }])
  })

  test('HEAD, OPTIONS and the POST of a body keep their method; the body is sent once', async () => {
    hits = []
    const p = await proxyFor(OPEN)
    const url = `http://127.0.0.1:${port}/m`
    expect(await fetchHop(p, url, { ...HOP, method: 'HEAD' })).toMatchObject({ ok: true, status: 200 })
    expect(await fetchHop(p, url, { ...HOP, method: 'OPTIONS' })).toMatchObject({ ok: true })
    expect(await fetchHop(p, url, { ...HOP, method: 'POST', body: '{"query":"{__typename}"}' })).toMatchObject({ ok: true })
    expect(hits.map((h) => h.method)).toEqual(['HEAD', 'OPTIONS', 'POST'])
  })
})
