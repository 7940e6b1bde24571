// A local forward proxy that every outbound connection of the scanner goes through: Chromium (as its
// proxy server) and plain-HTTP probes (fetch's `proxy` option). For each request it resolves the
// target once with the egress guard, refuses blocked addresses, and connects to the checked address.
// Redirects are re-checked for free: every hop is a new request through the proxy.
import http from 'node:http'
import net from 'node:net'
import type { Duplex } from 'node:stream'
import { parseTargetUrl, resolveTarget, type EgressPolicy, type ResolvedAddress, type Resolver } from './guard.ts'

/** Header the proxy sets on the answers it makes itself when it refuses a target. */
export const BLOCKED_HEADER = 'X-Egress-Blocked'
/** Header the proxy sets on 502/504 answers it makes itself when the target did not answer. */
export const UNREACHABLE_HEADER = 'X-Egress-Unreachable'

export type BlockedAttempt = { host: string; port: number; reason: string }

export type EgressProxyOptions = {
  resolver?: Resolver
  /** A client or upstream socket idle this long is closed. Default 30 s. */
  idleTimeoutMs?: number
  /** Timeout for one TCP connect to a checked address. Default 10 s. */
  connectTimeoutMs?: number
  /** Most recent blocked attempts kept in `blocked` (older ones are dropped). Default 10 000. */
  maxRecorded?: number
  /** Called for every blocked attempt. */
  onBlocked?: (attempt: BlockedAttempt) => void
}

export type EgressProxy = {
  /** http://127.0.0.1:PORT */
  url: string
  port: number
  blocked: BlockedAttempt[]
  stop(): Promise<void>
}

// Hop-by-hop headers (RFC 9110 7.6.1) plus the proxy's own markers, which an upstream may not forge.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  BLOCKED_HEADER.toLowerCase(),
  UNREACHABLE_HEADER.toLowerCase(),
])

/** Resolved addresses tried in turn when one does not answer (bounds the wait to this many connect timeouts). */
const MAX_ADDRESSES_TRIED = 3

const safeHeaderValue = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 200)

function filterHeaders(raw: string[], drop: Set<string>): Record<string, string | string[]> {
  const connectionListed = new Set<string>()
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') {
      for (const t of raw[i + 1]!.split(',')) connectionListed.add(t.trim().toLowerCase())
    }
  }
  const out: Record<string, string | string[]> = {}
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    const key = name.toLowerCase()
    if (HOP_BY_HOP.has(key) || drop.has(key) || connectionListed.has(key)) continue
    const prev = out[key]
    const value = raw[i + 1]!
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
  }
  return out
}

/** Parses a CONNECT authority "host:port" / "[v6]:port". */
function parseAuthority(s: string): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:/?#@[\]\\]+):(\d{1,5})$/.exec(s)
  if (!m) return null
  const port = Number(m[2])
  if (port < 1 || port > 65535) return null
  return { host: m[1]!, port }
}

/** Connects to the first checked address that answers; never resolves a name. */
function connectChecked(addresses: ResolvedAddress[], port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let i = 0
    let lastError: Error = new Error('no address')
    const next = () => {
      const a = addresses[i++]
      if (!a) return reject(lastError)
      const sock = net.connect({ host: a.address, port, family: a.family })
      const timer = setTimeout(() => {
        lastError = Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })
        sock.destroy()
        next()
      }, timeoutMs)
      sock.once('connect', () => {
        clearTimeout(timer)
        sock.removeAllListeners('error')
        resolve(sock)
      })
      sock.once('error', (e) => {
        clearTimeout(timer)
        lastError = e
        sock.destroy()
        next()
      })
    }
    next()
  })
}

const errCode = (e: unknown) => {
  const c = (e as { code?: unknown })?.code
  return typeof c === 'string' ? c : 'connect failed'
}

/** Starts the proxy on 127.0.0.1, port 0. */
export async function startEgressProxy(policy: EgressPolicy, opts: EgressProxyOptions = {}): Promise<EgressProxy> {
  const resolver = opts.resolver
  const idleMs = opts.idleTimeoutMs ?? 30_000
  const connectMs = opts.connectTimeoutMs ?? 10_000
  const maxRecorded = opts.maxRecorded ?? 10_000
  const blocked: BlockedAttempt[] = []
  const sockets = new Set<Duplex>()
  const upstreamRequests = new Set<http.ClientRequest>()
  let stopping = false

  const track = <T extends Duplex>(s: T): T => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
    return s
  }
  const record = (attempt: BlockedAttempt) => {
    blocked.push(attempt)
    if (blocked.length > maxRecorded) blocked.splice(0, blocked.length - maxRecorded)
    try {
      opts.onBlocked?.(attempt)
    } catch {
      // a listener's failure must not break the proxy
    }
  }
  const check = (host: string) => resolveTarget(host, policy, resolver)

  const server = http.createServer()
  // Requests in flight per client connection: a client waiting on a slow upstream is not idle (the
  // upstream's own timeout bounds that wait). With a handler here the server no longer destroys a
  // timed-out socket by itself, so the handler decides.
  const inFlight = new WeakMap<object, number>()
  server.on('connection', (s: net.Socket) => void track(s))
  server.setTimeout(idleMs, (s: net.Socket) => {
    if (!inFlight.get(s)) s.destroy()
  })

  // (a) CONNECT host:port: https and WebSocket tunnels.
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client)
    client.pause()
    // A net.Socket in practice (typed as Duplex); the upstream's timeout also closes an idle tunnel.
    ;(client as Partial<net.Socket>).setTimeout?.(idleMs, () => client.destroy())
    client.on('error', () => client.destroy())
    const answer = (status: string, headers: Record<string, string>, body: string) => {
      const lines = [
        `HTTP/1.1 ${status}`,
        'Content-Type: text/plain; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
      ]
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${safeHeaderValue(v)}`)
      client.end(`${lines.join('\r\n')}\r\n\r\n${body}`)
    }
    const target = parseAuthority(req.url ?? '')
    if (!target) return answer('400 Bad Request', {}, 'bad CONNECT target\n')
    void (async () => {
      const r = await check(target.host)
      if (client.destroyed || stopping) return void client.destroy()
      if (!r.ok && r.code === 'target_blocked') {
        record({ host: target.host, port: target.port, reason: r.reason })
        return answer('403 Forbidden', { [BLOCKED_HEADER]: r.reason }, `egress blocked: ${r.reason}\n`)
      }
      if (!r.ok) return answer('502 Bad Gateway', { [UNREACHABLE_HEADER]: r.reason }, `unreachable: ${r.reason}\n`)
      let upstream: net.Socket
      try {
        upstream = await connectChecked(r.addresses.slice(0, MAX_ADDRESSES_TRIED), target.port, connectMs)
      } catch (e) {
        return answer('502 Bad Gateway', { [UNREACHABLE_HEADER]: errCode(e) }, `unreachable: ${errCode(e)}\n`)
      }
      if (client.destroyed || stopping) return void upstream.destroy()
      track(upstream)
      upstream.setTimeout(idleMs, () => upstream.destroy())
      const close = () => {
        client.destroy()
        upstream.destroy()
      }
      upstream.on('error', close)
      upstream.on('close', () => client.destroy())
      client.on('close', () => upstream.destroy())
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })().catch(() => client.destroy())
  })

  // (b) Plain HTTP in absolute form: GET http://host:port/path HTTP/1.1. Each request is checked
  // and forwarded on its own upstream connection, so a client reusing one proxy connection for
  // several hosts is handled correctly.
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const fail = (status: number, headers: Record<string, string>, body: string) => {
      req.resume()
      if (res.destroyed || res.writableEnded) return
      if (res.headersSent) return void res.destroy()
      const h: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' }
      for (const [k, v] of Object.entries(headers)) h[k] = safeHeaderValue(v)
      res.writeHead(status, h)
      res.end(body)
    }
    const clientSocket = req.socket
    inFlight.set(clientSocket, (inFlight.get(clientSocket) ?? 0) + 1)
    res.once('close', () => inFlight.set(clientSocket, Math.max(0, (inFlight.get(clientSocket) ?? 1) - 1)))
    if (stopping) return fail(503, {}, 'proxy stopping\n')
    const raw = req.url ?? ''
    if (!/^http:\/\//i.test(raw)) return fail(400, {}, 'this is a forward proxy: absolute http:// URL or CONNECT required\n')
    const parsed = parseTargetUrl(raw)
    if (!parsed.ok) return fail(400, {}, `bad target: ${parsed.message}\n`)
    const url = parsed.url
    const port = url.port ? Number(url.port) : 80
    void (async () => {
      const r = await check(url.hostname)
      if (stopping) return void res.destroy()
      if (!r.ok && r.code === 'target_blocked') {
        record({ host: url.hostname, port, reason: r.reason })
        return fail(403, { [BLOCKED_HEADER]: r.reason }, `egress blocked: ${r.reason}\n`)
      }
      if (!r.ok) return fail(502, { [UNREACHABLE_HEADER]: r.reason }, `unreachable: ${r.reason}\n`)

      const headers = filterHeaders(req.rawHeaders, new Set(['host']))
      headers.host = url.host
      headers.connection = 'close'
      const hasBody =
        req.headers['content-length'] !== undefined
          ? Number(req.headers['content-length']) > 0
          : req.headers['transfer-encoding'] !== undefined
      // Without a body the request can be replayed against the next checked address.
      const candidates = r.addresses.slice(0, hasBody ? 1 : MAX_ADDRESSES_TRIED)
      const attempt = (i: number) => {
        const a = candidates[i]!
        let responded = false
        const up = http.request({
          host: a.address,
          family: a.family,
          port,
          method: req.method,
          path: url.pathname + url.search,
          headers,
          agent: false,
        })
        up.setTimeout(idleMs, () => {
          up.destroy(Object.assign(new Error('upstream timed out'), { code: 'ETIMEDOUT' }))
        })
        upstreamRequests.add(up)
        up.once('close', () => upstreamRequests.delete(up))
        up.on('socket', (s: Duplex) => track(s))
        // The client went away (or the answer is complete): nothing more to fetch.
        res.once('close', () => up.destroy())
        up.on('response', (upRes: http.IncomingMessage) => {
          responded = true
          const out = filterHeaders(upRes.rawHeaders, new Set())
          res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, out)
          upRes.pipe(res)
          upRes.on('error', () => res.destroy())
          res.on('close', () => upRes.destroy())
        })
        up.on('error', (e) => {
          if (responded || res.headersSent) return void res.destroy()
          if (!hasBody && i + 1 < candidates.length && !/TIMEDOUT/.test(errCode(e))) return attempt(i + 1)
          const code = errCode(e)
          fail(/TIMEDOUT/.test(code) ? 504 : 502, { [UNREACHABLE_HEADER]: code }, `unreachable: ${code}\n`)
        })
        if (stopping) return void up.destroy()
        if (hasBody && i === 0) req.pipe(up)
        else up.end()
      }
      attempt(0)
    })().catch(() => fail(502, { [UNREACHABLE_HEADER]: 'proxy error' }, 'proxy error\n'))
  })

  server.on('clientError', (_e: Error, s: Duplex) => {
    if (s.writable) s.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
    else s.destroy()
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as net.AddressInfo).port

  let stopped: Promise<void> | null = null
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      stopping = true
      server.close(() => resolve())
      for (const r of upstreamRequests) r.destroy()
      upstreamRequests.clear()
      for (const s of sockets) s.destroy()
      sockets.clear()
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      // close() waits for connections; never hang a caller's shutdown on a stuck one.
      setTimeout(resolve, 2_000).unref?.()
    })
    return stopped
  }

  return { url: `http://127.0.0.1:${port}`, port, blocked, stop }
}

/** Proxy settings for Playwright: `chromium.launch({ proxy })` or `browser.newContext({ proxy })`. */
export function proxySettingsFor(proxy: Pick<EgressProxy, 'url'>): { server: string; bypass: string } {
  // Chromium sends loopback hosts direct by default; '<-loopback>' removes that implicit rule so
  // http://127.0.0.1, http://localhost and http://[::1] also go through the proxy and are checked.
  return { server: proxy.url, bypass: '<-loopback>' }
}

/**
 * Chromium switches a scan browser needs besides the proxy, for traffic an HTTP proxy never sees:
 * QUIC (HTTP/3 over UDP) is turned off, and WebRTC may not send UDP outside the proxy (without this
 * a page can send STUN packets to any address, loopback included).
 */
export const CHROMIUM_EGRESS_ARGS: readonly string[] = ['--disable-quic', '--webrtc-ip-handling-policy=disable_non_proxied_udp']

/** Chromium command-line switches with the same effect, for launchers that do not use Playwright's proxy option. */
export function chromiumProxyArgs(proxy: Pick<EgressProxy, 'url'>): string[] {
  return [`--proxy-server=${proxy.url}`, '--proxy-bypass-list=<-loopback>']
}

type HeaderBag = { get(name: string): string | null }

function statusAndHeader(x: unknown, header: string): { status: number; url: string; value: string | null } | null {
  if (!x || typeof x !== 'object') return null
  const o = x as Record<string, unknown>
  const status = typeof o.status === 'function' ? (o.status as () => unknown).call(x) : o.status
  const url = typeof o.url === 'function' ? (o.url as () => unknown).call(x) : o.url
  let value: string | null = null
  const h = typeof o.headers === 'function' ? (o.headers as () => unknown).call(x) : o.headers
  if (h && typeof (h as HeaderBag).get === 'function') value = (h as HeaderBag).get(header)
  else if (h && typeof h === 'object') value = ((h as Record<string, unknown>)[header.toLowerCase()] as string | undefined) ?? null
  if (typeof status !== 'number') return null
  return { status, url: typeof url === 'string' ? url : '', value }
}

export type EgressFailure = { code: 'target_blocked' | 'target_unreachable'; reason: string }

/**
 * Tells whether a fetch result or error, or a Playwright response, is the proxy refusing or failing
 * to reach the target, and why. Plain http:// targets: the proxy answers 403 (blocked) or 502/504
 * (unreachable) with its marker header, which it strips from real upstream answers. https:// targets
 * through Bun's fetch: fetch throws an error with code 'ERR_PROXY_TUNNEL', the CONNECT status and
 * headers. A response for an https:// URL comes from inside the tunnel and is never trusted here.
 */
export function egressFailure(x: unknown): EgressFailure | null {
  if (x instanceof Error || (x && typeof x === 'object' && (x as { code?: unknown }).code === 'ERR_PROXY_TUNNEL')) {
    const e = x as { code?: unknown; status?: unknown; headers?: unknown }
    if (e.code !== 'ERR_PROXY_TUNNEL') return null
    const s = statusAndHeader({ status: e.status, url: '', headers: e.headers }, BLOCKED_HEADER)
    const u = statusAndHeader({ status: e.status, url: '', headers: e.headers }, UNREACHABLE_HEADER)
    if (s?.status === 403 && s.value) return { code: 'target_blocked', reason: s.value }
    return { code: 'target_unreachable', reason: u?.value ?? `proxy answered ${String(e.status ?? 'error')}` }
  }
  const b = statusAndHeader(x, BLOCKED_HEADER)
  if (!b || !/^http:/i.test(b.url)) return null
  if (b.status === 403 && b.value) return { code: 'target_blocked', reason: b.value }
  const u = statusAndHeader(x, UNREACHABLE_HEADER)
  if ((b.status === 502 || b.status === 504) && u?.value) return { code: 'target_unreachable', reason: u.value }
  return null
}

/** True when `x` (fetch Response or error, Playwright Response) is the proxy refusing a blocked target. */
export function isBlockedResponse(x: unknown): boolean {
  return egressFailure(x)?.code === 'target_blocked'
}
