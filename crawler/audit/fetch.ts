// The crawl's own files (robots.txt, sitemaps), read through the crawl's egress proxy with the one egress
// HTTP client: redirects followed hop by hop to any origin (the proxy checks each), the body cut at a limit.
import { gunzipSync } from 'node:zlib'
import { BROWSER_USER_AGENT, followRedirects } from '../../shared/egress/http.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'

/** RFC 9309 2.3.1.2: follow at least five consecutive redirects for robots.txt. */
const MAX_REDIRECTS = 5

export type TextFetch =
  | { ok: true; status: number; url: string; contentType: string; body: Uint8Array; truncated: boolean }
  | { ok: false; reason: string }

/** GET with redirects followed (same or other origin; the proxy checks each), body cut at `limit` bytes. */
export async function fetchBytes(
  url: string,
  proxy: EgressProxy,
  timeoutMs: number,
  limit: number,
  signal?: AbortSignal,
): Promise<TextFetch> {
  const { last, stop } = await followRedirects(proxy, url, {
    userAgent: BROWSER_USER_AGENT,
    headers: { accept: 'text/plain,application/xml,text/xml,*/*;q=0.5' },
    timeoutMs,
    signal,
    bodyLimit: limit,
    anyCertificate: true,
    maxRedirects: MAX_REDIRECTS,
  })
  if (stop?.kind === 'invalid-location') return { ok: false, reason: 'invalid redirect' }
  if (!last.ok) return { ok: false, reason: `${last.code}: ${last.reason}` }
  if (last.readError) return { ok: false, reason: last.readError }
  return {
    ok: true,
    status: last.status,
    url: last.url,
    contentType: last.headers.get('content-type') ?? '',
    body: last.body,
    truncated: last.truncated,
  }
}

/** Body as text; gzip files (sitemap.xml.gz served without Content-Encoding) are unpacked. */
export function bodyText(body: Uint8Array, limit: number): string {
  let bytes = body
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      // Bounded: a small gzip can unpack to gigabytes.
      bytes = gunzipSync(bytes, { maxOutputLength: limit })
    } catch {
      return ''
    }
  }
  return Buffer.from(bytes.subarray(0, limit)).toString('utf8')
}
