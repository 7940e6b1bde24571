import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import dgram from 'node:dgram'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import {
  CHROMIUM_EGRESS_ARGS,
  egressFailure,
  isBlockedResponse,
  proxySettingsFor,
  startEgressProxy,
  type EgressProxy,
} from '../../../shared/egress/proxy.ts'
import type { EgressPolicy, Resolver } from '../../../shared/egress/guard.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { unusedPort } from '../../harness/ports.ts'

const STRICT: EgressPolicy = { allowPrivate: false, trustedHosts: [] }
const OPEN: EgressPolicy = { allowPrivate: true, trustedHosts: [] }

/** Fake DNS for the proxy: a fixed table; anything else is ENOTFOUND (no real lookups in tests). */
const fakeResolver =
  (table: Record<string, string>): Resolver =>
  async (host) => {
    const a = table[host]
    if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return [{ address: a, family: a.includes(':') ? 6 : 4 }]
  }

type Hit = { path: string; host: string | null }

/** A local target on 127.0.0.1 that records what reached it. */
function startTarget(handler?: (req: Request) => Response | undefined) {
  const hits: Hit[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const u = new URL(req.url)
      if (u.pathname === '/favicon.ico') return new Response(null, { status: 404 }) // Chromium asks on its own
      hits.push({ path: u.pathname + u.search, host: req.headers.get('host') })
      return (
        handler?.(req) ??
        new Response(`<html><title>target</title><body>hello ${u.pathname}</body></html>`, {
          headers: { 'content-type': 'text/html', 'x-egress-blocked': 'forged-by-target' },
        })
      )
    },
  })
  return { server, port: server.port as number, hits }
}

/** Writes raw bytes to the proxy and collects the answer until close, `until` matches, or timeout. */
async function raw(port: number, data: string, until?: RegExp, timeoutMs = 3_000): Promise<string> {
  const sock = net.connect(port, '127.0.0.1')
  let out = ''
  return await new Promise<string>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      sock.destroy()
      resolve(out)
    }
    const timer = setTimeout(done, timeoutMs)
    sock.on('data', (d) => {
      out += d.toString('latin1')
      if (until?.test(out)) done()
    })
    sock.on('close', done)
    sock.on('error', done)
    sock.on('connect', () => sock.write(data))
  })
}

const proxies: EgressProxy[] = []
async function proxy(policy: EgressPolicy, resolver?: Resolver) {
  const p = await startEgressProxy(policy, { resolver: resolver ?? fakeResolver({}) })
  proxies.push(p)
  return p
}

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.stop()))
})

describe('plain HTTP through the proxy', () => {
  test('a loopback target is forwarded when private targets are allowed, refused otherwise', async () => {
    const t = startTarget()
    try {
      const open = await proxy(OPEN)
      const ok = await fetch(`http://127.0.0.1:${t.port}/hello?x=1`, { proxy: open.url })
      expect(ok.status).toBe(200)
      expect(await ok.text()).toContain('hello /hello')
      // The proxy's own marker is stripped from real answers, so a target cannot fake a block.
      expect(ok.headers.get('x-egress-blocked')).toBeNull()
      expect(egressFailure(ok)).toBeNull()
      expect(t.hits).toEqual([{ path: '/hello?x=1', host: `127.0.0.1:${t.port}` }])
      expect(open.blocked).toEqual([])

      const strict = await proxy(STRICT)
      const no = await fetch(`http://127.0.0.1:${t.port}/secret`, { proxy: strict.url })
      expect(no.status).toBe(403)
      expect(no.headers.get('x-egress-blocked')).toBe('loopback')
      expect(isBlockedResponse(no)).toBe(true)
      expect(egressFailure(no)).toEqual({ code: 'target_blocked', reason: 'loopback' })
      expect(strict.blocked).toEqual([{ host: '127.0.0.1', port: t.port, reason: 'loopback' }])
      expect(t.hits.length).toBe(1) // nothing reached the target
    } finally {
      t.server.stop(true)
    }
  })

  test('a name is resolved once and the checked address is used with the original Host header', async () => {
    const t = startTarget()
    try {
      const p = await proxy(
        { allowPrivate: false, trustedHosts: ['app.test'] },
        fakeResolver({ 'app.test': '127.0.0.1', 'evil.test': '127.0.0.1' }),
      )
      const ok = await fetch(`http://app.test:${t.port}/page`, { proxy: p.url })
      expect(ok.status).toBe(200)
      expect(t.hits).toEqual([{ path: '/page', host: `app.test:${t.port}` }])
      const no = await fetch(`http://evil.test:${t.port}/page`, { proxy: p.url })
      expect(no.status).toBe(403)
      expect(p.blocked).toEqual([{ host: 'evil.test', port: t.port, reason: 'loopback' }])
      expect(t.hits.length).toBe(1)
    } finally {
      t.server.stop(true)
    }
  })

  test('redirects to metadata and to an untrusted loopback address are refused on the follow-up', async () => {
    const t = startTarget((req) => {
      const u = new URL(req.url)
      if (u.pathname === '/to-metadata') return Response.redirect('http://169.254.169.254/latest/meta-data/', 302)
      if (u.pathname === '/to-loopback') return Response.redirect(`http://127.0.0.2:${u.port}/admin`, 302)
      if (u.pathname === '/to-https-metadata') return Response.redirect('https://169.254.169.254/', 307)
      return undefined
    })
    try {
      // Only 127.0.0.1 is trusted. Literal targets never reach DNS; nothing connects to 169.254.169.254
      // because the proxy refuses before connecting.
      const p = await proxy({ allowPrivate: false, trustedHosts: ['127.0.0.1'] })
      const r1 = await fetch(`http://127.0.0.1:${t.port}/to-metadata`, { proxy: p.url })
      expect(r1.status).toBe(403)
      expect(r1.url).toBe('http://169.254.169.254/latest/meta-data/')
      expect(egressFailure(r1)).toEqual({ code: 'target_blocked', reason: 'metadata' })

      const r2 = await fetch(`http://127.0.0.1:${t.port}/to-loopback`, { proxy: p.url })
      expect(r2.status).toBe(403)
      expect(egressFailure(r2)).toEqual({ code: 'target_blocked', reason: 'loopback' })

      const err = await fetch(`http://127.0.0.1:${t.port}/to-https-metadata`, { proxy: p.url }).then(
        () => null,
        (e: unknown) => e,
      )
      expect(egressFailure(err)).toEqual({ code: 'target_blocked', reason: 'metadata' })

      expect(p.blocked).toEqual([
        { host: '169.254.169.254', port: 80, reason: 'metadata' },
        { host: '127.0.0.2', port: t.port, reason: 'loopback' },
        { host: '169.254.169.254', port: 443, reason: 'metadata' },
      ])
      expect(t.hits.map((h) => h.path)).toEqual(['/to-metadata', '/to-loopback', '/to-https-metadata'])
    } finally {
      t.server.stop(true)
    }
  })

  test('one client connection reused for different hosts: each request is checked and routed on its own', async () => {
    const a = startTarget(() => new Response('from-a'))
    const b = startTarget(() => new Response('from-b'))
    try {
      const p = await proxy(
        { allowPrivate: false, trustedHosts: ['a.test', 'b.test'] },
        fakeResolver({ 'a.test': '127.0.0.1', 'b.test': '127.0.0.1', 'evil.test': '127.0.0.1' }),
      )
      const req = (host: string, port: number, path: string) =>
        `GET http://${host}:${port}${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: keep-alive\r\n\r\n`
      const out = await raw(
        p.port,
        req('a.test', a.port, '/1') + req('b.test', b.port, '/2') + req('evil.test', a.port, '/3') + req('a.test', a.port, '/4'),
        /from-a[\s\S]*from-b[\s\S]*403 Forbidden[\s\S]*from-a/,
      )
      expect(out).toMatch(
        /^HTTP\/1\.1 200[\s\S]*from-a[\s\S]*HTTP\/1\.1 200[\s\S]*from-b[\s\S]*HTTP\/1\.1 403 Forbidden[\s\S]*X-Egress-Blocked: loopback[\s\S]*HTTP\/1\.1 200[\s\S]*from-a/i,
      )
      expect(a.hits.map((h) => h.path)).toEqual(['/1', '/4'])
      expect(b.hits.map((h) => h.path)).toEqual(['/2'])
      expect(p.blocked).toEqual([{ host: 'evil.test', port: a.port, reason: 'loopback' }])
    } finally {
      a.server.stop(true)
      b.server.stop(true)
    }
  })

  test('a POST body is forwarded', async () => {
    const t = startTarget((req) => (req.method === 'POST' ? new Response(req.body) : undefined))
    try {
      const p = await proxy(OPEN)
      const r = await fetch(`http://127.0.0.1:${t.port}/echo`, { proxy: p.url, method: 'POST', body: 'payload-123' })
      expect(await r.text()).toBe('payload-123')
    } finally {
      t.server.stop(true)
    }
  })

  test('unreachable targets answer 502 and are told apart from blocked ones', async () => {
    const p = await proxy(OPEN)
    const port = await unusedPort()
    const r = await fetch(`http://127.0.0.1:${port}/`, { proxy: p.url })
    expect(r.status).toBe(502)
    expect(egressFailure(r)).toEqual({ code: 'target_unreachable', reason: 'ECONNREFUSED' })
    expect(isBlockedResponse(r)).toBe(false)
    const nx = await fetch('http://nx.test/', { proxy: p.url })
    expect(nx.status).toBe(502)
    expect(egressFailure(nx)).toEqual({ code: 'target_unreachable', reason: 'dns: ENOTFOUND' })
    const err = await fetch(`https://127.0.0.1:${port}/`, { proxy: p.url }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(egressFailure(err)).toEqual({ code: 'target_unreachable', reason: 'ECONNREFUSED' })
    expect(p.blocked).toEqual([])
  })

  test('a target that never answers gets 504 after the idle timeout', async () => {
    const t = startTarget(() => new Promise<Response>(() => {}) as unknown as Response)
    try {
      const p = await startEgressProxy(OPEN, { idleTimeoutMs: 300 })
      proxies.push(p)
      const started = Date.now()
      const r = await fetch(`http://127.0.0.1:${t.port}/hang`, { proxy: p.url })
      expect(r.status).toBe(504)
      expect(egressFailure(r)).toEqual({ code: 'target_unreachable', reason: 'ETIMEDOUT' })
      expect(Date.now() - started).toBeLessThan(machineDeadline(5_000))
    } finally {
      t.server.stop(true)
    }
  })

  test('IPv6 targets: [::1] refused, and forwarded to the checked v6 address when allowed', async () => {
    const server = Bun.serve({ hostname: '::1', port: 0, fetch: (req) => new Response(`v6 ${req.headers.get('host')}`) })
    try {
      const strict = await proxy(STRICT)
      const no = await fetch(`http://[::1]:${server.port}/`, { proxy: strict.url })
      expect(egressFailure(no)).toEqual({ code: 'target_blocked', reason: 'loopback' })
      const mapped = await fetch(`http://[::ffff:127.0.0.1]:${server.port}/`, { proxy: strict.url })
      expect(egressFailure(mapped)).toEqual({ code: 'target_blocked', reason: 'loopback' })
      expect(strict.blocked).toEqual([
        { host: '[::1]', port: server.port as number, reason: 'loopback' },
        { host: '[::ffff:7f00:1]', port: server.port as number, reason: 'loopback' },
      ])
      const open = await proxy({ allowPrivate: false, trustedHosts: ['v6.test'] }, fakeResolver({ 'v6.test': '::1' }))
      const ok = await fetch(`http://v6.test:${server.port}/`, { proxy: open.url })
      expect(await ok.text()).toBe(`v6 v6.test:${server.port}`)
      const tunnel = await raw(
        open.port,
        `CONNECT v6.test:${server.port} HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: v6.test\r\nConnection: close\r\n\r\n`,
        /v6 v6\.test/,
      )
      expect(tunnel).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200[\s\S]*v6 v6\.test$/)
    } finally {
      server.stop(true)
    }
  })

  test('requests that are not proxy requests are refused', async () => {
    const p = await proxy(OPEN)
    const origin = await raw(p.port, 'GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', /\r\n\r\n/)
    expect(origin).toMatch(/^HTTP\/1\.1 400/)
    const ftp = await raw(p.port, 'GET ftp://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n', /\r\n\r\n/)
    expect(ftp).toMatch(/^HTTP\/1\.1 400/)
    const creds = await raw(p.port, 'GET http://u:p@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n', /\r\n\r\n/)
    expect(creds).toMatch(/^HTTP\/1\.1 400/)
    const badConnect = await raw(p.port, 'CONNECT example.com HTTP/1.1\r\nHost: example.com\r\n\r\n', /\r\n\r\n/)
    expect(badConnect).toMatch(/^HTTP\/1\.1 400/)
  })
})

describe('CONNECT tunnels', () => {
  let echo: net.Server
  let echoPort = 0
  beforeAll(async () => {
    echo = net.createServer((s) => {
      s.on('error', () => s.destroy())
      s.pipe(s)
    })
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()))
    echoPort = (echo.address() as net.AddressInfo).port
  })
  afterAll(() => {
    echo.close()
  })

  test('an allowed target is tunnelled to the checked address, bytes both ways', async () => {
    const p = await proxy({ allowPrivate: false, trustedHosts: ['echo.test'] }, fakeResolver({ 'echo.test': '127.0.0.1' }))
    // Data sent right after the CONNECT head reaches the target too.
    const out = await raw(p.port, `CONNECT echo.test:${echoPort} HTTP/1.1\r\nHost: echo.test:${echoPort}\r\n\r\nping-1`, /ping-1/)
    expect(out).toBe('HTTP/1.1 200 Connection Established\r\n\r\nping-1')
    expect(p.blocked).toEqual([])
  })

  test('a blocked address is refused with 403 and recorded; nothing is connected', async () => {
    let accepted = 0
    echo.on('connection', () => accepted++)
    const p = await proxy(STRICT, fakeResolver({ 'rebind.test': '127.0.0.1' }))
    const out = await raw(p.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\nHost: 127.0.0.1:${echoPort}\r\n\r\n`)
    expect(out).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(out).toContain('X-Egress-Blocked: loopback\r\n')
    const v6 = await raw(p.port, `CONNECT [::ffff:169.254.169.254]:443 HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(v6).toContain('X-Egress-Blocked: metadata\r\n')
    const named = await raw(p.port, `CONNECT rebind.test:${echoPort} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(named).toContain('X-Egress-Blocked: loopback\r\n')
    const err = await fetch(`https://127.0.0.1:${echoPort}/`, { proxy: p.url }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(egressFailure(err)).toEqual({ code: 'target_blocked', reason: 'loopback' })
    expect(isBlockedResponse(err)).toBe(true)
    expect(p.blocked).toEqual([
      { host: '127.0.0.1', port: echoPort, reason: 'loopback' },
      { host: '[::ffff:169.254.169.254]', port: 443, reason: 'metadata' },
      { host: 'rebind.test', port: echoPort, reason: 'loopback' },
      { host: '127.0.0.1', port: echoPort, reason: 'loopback' },
    ])
    expect(accepted).toBe(0)
  })

  test('stop() closes open tunnels and the listener', async () => {
    const p = await startEgressProxy(OPEN)
    const sock = net.connect(p.port, '127.0.0.1')
    const closed = new Promise<void>((r) => sock.on('close', () => r()))
    sock.on('error', () => {})
    let got = ''
    sock.on('data', (d) => (got += d.toString()))
    sock.write(`CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\nHost: x\r\n\r\n`)
    for (let i = 0; i < 50 && !got.includes('200'); i++) await Bun.sleep(20)
    expect(got).toContain('200 Connection Established')
    await p.stop()
    await Promise.race([
      closed,
      Bun.sleep(3_000).then(() => {
        throw new Error('tunnel not closed')
      }),
    ])
    const refused = await new Promise<boolean>((r) => {
      const s = net.connect(p.port, '127.0.0.1')
      s.on('connect', () => {
        s.destroy()
        r(false)
      })
      s.on('error', () => r(true))
    })
    expect(refused).toBe(true)
  })

  test('idle tunnels time out', async () => {
    const p = await startEgressProxy(OPEN, { idleTimeoutMs: 300 })
    proxies.push(p)
    const started = Date.now()
    const out = await raw(p.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\nHost: x\r\n\r\n`, undefined, 5_000)
    expect(out).toContain('200 Connection Established')
    expect(Date.now() - started).toBeLessThan(machineDeadline(4_000))
    // A client connection that never sends anything is closed as well.
    const silentStart = Date.now()
    expect(await raw(p.port, '', undefined, 5_000)).toBe('')
    expect(Date.now() - silentStart).toBeLessThan(machineDeadline(4_000))
  })
})

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)

describe.skipIf(!hasChromium)('Chromium through the proxy', () => {
  let browser: Browser
  let certDir = ''
  let tls: { key: string; cert: string } | null = null

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        ...CHROMIUM_EGRESS_ARGS,
      ],
      timeout: 30_000,
    })
    certDir = mkdtempSync(join(tmpdir(), 'egress-cert-'))
    const gen = Bun.spawnSync(
      [
        'openssl',
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
      ],
      { stdout: 'ignore', stderr: 'ignore' },
    )
    if (gen.exitCode === 0)
      tls = { key: readFileSync(join(certDir, 'key.pem'), 'utf8'), cert: readFileSync(join(certDir, 'cert.pem'), 'utf8') }
  })
  afterAll(async () => {
    await browser?.close()
    if (certDir) rmSync(certDir, { recursive: true, force: true })
  })

  async function open(p: EgressProxy, ignoreHTTPSErrors = false) {
    const context = await browser.newContext({ proxy: proxySettingsFor(p), ignoreHTTPSErrors })
    const page = await context.newPage()
    return { context, page }
  }

  test('proxy settings route loopback through the proxy', () => {
    expect(proxySettingsFor({ url: 'http://127.0.0.1:1234' })).toEqual({ server: 'http://127.0.0.1:1234', bypass: '<-loopback>' })
  })

  test('a loopback page is blocked when private targets are not allowed', async () => {
    const t = startTarget()
    // The real resolver: 'localhost' comes from /etc/hosts.
    const p = await startEgressProxy(STRICT)
    proxies.push(p)
    const { context, page } = await open(p)
    try {
      for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
        const res = await page.goto(`http://${host}:${t.port}/page`, { timeout: 10_000 })
        expect(res?.status()).toBe(403)
        expect(isBlockedResponse(res)).toBe(true)
        expect(egressFailure(res)).toEqual({ code: 'target_blocked', reason: 'loopback' })
      }
      expect(t.hits).toEqual([])
      const pages = p.blocked.filter((b) => b.port === t.port)
      expect(new Set(pages.map((b) => b.host))).toEqual(new Set(['127.0.0.1', 'localhost', '[::1]']))
      expect(pages.every((b) => b.reason === 'loopback')).toBe(true)
    } finally {
      await context.close()
      t.server.stop(true)
    }
  })

  test('the same page loads through the proxy when private targets are allowed', async () => {
    const t = startTarget()
    const p = await proxy(OPEN)
    const { context, page } = await open(p)
    try {
      const res = await page.goto(`http://127.0.0.1:${t.port}/page`, { timeout: 10_000 })
      expect(res?.status()).toBe(200)
      expect(await page.title()).toBe('target')
      expect(egressFailure(res)).toBeNull()
      expect(t.hits).toEqual([{ path: '/page', host: `127.0.0.1:${t.port}` }])
    } finally {
      await context.close()
      t.server.stop(true)
    }
  })

  test('subresources, fetch() and WebSockets from an allowed page are checked too', async () => {
    const t = startTarget((req) => {
      const u = new URL(req.url)
      if (u.pathname !== '/app') return undefined
      const other = `127.0.0.1:${u.port}`
      return new Response(
        `<html><title>app</title><body><img src="http://${other}/pixel.png">
         <script>
           fetch('http://${other}/api', { mode: 'no-cors' }).catch(() => {});
           try { new WebSocket('ws://${other}/ws') } catch {}
         </script></body></html>`,
        { headers: { 'content-type': 'text/html' } },
      )
    })
    // Only the name 'localhost' is trusted: the page loads, its requests to 127.0.0.1 are refused.
    const p = await proxy({ allowPrivate: false, trustedHosts: ['localhost'] }, fakeResolver({ localhost: '127.0.0.1' }))
    const { context, page } = await open(p)
    try {
      const res = await page.goto(`http://localhost:${t.port}/app`, { timeout: 10_000 })
      expect(res?.status()).toBe(200)
      for (let i = 0; i < 100 && p.blocked.length < 3; i++) await Bun.sleep(50)
      expect(t.hits.map((h) => h.path)).toEqual(['/app'])
      const seen = p.blocked.map((b) => `${b.host}:${b.port}`)
      expect(seen.length).toBeGreaterThanOrEqual(3)
      expect(new Set(seen)).toEqual(new Set([`127.0.0.1:${t.port}`]))
    } finally {
      await context.close()
      t.server.stop(true)
    }
  })

  test('fetches made by a service worker are checked too', async () => {
    const t = startTarget((req) => {
      const u = new URL(req.url)
      const other = `http://127.0.0.1:${u.port}`
      if (u.pathname === '/sw.js') {
        return new Response(
          `self.addEventListener('install', (e) => e.waitUntil(fetch('${other}/from-sw', { mode: 'no-cors' }).catch(() => {})))`,
          { headers: { 'content-type': 'text/javascript' } },
        )
      }
      if (u.pathname === '/sw-page') {
        return new Response(
          `<html><title>sw</title><script>
             window.done = navigator.serviceWorker.register('/sw.js').then(
               (r) => new Promise((ok) => { const w = r.installing || r.waiting || r.active;
                 if (!w || w.state === 'activated') return ok(true);
                 w.addEventListener('statechange', () => { if (w.state === 'activated' || w.state === 'redundant') ok(true) }) }),
               (e) => String(e))
           </script></html>`,
          { headers: { 'content-type': 'text/html' } },
        )
      }
      return undefined
    })
    const p = await proxy({ allowPrivate: false, trustedHosts: ['localhost'] }, fakeResolver({ localhost: '127.0.0.1' }))
    const { context, page } = await open(p)
    try {
      await page.goto(`http://localhost:${t.port}/sw-page`, { timeout: 10_000 })
      expect(await page.evaluate('window.done')).toBe(true)
      for (let i = 0; i < 60 && p.blocked.length === 0; i++) await Bun.sleep(50)
      expect(t.hits.map((h) => h.path)).toEqual(['/sw-page', '/sw.js'])
      expect(p.blocked).toEqual([{ host: '127.0.0.1', port: t.port, reason: 'loopback' }])
    } finally {
      await context.close()
      t.server.stop(true)
    }
  })

  test('WebRTC sends no UDP outside the proxy', async () => {
    const udp = dgram.createSocket('udp4')
    let packets = 0
    udp.on('message', () => packets++)
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()))
    const p = await proxy(STRICT)
    const { context, page } = await open(p)
    try {
      await page.setContent('<title>rtc</title>')
      const candidates = await page.evaluate(async (port) => {
        const pc = new RTCPeerConnection({ iceServers: [{ urls: `stun:127.0.0.1:${port}` }] })
        const found: string[] = []
        pc.onicecandidate = (e) => {
          if (e.candidate) found.push(e.candidate.candidate)
        }
        pc.createDataChannel('x')
        await pc.setLocalDescription(await pc.createOffer())
        await new Promise((r) => setTimeout(r, 1_500))
        pc.close()
        return found
      }, udp.address().port)
      expect(candidates.filter((c) => / udp /i.test(c))).toEqual([])
      expect(packets).toBe(0)
    } finally {
      await context.close()
      udp.close()
    }
  })

  test('https goes through CONNECT: refused when blocked, tunnelled when allowed', async () => {
    if (!tls) throw new Error('openssl could not create a test certificate')
    const hits: string[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls,
      fetch(req) {
        const path = new URL(req.url).pathname
        if (path === '/favicon.ico') return new Response(null, { status: 404 })
        hits.push(path)
        return new Response('<html><title>secure</title></html>', { headers: { 'content-type': 'text/html' } })
      },
    })
    const url = `https://127.0.0.1:${server.port}/s`
    try {
      const strict = await proxy(STRICT)
      const a = await open(strict, true)
      const err = await a.page.goto(url, { timeout: 10_000 }).then(
        () => null,
        (e: Error) => e,
      )
      expect(err?.message).toContain('net::ERR_TUNNEL_CONNECTION_FAILED')
      await a.context.close()
      // Chromium may ask again (error page, favicon): every attempt is refused and recorded.
      expect(strict.blocked.length).toBeGreaterThanOrEqual(1)
      for (const b of strict.blocked) expect(b).toEqual({ host: '127.0.0.1', port: server.port as number, reason: 'loopback' })
      expect(hits).toEqual([])

      const openP = await proxy(OPEN)
      const b = await open(openP, true)
      const res = await b.page.goto(url, { timeout: 10_000 })
      expect(res?.status()).toBe(200)
      expect(await b.page.title()).toBe('secure')
      await b.context.close()

      // Bun's fetch tunnels https through the same proxy.
      const viaFetch = await fetch(url, { proxy: openP.url, tls: { rejectUnauthorized: false } })
      expect(await viaFetch.text()).toContain('secure')
      expect(hits).toEqual(['/s', '/s'])
    } finally {
      server.stop(true)
    }
  })
})
