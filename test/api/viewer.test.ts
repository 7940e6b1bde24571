// The live viewer's links and socket: tokens (hash only, bound to one audit, dead once the crawl ends),
// the page's headers, the upgrade's Host/Origin rules, and the socket protocol, in both modes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { createClient } from '@redis/client'
import { sha256Hex } from '../../shared/lib/ids.ts'
import { createMemoryInfra } from '../../shared/infra/memory.ts'
import { createRedisInfra } from '../../shared/infra/redis.ts'
import type { Infra } from '../../shared/infra/types.ts'
import {
  CLOSE_ENDED,
  CLOSE_POLICY,
  createViewerToken,
  endViewer,
  verifyViewerToken,
  viewerChannels,
  viewerKeys,
  viewerLink,
  viewerTokenState,
} from '../../shared/protocol/viewer.ts'
import { REDIS_URL, startService, type Mode, type TestService } from '../harness/service.ts'
import { until, within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const TUNING = { claimIdleMs: 60_000, heartbeatMs: 10_000 }
const auditId = () => `aud_${randomBytes(8).toString('hex')}`

const impls: Array<[string, () => Promise<{ infra: Infra; prefix: string }>]> = [
  ['memory', async () => ({ infra: createMemoryInfra(TUNING), prefix: '' })],
  [
    'redis',
    async () => {
      const prefix = `test:${randomBytes(4).toString('hex')}:`
      return { infra: await createRedisInfra(REDIS_URL, TUNING, prefix), prefix }
    },
  ],
]

describe.each(impls)('viewer tokens (%s store)', (name, make) => {
  let infra: Infra
  let prefix: string
  beforeAll(async () => ({ infra, prefix } = await make()))
  afterAll(async () => infra.close())

  test('a token opens its own audit and no other', async () => {
    const a = auditId()
    const b = auditId()
    const token = await createViewerToken(infra.kv, a, 60)
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await verifyViewerToken(infra.kv, a, token)).toBe(true)
    expect(await verifyViewerToken(infra.kv, b, token)).toBe(false)
    expect(await viewerTokenState(infra.kv, b, token)).toBe('invalid')
  })

  test('stores only the SHA-256 of the token, bound to the audit', async () => {
    const a = auditId()
    const token = await createViewerToken(infra.kv, a, 60)
    expect(await infra.kv.get(viewerKeys.token(sha256Hex(token)))).toBe(a)
    expect(await infra.kv.get(viewerKeys.token(token))).toBeNull()
    if (name === 'redis') {
      const client = createClient({ url: REDIS_URL })
      await client.connect()
      try {
        const keys = await client.keys(`${prefix}*`)
        for (const k of keys) {
          expect(k).not.toContain(token)
          if ((await client.type(k)) === 'string') expect(String(await client.get(k))).not.toContain(token)
        }
      } finally {
        await client.quit()
      }
    }
  })

  test('refuses wrong, empty, truncated and oversized tokens', async () => {
    const a = auditId()
    const token = await createViewerToken(infra.kv, a, 60)
    for (const bad of ['', 'x', token.slice(0, -1), `${token}A`, 'A'.repeat(5000), randomBytes(32).toString('base64url')]) {
      expect(await verifyViewerToken(infra.kv, a, bad)).toBe(false)
    }
    expect(await verifyViewerToken(infra.kv, `../${a}`, token)).toBe(false)
  })

  test('a token expires with its time to live', async () => {
    const a = auditId()
    const token = await createViewerToken(infra.kv, a, 1)
    expect(await verifyViewerToken(infra.kv, a, token)).toBe(true)
    await Bun.sleep(2_100)
    expect(await viewerTokenState(infra.kv, a, token)).toBe('invalid')
  })

  test('ending the viewer kills every token of the audit and says ended', async () => {
    const a = auditId()
    const t1 = await createViewerToken(infra.kv, a, 60)
    const t2 = await createViewerToken(infra.kv, a, 60)
    const other = auditId()
    const t3 = await createViewerToken(infra.kv, other, 60)
    const control: string[] = []
    const unsub = await infra.pubsub.subscribe(viewerChannels.control(a), (m) => control.push(m))
    await endViewer(infra.pubsub, infra.kv, a)
    expect(await viewerTokenState(infra.kv, a, t1)).toBe('ended')
    expect(await viewerTokenState(infra.kv, a, t2)).toBe('ended')
    expect(await infra.kv.get(viewerKeys.token(sha256Hex(t1)))).toBeNull()
    expect(await infra.kv.get(viewerKeys.token(sha256Hex(t2)))).toBeNull()
    expect(await verifyViewerToken(infra.kv, other, t3)).toBe(true)
    for (let i = 0; i < 50 && !control.length; i++) await Bun.sleep(20)
    expect(control).toEqual(['ended'])
    await unsub()
  })

  test('a link is the base URL, the audit path and the token in the fragment', () => {
    expect(viewerLink('https://www.example.com', 'aud_1', 'tok')).toBe('https://www.example.com/viewer/aud_1#tok')
  })
})

/** A client's text frame (RFC 6455: FIN, opcode 1, masked), for a short payload. */
function maskedText(text: string): Uint8Array {
  const payload = Buffer.from(text)
  if (payload.length > 125) throw new Error('short payloads only')
  const mask = randomBytes(4)
  const out = Buffer.alloc(2 + 4 + payload.length)
  out[0] = 0x81
  out[1] = 0x80 | payload.length
  mask.copy(out, 2)
  for (let i = 0; i < payload.length; i++) out[6 + i] = payload[i]! ^ mask[i % 4]!
  return out
}

/** A WebSocket client that records what happens; Bun's client can set Origin. */
function openSocket(url: string, origin: string | null) {
  const ws = new WebSocket(url, origin ? ({ headers: { origin } } as unknown as string[]) : undefined)
  const messages: string[] = []
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = (ev) => resolve({ code: ev.code, reason: ev.reason })
  })
  const opened = new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error('socket failed'))
  })
  ws.onmessage = (ev) => messages.push(String(ev.data))
  return { ws, messages, closed, opened }
}

describe.each(['production', 'embedded'] as Mode[])('viewer over HTTP (%s)', (mode) => {
  let svc: TestService
  let wsBase: string
  beforeAll(async () => {
    // ROLE=api: the socket side needs no browser (the real-browser tests run the embedded default whole).
    svc = await startService(mode, { ROLE: 'api' })
    wsBase = svc.url.replace(/^http/, 'ws')
  }, machineDeadline(120_000))
  afterAll(async () => svc?.stop(), 60_000)
  const infra = () => svc.running.services.infra

  test('serves a self-contained page that cannot be framed, with a strict CSP and no CORS', async () => {
    const res = await fetch(`${svc.url}/viewer/aud_page`, { headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const html = await res.text()
    expect(html).not.toMatch(/(src|href)="https?:\/\/(?!.*llms\.txt)/)
    expect(html).toContain('location.hash')
  })

  test('refuses the upgrade from a foreign Origin, without an Origin, and with a foreign Host', async () => {
    const a = auditId()
    const headers = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': randomBytes(16).toString('base64'),
    }
    const evil = await fetch(`${svc.url}/viewer/${a}/ws`, { headers: { ...headers, origin: 'https://evil.example' } })
    expect(evil.status).toBe(403)
    const none = await fetch(`${svc.url}/viewer/${a}/ws`, { headers })
    expect(none.status).toBe(403)
    const rebinding = await fetch(`${svc.url}/viewer/${a}/ws`, {
      headers: { ...headers, host: 'attacker.example', origin: 'http://attacker.example' },
    })
    expect(rebinding.status).toBe(403)
    const plain = await fetch(`${svc.url}/viewer/${a}/ws`, { headers: { origin: svc.url } })
    expect(plain.status).toBe(426)
  })

  test('a bad token closes with a policy violation and "link not valid"', async () => {
    const a = auditId()
    await createViewerToken(infra().kv, a, 60)
    const s = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    await within(s.opened, 5_000)
    s.ws.send(randomBytes(32).toString('base64url'))
    const c = await within(s.closed, 5_000)
    expect(c.code).toBe(CLOSE_POLICY)
    expect(c.reason).toContain('not valid')
    expect(s.messages).toEqual([])
  })

  test('a token for another audit is refused', async () => {
    const a = auditId()
    const token = await createViewerToken(infra().kv, auditId(), 60)
    const s = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    await within(s.opened, 5_000)
    s.ws.send(token)
    expect((await within(s.closed, 5_000)).code).toBe(CLOSE_POLICY)
  })

  test('relays frames while open, ignores anything the client sends after the token, closes when the crawl ends', async () => {
    const a = auditId()
    const token = await createViewerToken(infra().kv, a, 60)
    const s = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    await within(s.opened, 5_000)
    s.ws.send(token)
    await until(() => s.messages.length > 0, 5_000, 'ready message', { rethrow: true, everyMs: 25 })
    expect(JSON.parse(s.messages[0]!)).toMatchObject({ type: 'ready', auditId: a })
    // While the socket is open, the crawler is told someone watches.
    expect(await infra().kv.get(viewerKeys.watching(a))).toBe('1')
    s.ws.send(token)
    s.ws.send('{"type":"navigate","url":"https://evil.example"}')
    const frame = JSON.stringify({ type: 'frame', url: 'http://site/', data: 'AAAA', ts: 1 })
    await infra().pubsub.publish(viewerChannels.frames(a), frame)
    await until(() => s.messages.length >= 2, 5_000, 'relayed frame', { rethrow: true, everyMs: 25 })
    expect(s.messages[1]).toBe(frame)
    await endViewer(infra().pubsub, infra().kv, a)
    const c = await within(s.closed, 5_000)
    expect(c.code).toBe(CLOSE_ENDED)
    expect(c.reason).toBe('This crawl has ended')
    // A fresh open of the same link after the end: ended, never frames.
    const again = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    await within(again.opened, 5_000)
    again.ws.send(token)
    expect((await within(again.closed, 5_000)).code).toBe(CLOSE_ENDED)
    expect(again.messages).toEqual([])
  })

  test('a viewer that opens gets the progress and the latest frame at once; it may only choose a lane or lighter frames', async () => {
    const a = auditId()
    const token = await createViewerToken(infra().kv, a, 60)
    const progress = JSON.stringify({ type: 'progress', state: 'crawling', pagesScanned: 3, pagesFailed: 0, pagesDiscovered: 9 })
    const latest = JSON.stringify({ type: 'frame', url: 'http://site/3', data: 'AAAA', ts: 1, lane: 1, lanes: 2, seq: 7 })
    await infra().kv.set(viewerKeys.progress(a), progress, 60)
    await infra().kv.set(viewerKeys.latest(a), latest, 60)
    const controls: string[] = []
    const unsub = await infra().pubsub.subscribe(viewerChannels.control(a), (m) => controls.push(m))
    const s = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    await within(s.opened, 5_000)
    s.ws.send(token)
    await until(() => s.messages.length >= 3, 5_000, 'ready, progress and frame', { rethrow: true, everyMs: 25 })
    expect(JSON.parse(s.messages[0]!)).toMatchObject({ type: 'ready', auditId: a })
    expect(s.messages.slice(1, 3)).toEqual([progress, latest])
    // Progress published by the crawl is relayed like frames.
    await infra().pubsub.publish(viewerChannels.frames(a), progress.replace('"pagesScanned":3', '"pagesScanned":4'))
    await until(() => s.messages.length >= 4, 5_000, 'relayed progress', { rethrow: true, everyMs: 25 })
    expect(JSON.parse(s.messages[3]!).pagesScanned).toBe(4)

    // What a viewer may ask reaches the crawl; anything else, and a flood, does not.
    const gap = () => Bun.sleep(300)
    for (const m of ['focus:1', 'quality:low', 'focus:auto']) {
      s.ws.send(m)
      await gap()
    }
    for (const m of ['ended', 'watch', 'unwatch', 'focus:99', 'focus:-1', 'quality:max', '{"type":"navigate"}']) {
      s.ws.send(m)
      await gap()
    }
    for (let i = 0; i < 20; i++) s.ws.send('focus:0')
    await Bun.sleep(500)
    const asked = controls.filter((c) => c !== 'watch' && c !== 'unwatch')
    expect(asked.slice(0, 3)).toEqual(['focus:1', 'quality:low', 'focus:auto'])
    // The burst of 20: one got through.
    expect(asked.slice(3)).toEqual(['focus:0'])
    // An oversized message closes the socket (1009).
    s.ws.send('x'.repeat(2_000))
    expect((await within(s.closed, 5_000)).code).toBe(1009)
    await unsub()
  })

  test('a viewer on a slow link has frames dropped, and the crawl is asked for lighter frames', async () => {
    const a = auditId()
    const token = await createViewerToken(infra().kv, a, 60)
    const controls: string[] = []
    const unsub = await infra().pubsub.subscribe(viewerChannels.control(a), (m) => controls.push(m))
    // A viewer that never reads: a WebSocket spoken by hand on a TCP socket that is paused after the token.
    const { host, port } = new URL(svc.url)
    let opened = false
    const socket = await Bun.connect({
      hostname: host.split(':')[0]!,
      port: Number(port),
      socket: {
        data(sock, data) {
          if (!opened && Buffer.from(data).toString('latin1').startsWith('HTTP/1.1 101')) {
            opened = true
            sock.write(maskedText(token))
            // From now on the client reads nothing: what the server sends piles up.
            sock.pause()
          }
        },
      },
    })
    socket.write(
      `GET /viewer/${a}/ws HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${svc.url}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`,
    )
    await until(() => opened, 5_000, 'the upgrade')
    await until(async () => (await infra().kv.get(viewerKeys.watching(a))) === '1', 5_000, 'the viewer admitted')
    // Frames of 200 KB, far more than the socket and the server's buffer take.
    const frame = JSON.stringify({ type: 'frame', url: 'http://site/', data: 'A'.repeat(200_000), ts: 1, lane: 0, lanes: 1, seq: 1 })
    for (let i = 0; i < 200 && !controls.includes('quality:low'); i++) {
      await infra().pubsub.publish(viewerChannels.frames(a), frame)
      await Bun.sleep(10)
    }
    await until(() => controls.includes('quality:low'), 10_000, 'the request for lighter frames')
    socket.end()
    await unsub()
  }, 30_000)

  test('the watching mark goes away with the last viewer', async () => {
    const a = auditId()
    const token = await createViewerToken(infra().kv, a, 60)
    const control: string[] = []
    const unsub = await infra().pubsub.subscribe(viewerChannels.control(a), (m) => control.push(m))
    const s1 = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    const s2 = openSocket(`${wsBase}/viewer/${a}/ws`, svc.url)
    await within(Promise.all([s1.opened, s2.opened]), 5_000)
    s1.ws.send(token)
    s2.ws.send(token)
    await until(() => s1.messages.length > 0 && s2.messages.length > 0, 5_000, 'both ready', { rethrow: true, everyMs: 25 })
    s1.ws.close()
    await within(s1.closed, 5_000)
    await Bun.sleep(200)
    expect(await infra().kv.get(viewerKeys.watching(a))).toBe('1')
    s2.ws.close()
    await within(s2.closed, 5_000)
    await until(async () => (await infra().kv.get(viewerKeys.watching(a))) === null, 5_000, 'watching key removed', {
      rethrow: true,
      everyMs: 25,
    })
    await until(() => control.includes('unwatch'), 5_000, 'unwatch published', { rethrow: true, everyMs: 25 })
    await unsub()
  })

  test('a socket that never sends its token is closed', async () => {
    const s = openSocket(`${wsBase}/viewer/${auditId()}/ws`, svc.url)
    await within(s.opened, 5_000)
    const c = await within(s.closed, 15_000)
    expect(c.code).toBe(CLOSE_POLICY)
  }, 20_000)
})
