// Plain HTTP requests from the api to user-supplied targets, every one through the egress guard's proxy
// (a local forward proxy that resolves once, refuses blocked addresses and re-checks every redirect hop).
// No browser: GET and HEAD only, bodies capped, redirects followed by hand and only where allowed.
import type { Config } from '../../shared/config.ts'
import { policyFromConfig } from '../../shared/egress/guard.ts'
import { egressFailure, readCapped, startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'

const USER_AGENT = 'Mozilla/5.0 (compatible; AppAudit/0.1)'
const MAX_REDIRECTS = 5

export interface Fetched {
  /** The URL this response answered (after redirects, when followed). */
  url: string
  status: number
  headers: Headers
  body: string
  truncated: boolean
}

export type FetchOutcome =
  | { ok: true; res: Fetched }
  | { ok: false; code: 'target_blocked' | 'target_unreachable'; reason: string }

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

export class EgressHttp {
  private constructor(
    private proxy: EgressProxy,
    private timeoutMs: number,
    private signal?: AbortSignal,
  ) {}

  /** Starts a proxy for this piece of work under the configured egress policy. Close it after. */
  static async open(config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>, signal?: AbortSignal): Promise<EgressHttp> {
    const proxy = await startEgressProxy(policyFromConfig(config), { idleTimeoutMs: config.PROBE_TIMEOUT_MS + 1_000 })
    return new EgressHttp(proxy, config.PROBE_TIMEOUT_MS, signal)
  }

  close(): Promise<void> {
    return this.proxy.stop()
  }

  /** One request, no redirect followed. */
  async once(url: string, opts: RequestOptions = {}): Promise<FetchOutcome> {
    const signals = [AbortSignal.timeout(this.timeoutMs)]
    if (this.signal) signals.push(this.signal)
    let res: Response
    try {
      res = await fetch(url, {
        method: opts.method ?? 'GET',
        proxy: this.proxy.url,
        redirect: 'manual',
        signal: AbortSignal.any(signals),
        headers: { 'user-agent': USER_AGENT, ...opts.headers },
        decompress: true,
      } as RequestInit)
    } catch (e) {
      const f = egressFailure(e)
      if (f) return { ok: false, ...f }
      const name = (e as Error).name
      return { ok: false, code: 'target_unreachable', reason: name === 'TimeoutError' ? 'timed out' : name === 'AbortError' ? 'cancelled' : (e as Error).message }
    }
    const f = egressFailure(res)
    if (f) {
      await res.body?.cancel().catch(() => {})
      return { ok: false, ...f }
    }
    const body = opts.method === 'HEAD'
      ? { text: '', truncated: false }
      : await readCapped(res, opts.bodyLimit ?? 512 * 1024).catch(() => ({ text: '', truncated: true }))
    return { ok: true, res: { url, status: res.status, headers: res.headers, body: body.text, truncated: body.truncated } }
  }

  /** A request that follows redirects as `opts.redirects` allows (default same-origin), at most 5 hops. */
  async get(url: string, opts: RequestOptions = {}): Promise<FetchOutcome> {
    const mode = opts.redirects ?? 'same-origin'
    const origin = new URL(url).origin
    let current = url
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const got = await this.once(current, opts)
      if (!got.ok || mode === 'none') return got
      const location = got.res.headers.get('location')
      if (got.res.status < 300 || got.res.status >= 400 || !location) return got
      let next: URL
      try {
        next = new URL(location, current)
      } catch {
        return got
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') return got
      if (mode === 'same-origin' && next.origin !== origin) return got
      current = next.href
    }
    return { ok: false, code: 'target_unreachable', reason: `more than ${MAX_REDIRECTS} redirects` }
  }
}

/** Runs `fn` with an egress-guarded client and always stops its proxy. */
export async function withEgress<T>(
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>,
  signal: AbortSignal | undefined,
  fn: (http: EgressHttp) => Promise<T>,
): Promise<T> {
  const http = await EgressHttp.open(config, signal)
  try {
    return await fn(http)
  } finally {
    await http.close()
  }
}
