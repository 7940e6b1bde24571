// A local forward proxy that every outbound connection of the scanner goes through: Chromium (as its
// proxy server) and plain-HTTP probes (fetch's `proxy` option). For each request it resolves the
// target once with the egress guard, refuses blocked addresses, and connects to the checked address.
// Redirects are re-checked for free: every hop is a new request through the proxy. The wire-level helpers
// (header filtering, CONNECT authorities, checked connects) are in proxy-wire.ts.
import http from 'node:http'
import type net from 'node:net'
import type { Duplex } from 'node:stream'
import { parseTargetUrl, resolveTarget, type EgressPolicy, type ResolvedAddress, type ResolveResult, type Resolver } from './guard.ts'
import {
  BLOCKED_HEADER,
  connectChecked,
  errCode,
  filterHeaders,
  MAX_ADDRESSES_TRIED,
  parseAuthority,
  safeHeaderValue,
  UNREACHABLE_HEADER,
} from './proxy-wire.ts'

export { BLOCKED_HEADER, UNREACHABLE_HEADER } from './proxy-wire.ts'

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
  /**
   * The proxy's own check of a host, for a client that connects by itself to the address it returns (plain
   * http:// requests, shared/egress/http.ts): resolved once, each address checked, a blocked one recorded
   * in `blocked` as the proxy records its own refusals.
   */
  resolve(host: string, port: number): Promise<ResolveResult>
  stop(): Promise<void>
}

/** What the proxy's handlers share: its settings, what it has refused, and what to close when it stops. */
interface ProxyContext {
  idleMs: number
  connectMs: number
  blocked: BlockedAttempt[]
  sockets: Set<Duplex>
  upstreamRequests: Set<http.ClientRequest>
  /** Requests in flight per client connection: a client waiting on a slow upstream is not idle. */
  inFlight: WeakMap<object, number>
  stopping: boolean
  track<T extends Duplex>(s: T): T
  record(attempt: BlockedAttempt): void
  /** Resolves and checks a host; a blocked one is recorded (for `port`) before the answer. */
  check(host: string, port: number): Promise<ResolveResult>
}

/** Starts the proxy on 127.0.0.1, port 0. */
export async function startEgressProxy(policy: EgressPolicy, opts: EgressProxyOptions = {}): Promise<EgressProxy> {
  const ctx = proxyContext(policy, opts)
  const server = http.createServer()
  closeIdleClients(server, ctx)
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => tunnel(ctx, req, client, head))
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => forward(ctx, req, res))
  server.on('clientError', (_e: Error, s: Duplex) => {
    if (s.writable) s.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
    else s.destroy()
  })
  const port = await listenOnLoopback(server)
  return { url: `http://127.0.0.1:${port}`, port, blocked: ctx.blocked, resolve: ctx.check, stop: stopper(server, ctx) }
}

function proxyContext(policy: EgressPolicy, opts: EgressProxyOptions): ProxyContext {
  const maxRecorded = opts.maxRecorded ?? 10_000
  const ctx: ProxyContext = {
    idleMs: opts.idleTimeoutMs ?? 30_000,
    connectMs: opts.connectTimeoutMs ?? 10_000,
    blocked: [],
    sockets: new Set(),
    upstreamRequests: new Set(),
    inFlight: new WeakMap(),
    stopping: false,
    track: (s) => {
      ctx.sockets.add(s)
      s.once('close', () => ctx.sockets.delete(s))
      return s
    },
    record: (attempt) => {
      ctx.blocked.push(attempt)
      if (ctx.blocked.length > maxRecorded) ctx.blocked.splice(0, ctx.blocked.length - maxRecorded)
      try {
        opts.onBlocked?.(attempt)
      } catch {
        // a listener's failure must not break the proxy
      }
    },
    check: async (host, port) => {
      const r = await resolveTarget(host, policy, opts.resolver)
      if (!r.ok && r.code === 'target_blocked') ctx.record({ host, port, reason: r.reason })
      return r
    },
  }
  return ctx
}

/** Tracks every client connection and closes one idle for idleMs unless a request on it is in flight (the
 * upstream's own timeout bounds that wait). With a handler here the server no longer destroys a timed-out
 * socket by itself, so the handler decides. */
function closeIdleClients(server: http.Server, ctx: ProxyContext): void {
  server.on('connection', (s: net.Socket) => void ctx.track(s))
  server.setTimeout(ctx.idleMs, (s: net.Socket) => {
    if (!ctx.inFlight.get(s)) s.destroy()
  })
}

/** (a) CONNECT host:port: https and WebSocket tunnels. */
function tunnel(ctx: ProxyContext, req: http.IncomingMessage, client: Duplex, head: Buffer) {
  ctx.track(client)
  client.pause()
  // A net.Socket in practice (typed as Duplex); the upstream's timeout also closes an idle tunnel.
  ;(client as Partial<net.Socket>).setTimeout?.(ctx.idleMs, () => client.destroy())
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
  openTunnel(ctx, target, client, head, answer).catch(() => client.destroy())
}

/** Checks the tunnel's target, connects to a checked address and pipes both ways. */
async function openTunnel(
  ctx: ProxyContext,
  target: { host: string; port: number },
  client: Duplex,
  head: Buffer,
  answer: (status: string, headers: Record<string, string>, body: string) => void,
): Promise<void> {
  const r = await ctx.check(target.host, target.port)
  if (client.destroyed || ctx.stopping) return void client.destroy()
  if (!r.ok && r.code === 'target_blocked') return answer('403 Forbidden', { [BLOCKED_HEADER]: r.reason }, `egress blocked: ${r.reason}\n`)
  if (!r.ok) return answer('502 Bad Gateway', { [UNREACHABLE_HEADER]: r.reason }, `unreachable: ${r.reason}\n`)
  let upstream: net.Socket
  try {
    upstream = await connectChecked(r.addresses.slice(0, MAX_ADDRESSES_TRIED), target.port, ctx.connectMs)
  } catch (e) {
    return answer('502 Bad Gateway', { [UNREACHABLE_HEADER]: errCode(e) }, `unreachable: ${errCode(e)}\n`)
  }
  if (client.destroyed || ctx.stopping) return void upstream.destroy()
  ctx.track(upstream)
  upstream.setTimeout(ctx.idleMs, () => upstream.destroy())
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
}

type Fail = (status: number, headers: Record<string, string>, body: string) => void

/** (b) Plain HTTP in absolute form: GET http://host:port/path HTTP/1.1. Each request is checked and forwarded
 * on its own upstream connection, so a client reusing one proxy connection for several hosts is handled
 * correctly. */
function forward(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse) {
  const fail: Fail = (status, headers, body) => {
    req.resume()
    if (res.destroyed || res.writableEnded) return
    if (res.headersSent) return void res.destroy()
    const h: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' }
    for (const [k, v] of Object.entries(headers)) h[k] = safeHeaderValue(v)
    res.writeHead(status, h)
    res.end(body)
  }
  const clientSocket = req.socket
  ctx.inFlight.set(clientSocket, (ctx.inFlight.get(clientSocket) ?? 0) + 1)
  res.once('close', () => ctx.inFlight.set(clientSocket, Math.max(0, (ctx.inFlight.get(clientSocket) ?? 1) - 1)))
  if (ctx.stopping) return fail(503, {}, 'proxy stopping\n')
  const raw = req.url ?? ''
  if (!/^http:\/\//i.test(raw)) return fail(400, {}, 'this is a forward proxy: absolute http:// URL or CONNECT required\n')
  const parsed = parseTargetUrl(raw)
  if (!parsed.ok) return fail(400, {}, `bad target: ${parsed.message}\n`)
  const url = parsed.url
  const port = url.port ? Number(url.port) : 80
  void (async () => {
    const r = await ctx.check(url.hostname, port)
    if (ctx.stopping) return void res.destroy()
    if (!r.ok && r.code === 'target_blocked') return fail(403, { [BLOCKED_HEADER]: r.reason }, `egress blocked: ${r.reason}\n`)
    if (!r.ok) return fail(502, { [UNREACHABLE_HEADER]: r.reason }, `unreachable: ${r.reason}\n`)
    forwardToChecked(ctx, req, res, { url, port, addresses: r.addresses }, fail)
  })().catch(() => fail(502, { [UNREACHABLE_HEADER]: 'proxy error' }, 'proxy error\n'))
}

/** Sends the request to the target's checked addresses in turn (only the first when it has a body, which
 * cannot be replayed) and pipes the first answer back. */
function forwardToChecked(
  ctx: ProxyContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: { url: URL; port: number; addresses: ResolvedAddress[] },
  fail: Fail,
): void {
  const { url, port } = target
  const headers = filterHeaders(req.rawHeaders, new Set(['host']))
  headers.host = url.host
  headers.connection = 'close'
  const hasBody =
    req.headers['content-length'] !== undefined ? Number(req.headers['content-length']) > 0 : req.headers['transfer-encoding'] !== undefined
  // Without a body the request can be replayed against the next checked address.
  const candidates = target.addresses.slice(0, hasBody ? 1 : MAX_ADDRESSES_TRIED)
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
    up.setTimeout(ctx.idleMs, () => {
      up.destroy(Object.assign(new Error('upstream timed out'), { code: 'ETIMEDOUT' }))
    })
    ctx.upstreamRequests.add(up)
    up.once('close', () => ctx.upstreamRequests.delete(up))
    up.on('socket', (s: Duplex) => ctx.track(s))
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
    if (ctx.stopping) return void up.destroy()
    if (hasBody && i === 0) req.pipe(up)
    else up.end()
  }
  attempt(0)
}

function listenOnLoopback(server: http.Server): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve((server.address() as net.AddressInfo).port)
    })
  })
}

/** Stops accepting, destroys every tracked socket and upstream request, and resolves within 2 s at most. */
function stopper(server: http.Server, ctx: ProxyContext): () => Promise<void> {
  let stopped: Promise<void> | null = null
  return () => {
    stopped ??= new Promise<void>((resolve) => {
      ctx.stopping = true
      server.close(() => resolve())
      for (const r of ctx.upstreamRequests) r.destroy()
      ctx.upstreamRequests.clear()
      for (const s of ctx.sockets) s.destroy()
      ctx.sockets.clear()
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      // close() waits for connections; never hang a caller's shutdown on a stuck one.
      setTimeout(resolve, 2_000).unref?.()
    })
    return stopped
  }
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
