// The plain-HTTP view of the target: its redirect chain and main response as a client without a browser gets
// them (headers, cookies and body as sent), and the same one-request form for probes. Every hop goes through
// the scan's egress proxy, which checks it again.
import type { HttpResponseArtifact, RedirectChain } from '../../shared/checks/types.ts'
import { BROWSER_USER_AGENT, fetchHop, followRedirects, type EgressFailure, type Hop } from '../../shared/egress/http.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import { GATHER_LIMITS } from './limits.ts'

export type Fetched = { ok: true; res: HttpResponseArtifact } | EgressFailure

const hopOptions = (timeoutMs: number, bodyLimit: number, extraHeaders: Record<string, string>) => ({
  userAgent: BROWSER_USER_AGENT,
  headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...extraHeaders },
  timeoutMs,
  bodyLimit,
  anyCertificate: true,
})

/** A hop as the checks read it: headers without Set-Cookie (kept apart, one entry a cookie), body as text. */
function toArtifact(hop: Hop): Fetched {
  if (!hop.ok) return hop
  const headers: Record<string, string> = {}
  hop.headers.forEach((v, k) => {
    if (k !== 'set-cookie') headers[k] = v
  })
  return {
    ok: true,
    res: {
      url: hop.url,
      status: hop.status,
      headers,
      setCookies: hop.headers.getSetCookie(),
      contentType: headers['content-type'] ?? '',
      // An unreadable body reads as empty and cut short.
      body: hop.readError ? '' : Buffer.from(hop.body).toString('utf8'),
      bodyTruncated: hop.truncated,
    },
  }
}

/** One GET through the egress proxy, no redirect following. */
export async function fetchOnce(
  url: string,
  proxy: EgressProxy,
  timeoutMs: number,
  bodyLimit: number,
  extraHeaders: Record<string, string> = {},
): Promise<Fetched> {
  return toArtifact(await fetchHop(proxy, url, hopOptions(timeoutMs, bodyLimit, extraHeaders)))
}

/** Bytes of a probe's answer kept as they came, for files that are not text (archives, .DS_Store, SQLite). */
export const PROBE_HEAD_BYTES = 512

/** fetchOnce, plus the first PROBE_HEAD_BYTES of the body in base64. */
export async function fetchOnceWithHead(
  url: string,
  proxy: EgressProxy,
  timeoutMs: number,
  bodyLimit: number,
): Promise<{ fetched: Fetched; head: string }> {
  const hop = await fetchHop(proxy, url, hopOptions(timeoutMs, bodyLimit, {}))
  const head = hop.ok && !hop.readError ? Buffer.from(hop.body.subarray(0, PROBE_HEAD_BYTES)).toString('base64') : ''
  return { fetched: toArtifact(hop), head }
}

/** Follows redirects hop by hop; each hop is checked by the proxy again. */
export async function followChain(
  startUrl: string,
  proxy: EgressProxy,
  timeoutMs: number,
): Promise<{ chain: RedirectChain; last: Fetched }> {
  const followed = await followRedirects(proxy, startUrl, {
    ...hopOptions(timeoutMs, GATHER_LIMITS.mainBody, {}),
    maxRedirects: GATHER_LIMITS.redirects,
  })
  const { hops, stop } = followed
  const last = toArtifact(followed.last)
  if (stop?.kind === 'too-many-redirects') {
    return { chain: { startUrl, hops, finalUrl: null, error: `more than ${GATHER_LIMITS.redirects} redirects` }, last }
  }
  if (stop?.kind === 'invalid-location') {
    return { chain: { startUrl, hops, finalUrl: null, error: `invalid Location ${JSON.stringify(stop.location)}` }, last }
  }
  if (!last.ok) return { chain: { startUrl, hops, finalUrl: null, error: `${last.code}: ${last.reason}` }, last }
  return { chain: { startUrl, hops, finalUrl: hops.at(-1)!.url, error: null }, last }
}

/** The http:// form of an https target, to see whether plain HTTP redirects to HTTPS. */
export function httpFormOf(url: URL): string | null {
  if (url.protocol === 'http:') return url.href
  if (url.port) return null // no conventional plain-HTTP twin for a custom port
  return `http://${url.host}${url.pathname}${url.search}`
}
