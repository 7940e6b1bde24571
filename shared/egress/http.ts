// The one plain-HTTP client for requests to targets, from the api and the crawler alike. Every request is
// checked by an egress proxy (shared/egress/proxy.ts), which resolves the name once and refuses blocked
// addresses, and so every hop again: redirects are never followed by fetch, always here, one hop at a time.
// An https:// request goes through the proxy's tunnel (CONNECT). An http:// one asks the proxy's check
// (proxy.resolve) and is sent by fetch itself to the address that passed, with the URL's Host: the proxy's
// forward path (a parse, and a new upstream connection per request) cost 0.6-1.0 ms of CPU a request against
// 0.04 straight, and a scan sends about a hundred probes. (audit_app's single "does it answer" GET is
// pinned the same way: api/http/reachable.ts.) Bodies are read with a cap. No cookies, no browser.
import type { Config } from '../config.ts'
import { readCappedBytes } from '../lib/http-body.ts'
import { within } from '../lib/async.ts'
import { parseTargetUrl, pinnedUrl, policyFromConfig } from './guard.ts'
import { MAX_ADDRESSES_TRIED } from './proxy-wire.ts'
import { egressFailure, startEgressProxy, type EgressProxy } from './proxy.ts'
import { errorMessage } from '../errors.ts'

/** What the crawler sends: a browser's user agent, so sites answer as they do to the scanned page. */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36 AppAudit/0.1'
/** What the api's own reads of a site send (verification, data exposure): a plain, honest agent. */
export const API_USER_AGENT = 'Mozilla/5.0 (compatible; AppAudit/0.1)'

export type EgressFailure = { ok: false; code: 'target_blocked' | 'target_unreachable'; reason: string }

/** One response: status, headers and at most `bodyLimit` bytes of body. */
export type Hop =
  | {
      ok: true
      url: string
      status: number
      headers: Headers
      body: Uint8Array
      truncated: boolean
      /** Set when the body could not be read to its end or limit (what was read is in body). */
      readError: string | null
    }
  | EgressFailure

export interface HopOptions {
  /** Never a write: POST only carries the GraphQL introspection query (crawler/gather/api-probes.ts). */
  method?: 'GET' | 'HEAD' | 'OPTIONS' | 'POST'
  /** A request body, for that POST only. */
  body?: string
  userAgent: string
  headers?: Record<string, string>
  timeoutMs: number
  signal?: AbortSignal
  /** Most bytes of body kept; the rest is never read. */
  bodyLimit: number
  /** Accept any certificate: certificate validity is judged from the browser's view, probes read what an attacker could. */
  anyCertificate?: boolean
}

/** One request, no redirect followed: http:// to an address the proxy checked, https:// through its tunnel. */
export async function fetchHop(proxy: EgressProxy, url: string, o: HopOptions): Promise<Hop> {
  const parsed = parseTargetUrl(url)
  if (parsed.ok && parsed.url.protocol === 'http:') return fetchPinned(proxy, parsed.url, o)
  return send(url, url, { proxy: proxy.url }, o)
}

/**
 * Plain http:// to the checked addresses of the URL's host in turn (only the first when the request has a
 * body, which is not sent twice), as the proxy's forward path connects; a blocked host is refused here and
 * recorded among the proxy's refusals. The resolution counts within the request's deadline.
 */
async function fetchPinned(proxy: EgressProxy, url: URL, o: HopOptions): Promise<Hop> {
  const port = Number(url.port || 80)
  const started = performance.now()
  const r = await within(proxy.resolve(url.hostname, port), o.timeoutMs, null)
  if (!r) return { ok: false, code: 'target_unreachable', reason: 'timed out' }
  if (!r.ok) return { ok: false, code: r.code, reason: r.reason }
  const left = { ...o, timeoutMs: Math.max(1, o.timeoutMs - (performance.now() - started)) }
  const candidates = r.addresses.slice(0, o.body === undefined ? MAX_ADDRESSES_TRIED : 1)
  let last: Hop = { ok: false, code: 'target_unreachable', reason: 'connect failed' }
  for (const a of candidates) {
    last = await send(pinnedUrl(url, a).href, url.href, { host: url.host }, left)
    if (last.ok || !CONNECT_FAILURES.has(last.reason)) return last
  }
  return last
}

/** Failures where nothing reached the server: the next checked address may be tried. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

/** Why a request got no answer: its deadline, its caller, or (sent straight) the connection's error code. */
function failureReason(e: unknown, direct: boolean): string {
  const name = (e as Error).name
  if (name === 'TimeoutError') return 'timed out'
  if (name === 'AbortError') return 'cancelled'
  const code = (e as { code?: unknown }).code
  return direct && typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : errorMessage(e)
}

/**
 * The request itself: to `to` (the URL, or a checked address), answered as `url`; through the proxy when
 * `via.proxy` is set, else with `via.host` as its Host.
 */
async function send(to: string, url: string, via: { proxy?: string; host?: string }, o: HopOptions): Promise<Hop> {
  const timeout = AbortSignal.timeout(o.timeoutMs)
  let res: Response
  try {
    res = await fetch(to, {
      method: o.method ?? 'GET',
      ...(o.body !== undefined ? { body: o.body } : {}),
      ...(via.proxy ? { proxy: via.proxy } : {}),
      redirect: 'manual',
      signal: o.signal ? AbortSignal.any([timeout, o.signal]) : timeout,
      headers: { 'user-agent': o.userAgent, ...o.headers, ...(via.host ? { host: via.host } : {}) },
      ...(o.anyCertificate ? { tls: { rejectUnauthorized: false } } : {}),
      decompress: true,
    } as RequestInit)
  } catch (e) {
    const f = egressFailure(e)
    if (f) return { ok: false, ...f }
    return { ok: false, code: 'target_unreachable', reason: failureReason(e, !via.proxy) }
  }
  // Only the proxy's answers carry its verdict; a target's own headers of that name mean nothing.
  const f = via.proxy ? egressFailure(res) : null
  if (f) {
    await res.body?.cancel().catch(() => {})
    return { ok: false, ...f }
  }
  const hop = { ok: true as const, url, status: res.status, headers: res.headers }
  if (o.method === 'HEAD') return { ...hop, body: new Uint8Array(), truncated: false, readError: null }
  try {
    return { ...hop, ...(await readCappedBytes(res.body, o.bodyLimit)), readError: null }
  } catch (e) {
    return { ...hop, body: new Uint8Array(), truncated: true, readError: errorMessage(e) }
  }
}

export interface FollowOptions extends HopOptions {
  /** Redirects followed at most; one more makes the outcome 'too many redirects'. */
  maxRedirects: number
  /** Whether to follow a redirect to `next`; when not, the redirect itself is the answer. Default: any URL. */
  follow?: (next: URL, first: URL) => boolean
}

export interface Followed {
  /** Every response, in order: the last is the answer unless `stop` says otherwise. */
  hops: Array<{ url: string; status: number; location: string | null }>
  /** The last response, or the failure that ended the chain. */
  last: Hop
  /** Why following ended early: a Location that is not a URL, or more than maxRedirects hops. */
  stop: { kind: 'invalid-location'; location: string } | { kind: 'too-many-redirects' } | null
}

const isRedirect = (status: number) => status >= 300 && status < 400

/** Follows redirects one hop at a time, each a new request the proxy checks again. */
export async function followRedirects(proxy: EgressProxy, url: string, o: FollowOptions): Promise<Followed> {
  const first = new URL(url)
  const hops: Followed['hops'] = []
  let current = url
  for (let i = 0; i <= o.maxRedirects; i++) {
    const got = await fetchHop(proxy, current, o)
    if (!got.ok) return { hops, last: got, stop: null }
    const location = got.headers.get('location')
    hops.push({ url: current, status: got.status, location })
    if (!isRedirect(got.status) || !location) return { hops, last: got, stop: null }
    let next: URL
    try {
      next = new URL(location, current)
    } catch {
      return { hops, last: got, stop: { kind: 'invalid-location', location } }
    }
    if (o.follow && !o.follow(next, first)) return { hops, last: got, stop: null }
    current = next.href
  }
  return { hops, last: { ok: false, code: 'target_unreachable', reason: 'too many redirects' }, stop: { kind: 'too-many-redirects' } }
}

/** A response the api reads: its body as text. */
export interface Fetched {
  /** The URL this response answered (after redirects, when followed). */
  url: string
  status: number
  headers: Headers
  body: string
  truncated: boolean
}

export type FetchOutcome = { ok: true; res: Fetched } | EgressFailure

export interface RequestOptions {
  method?: 'GET' | 'HEAD'
  headers?: Record<string, string>
  /** Most bytes of body kept; the rest is not read. */
  bodyLimit?: number
  /**
   * Redirects to follow, each hop checked by the proxy again. 'same-origin' stops (and answers the
   * redirect itself) when a hop leaves the first URL's origin; 'none' never follows.
   */
  redirects?: 'same-origin' | 'any' | 'none'
}

/** At most this many redirects are followed for the api. */
const API_MAX_REDIRECTS = 5
const API_BODY_LIMIT = 512 * 1024

const asText = (hop: Hop): FetchOutcome => {
  if (!hop.ok) return hop
  // An unreadable body reads as empty and cut short, as it always has.
  const text = hop.readError ? '' : Buffer.from(hop.body).toString('utf8')
  return { ok: true, res: { url: hop.url, status: hop.status, headers: hop.headers, body: text, truncated: hop.truncated } }
}

/** The api's client: a proxy of its own for one piece of work, requests as text. Close it after. */
export class EgressHttp {
  private constructor(
    private proxy: EgressProxy,
    private timeoutMs: number,
    private signal?: AbortSignal,
  ) {}

  /** Starts a proxy for this piece of work under the configured egress policy. */
  static async open(
    config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>,
    signal?: AbortSignal,
  ): Promise<EgressHttp> {
    const proxy = await startEgressProxy(policyFromConfig(config), { idleTimeoutMs: config.PROBE_TIMEOUT_MS + 1_000 })
    return new EgressHttp(proxy, config.PROBE_TIMEOUT_MS, signal)
  }

  close(): Promise<void> {
    return this.proxy.stop()
  }

  private hopOptions(opts: RequestOptions): HopOptions {
    return {
      method: opts.method,
      userAgent: API_USER_AGENT,
      headers: opts.headers,
      timeoutMs: this.timeoutMs,
      signal: this.signal,
      bodyLimit: opts.bodyLimit ?? API_BODY_LIMIT,
    }
  }

  /** One request, no redirect followed. */
  async once(url: string, opts: RequestOptions = {}): Promise<FetchOutcome> {
    return asText(await fetchHop(this.proxy, url, this.hopOptions(opts)))
  }

  /** A request that follows redirects as `opts.redirects` allows (default same-origin), at most 5 hops. */
  async get(url: string, opts: RequestOptions = {}): Promise<FetchOutcome> {
    const mode = opts.redirects ?? 'same-origin'
    if (mode === 'none') return this.once(url, opts)
    const followed = await followRedirects(this.proxy, url, {
      ...this.hopOptions(opts),
      maxRedirects: API_MAX_REDIRECTS,
      follow: (next, first) =>
        (next.protocol === 'http:' || next.protocol === 'https:') && (mode === 'any' || next.origin === first.origin),
    })
    if (followed.stop?.kind === 'too-many-redirects')
      return { ok: false, code: 'target_unreachable', reason: `more than ${API_MAX_REDIRECTS} redirects` }
    return asText(followed.last)
  }
}
