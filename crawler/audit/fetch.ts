// Plain-HTTP GETs of the crawl's own files (robots.txt, sitemaps) through the crawl's egress proxy.
// Redirects are followed hop by hop (each hop is a new request the proxy checks again), up to a few.
import { gunzipSync } from 'node:zlib'
import { egressFailure, type EgressProxy } from '../../shared/egress/proxy.ts'
import { USER_AGENT } from '../gather.ts'

/** RFC 9309 2.3.1.2: follow at least five consecutive redirects for robots.txt. */
const MAX_REDIRECTS = 5

export type TextFetch =
  | { ok: true; status: number; url: string; contentType: string; body: Uint8Array; truncated: boolean }
  | { ok: false; reason: string }

async function readBytes(res: Response, limit: number): Promise<{ body: Uint8Array; truncated: boolean }> {
  if (!res.body) return { body: new Uint8Array(), truncated: false }
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
    if (size >= limit) {
      await reader.cancel().catch(() => {})
      return { body: Buffer.concat(chunks).subarray(0, limit), truncated: true }
    }
  }
  return { body: Buffer.concat(chunks), truncated: false }
}

/** GET with redirects followed (same or other origin; the proxy checks each), body cut at `limit` bytes. */
export async function fetchBytes(url: string, proxy: EgressProxy, timeoutMs: number, limit: number, signal?: AbortSignal): Promise<TextFetch> {
  let current = url
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let res: Response
    try {
      res = await fetch(current, {
        proxy: proxy.url,
        redirect: 'manual',
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        headers: { 'user-agent': USER_AGENT, accept: 'text/plain,application/xml,text/xml,*/*;q=0.5' },
        tls: { rejectUnauthorized: false },
        decompress: true,
      } as RequestInit)
    } catch (e) {
      const f = egressFailure(e)
      return { ok: false, reason: f ? `${f.code}: ${f.reason}` : (e as Error).name === 'TimeoutError' ? 'timed out' : (e as Error).message }
    }
    const f = egressFailure(res)
    if (f) {
      await res.body?.cancel().catch(() => {})
      return { ok: false, reason: `${f.code}: ${f.reason}` }
    }
    const location = res.headers.get('location')
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel().catch(() => {})
      try {
        current = new URL(location, current).href
      } catch {
        return { ok: false, reason: 'invalid redirect' }
      }
      continue
    }
    try {
      const { body, truncated } = await readBytes(res, limit)
      return { ok: true, status: res.status, url: current, contentType: res.headers.get('content-type') ?? '', body, truncated }
    } catch (e) {
      return { ok: false, reason: (e as Error).message }
    }
  }
  return { ok: false, reason: 'too many redirects' }
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
