// verify_site through the official SDK client against the production path (PostgreSQL, Redis): one token
// per account and app, each method checked for real (a page, a file, a TXT record from a local DNS server).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { findPrincipalByApiKey } from '../../shared/db/accounts.ts'
import { isVerified } from '../../shared/db/verifications.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startDnsServer, type DnsServer } from '../harness/dns-server.ts'
import { startService, type TestService } from '../harness/service.ts'

const META = 'appaudit-site-verification'
const FILE = '/.well-known/appaudit-verification.txt'
const TOKEN_RE = /^appaudit-verify=[0-9A-Za-z]{22}$/

/** A site whose home page head, body, a deeper page and the verification file are set by the test. */
function ownedSite() {
  const state = { head: '', body: '', deepHead: '', file: null as string | null, redirectRootTo: null as string | null }
  const hits: string[] = []
  const page = (head: string, body = '') =>
    new Response(`<!doctype html><html><head><title>Shop</title>${head}</head><body>${body}</body></html>`, {
      headers: { 'content-type': 'text/html; charset=utf-8' },
    })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      hits.push(path)
      if (path === '/' && state.redirectRootTo) return new Response(null, { status: 302, headers: { location: state.redirectRootTo } })
      if (path === '/') return page(state.head, state.body)
      if (path === '/deep/page') return page(state.deepHead)
      if (path === FILE && state.file !== null) return new Response(state.file, { headers: { 'content-type': 'text/plain' } })
      return new Response('not found', { status: 404 })
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return { state, hits, origin, url: `${origin}/`, stop: () => server.stop(true) }
}

let svc: TestService
let blocked: TestService
let dns: DnsServer
let keyA: string
let a: Client
let b: Client
let aBlocked: Client
const sites: Array<ReturnType<typeof ownedSite>> = []
const site = () => {
  const s = ownedSite()
  sites.push(s)
  return s
}

const call = async (client: Client, args: Record<string, unknown>) => {
  const r = await client.callTool({ name: 'verify_site', arguments: args })
  return { isError: r.isError === true, body: payload(r) }
}
const verify = async (client: Client, args: Record<string, unknown>) => {
  const r = await call(client, args)
  expect(r.isError).toBe(false)
  return r.body
}

beforeAll(async () => {
  dns = await startDnsServer()
  svc = await startService('production', { ROLE: 'api', DNS_SERVERS: dns.address })
  keyA = await svc.key('free')
  a = await connectClient(svc.mcpUrl, keyA)
  b = await connectClient(svc.mcpUrl, await svc.key('free'))
  blocked = await startService('production', { ROLE: 'api', ALLOW_PRIVATE_TARGETS: 'false' })
  aBlocked = await connectClient(blocked.mcpUrl, await blocked.key('free'))
})

afterAll(async () => {
  await a?.close()
  await b?.close()
  await aBlocked?.close()
  await svc?.stop()
  await blocked?.stop()
  await dns?.stop()
  for (const s of sites) s.stop()
})

describe('token', () => {
  test('the first call creates a token and says where to put it for all three methods, fetching nothing', async () => {
    const s = site()
    const body = await verify(a, { url: s.url, method: 'meta' })
    expect(body.token).toMatch(TOKEN_RE)
    expect(body.verified).toBe(false)
    expect(body.verifiedAt).toBeNull()
    expect(body.method).toBeNull()
    expect(body.appId).toMatch(/^app_/)
    expect(body.origin).toBe(s.origin)
    expect(body.checked).toEqual([])
    expect(body.instructions.meta.html).toBe(`<meta name="${META}" content="${body.token}">`)
    expect(body.instructions.file).toEqual({ url: s.origin + FILE, content: body.token })
    // The site is addressed by an IP: DNS verification is explained as unavailable.
    expect(body.instructions.dns.unavailable).toMatch(/host name/)
    expect(s.hits).toEqual([])
  })

  test('is one per app and account: the same for another page of the origin, another for another account or origin', async () => {
    const s = site()
    const first = await verify(a, { url: s.url })
    const again = await verify(a, { url: `${s.origin}/pricing?x=1` })
    expect(again.token).toBe(first.token)
    expect(again.appId).toBe(first.appId)
    const otherAccount = await verify(b, { url: s.url })
    expect(otherAccount.token).not.toBe(first.token)
    expect(otherAccount.appId).not.toBe(first.appId)
    const otherOrigin = await verify(a, { url: site().url })
    expect(otherOrigin.token).not.toBe(first.token)
  })

  test('gives DNS instructions for a host name', async () => {
    const body = await verify(a, { url: 'http://shop.instructions.test/' })
    expect(body.instructions.dns).toEqual({ name: '_appaudit.shop.instructions.test', type: 'TXT', value: body.token })
  })

  test.each([['ftp://example.com/'], ['not a url'], ['http://user:pw@example.com/']])('%s is invalid_url', async (url) => {
    const r = await call(a, { url })
    expect(r.isError).toBe(true)
    expect(r.body.error.code).toBe('invalid_url')
  })
})

describe('meta tag', () => {
  test('verifies when the home page carries the tag in <head>, once and for all', async () => {
    const s = site()
    const { token } = await verify(a, { url: s.url })
    s.state.head = `<meta name="description" content="x"><META NAME="${META}" CONTENT="${token}">`
    const body = await verify(a, { url: s.url, method: 'meta' })
    expect(body.verified).toBe(true)
    expect(body.method).toBe('meta')
    expect(body.checked).toEqual([{ method: 'meta', ok: true, detail: expect.stringContaining('meta tag found') }])
    expect(Date.parse(body.verifiedAt)).toBeGreaterThan(Date.now() - 60_000)

    const hitsBefore = s.hits.length
    const again = await verify(a, { url: s.url })
    expect(again).toMatchObject({ verified: true, verifiedAt: body.verifiedAt, method: 'meta', checked: [] })
    expect(s.hits.length).toBe(hitsBefore)

    const sql = svc.running.services.db.sql
    const principal = (await findPrincipalByApiKey(sql, keyA))!
    expect(await isVerified(sql, principal.account.id, s.origin)).toBe(true)
    expect(await isVerified(sql, principal.account.id, 'http://127.0.0.1:1')).toBe(false)
    // Another account has verified nothing.
    expect(payload(await b.callTool({ name: 'verify_site', arguments: { url: s.url } })).verified).toBe(false)
  })

  test('a different token, a tag in <body>, on a deeper page or behind a cross-origin redirect does not count', async () => {
    const s = site()
    const { token } = await verify(a, { url: s.url })
    const other = await verify(b, { url: s.url })
    s.state.head = `<meta name="${META}" content="${other.token}">`
    let body = await verify(a, { url: s.url, method: 'meta' })
    expect(body.verified).toBe(false)
    expect(body.checked[0]).toMatchObject({ method: 'meta', ok: false, detail: expect.stringContaining('different token') })

    s.state.head = ''
    s.state.body = `<meta name="${META}" content="${token}">`
    body = await verify(a, { url: s.url, method: 'meta' })
    expect(body.verified).toBe(false)
    expect(body.checked[0].detail).toContain('inside <head>')

    s.state.body = ''
    s.state.deepHead = `<meta name="${META}" content="${token}">`
    body = await verify(a, { url: `${s.origin}/deep/page`, method: 'meta' })
    expect(body.verified).toBe(false)

    const elsewhere = site()
    elsewhere.state.head = `<meta name="${META}" content="${token}">`
    s.state.redirectRootTo = elsewhere.url
    body = await verify(a, { url: s.url, method: 'meta' })
    expect(body.verified).toBe(false)
    expect(body.checked[0].detail).toContain('another origin')
    expect(elsewhere.hits).toEqual([])
  })
})

describe('file', () => {
  test('verifies when /.well-known/appaudit-verification.txt holds the token on a line', async () => {
    const s = site()
    const { token } = await verify(a, { url: s.url })
    s.state.file = `${token}\n`
    const body = await verify(a, { url: s.url, method: 'file' })
    expect(body).toMatchObject({ verified: true, method: 'file', checked: [{ method: 'file', ok: true }] })
    expect(s.hits).toContain(FILE)
  })

  test('a wrong token or a missing file is not verified, with the reason', async () => {
    const s = site()
    await verify(a, { url: s.url })
    let body = await verify(a, { url: s.url, method: 'file' })
    expect(body.verified).toBe(false)
    expect(body.checked[0].detail).toContain('answered 404')
    s.state.file = 'appaudit-verify=0000000000000000000000\n'
    body = await verify(a, { url: s.url, method: 'file' })
    expect(body.verified).toBe(false)
    expect(body.checked[0].detail).toContain('different token')
  })
})

describe('dns', () => {
  test('verifies from a TXT record at _appaudit.<host>, asked of the configured resolver', async () => {
    const url = 'http://shop.dns-verify.test/'
    const { token } = await verify(a, { url })
    dns.setTxt('_appaudit.shop.dns-verify.test', ['v=spf1 -all', token])
    const body = await verify(a, { url, method: 'dns' })
    expect(body).toMatchObject({ verified: true, method: 'dns', checked: [{ method: 'dns', ok: true }] })
    expect(dns.queries).toContain('_appaudit.shop.dns-verify.test TXT')
  })

  test('without a method every check runs, and the one that passes verifies', async () => {
    const url = 'http://blog.dns-verify.test/'
    const { token } = await verify(a, { url })
    dns.setTxt('_appaudit.blog.dns-verify.test', [token])
    const body = await verify(a, { url })
    expect(body.verified).toBe(true)
    expect(body.method).toBe('dns')
    expect(body.checked.map((c: { method: string; ok: boolean }) => [c.method, c.ok])).toEqual([
      ['meta', false],
      ['file', false],
      ['dns', true],
    ])
  })

  test('a wrong TXT value or no record is not verified', async () => {
    const url = 'http://wrong.dns-verify.test/'
    await verify(a, { url })
    let body = await verify(a, { url, method: 'dns' })
    expect(body.verified).toBe(false)
    expect(body.checked[0].detail).toContain('no TXT record')
    dns.setTxt('_appaudit.wrong.dns-verify.test', ['appaudit-verify=1111111111111111111111'])
    body = await verify(a, { url, method: 'dns' })
    expect(body.verified).toBe(false)
    expect(body.checked[0].detail).toContain('different token')
  })
})

describe('egress guard', () => {
  test('with private targets not allowed, a loopback site is target_blocked and nothing is fetched', async () => {
    const s = site()
    for (const url of [s.url, `http://localhost:${new URL(s.url).port}/`, `http://[::1]:${new URL(s.url).port}/`]) {
      const r = await call(aBlocked, { url })
      expect(r.isError).toBe(true)
      expect(r.body.error.code).toBe('target_blocked')
    }
    expect(s.hits).toEqual([])
  })
})
