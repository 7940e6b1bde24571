// What the performance checks share: sizes of the responses the browser received, and which of them are
// text worth compressing or static assets worth caching.

import type { BrowserRequest, PageArtifact, PerformanceArtifact, ResourceTiming } from '../types.ts'
import { headerValue, parseUrl } from '../util/http.ts'

/** Responses under this many bytes gain nothing from compression or caching worth a finding. */
export const SMALL_RESPONSE = 1024

/** Decimal megabytes, as browsers' devtools and Lighthouse report transfer sizes. */
export const MB = 1_000_000

export function formatBytes(bytes: number): string {
  if (bytes >= MB) return `${(bytes / MB).toFixed(1)} MB`
  if (bytes >= 1000) return `${Math.round(bytes / 1000)} KB`
  return `${bytes} B`
}

/** A URL without its query and fragment, clipped: enough to recognise the resource in a report. */
export function displayUrl(url: string, max = 200): string {
  const parsed = parseUrl(url)
  const bare = parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:') ? `${parsed.origin}${parsed.pathname}` : url
  return bare.length > max ? `${bare.slice(0, max)}…` : bare
}

/** Requests that went over the network (not data:, blob: or about: URLs). */
export function isNetworkUrl(url: string): boolean {
  return /^(?:https?|wss?):/i.test(url)
}

/** A complete successful response with a body: 200-299 except 204 and 206 (ranges are never compressed whole). */
export function hasFullBody(r: BrowserRequest): boolean {
  return r.status >= 200 && r.status < 300 && r.status !== 204 && r.status !== 206 && r.method !== 'HEAD'
}

const TEXT_TYPE =
  /^(?:text\/(?:html|css|javascript|ecmascript|plain|xml|csv)|application\/(?:javascript|x-javascript|ecmascript|json|xml|xhtml\+xml|ld\+json|manifest\+json|[\w.+-]+\+json|[\w.+-]+\+xml)|image\/svg\+xml)$/

/** Whether a Content-Type is text (html, js, css, json, svg, xml): it shrinks to a fraction with gzip or brotli. */
export function isCompressibleType(contentType: string): boolean {
  const mime = contentType.split(';')[0]!.trim().toLowerCase()
  return mime !== '' && TEXT_TYPE.test(mime)
}

/** Content-Encoding values that are compression (identity and absence are not). */
const COMPRESSED = new Set(['gzip', 'x-gzip', 'br', 'zstd', 'deflate', 'compress', 'dcb', 'dcz'])

export function contentEncoding(headers: Record<string, string>): string | null {
  const value = headerValue(headers, 'content-encoding')
  if (!value) return null
  const codings = value
    .toLowerCase()
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && s !== 'identity')
  return codings.find((c) => COMPRESSED.has(c)) ?? null
}

/** Resource timings by URL (the first entry of each), for sizes the response headers do not give. */
export function timingsByUrl(performance: PerformanceArtifact | null): Map<string, ResourceTiming> {
  const map = new Map<string, ResourceTiming>()
  for (const r of performance?.resources ?? []) if (!map.has(r.url)) map.set(r.url, r)
  return map
}

/**
 * Bytes of a response body as sent: Content-Length, else the encoded body size the browser measured
 * (for the page's document, from navigation timing). Null when neither is known (chunked cross-origin).
 */
export function bodySize(
  r: BrowserRequest,
  timings: Map<string, ResourceTiming>,
  page: PageArtifact,
  performance: PerformanceArtifact | null,
): number | null {
  const length = headerValue(r.headers, 'content-length')
  if (length && /^\d+$/.test(length)) return Number(length)
  const timing = timings.get(r.url)
  if (timing && timing.encodedBodySize > 0) return timing.encodedBodySize
  if (r.url === page.finalUrl && r.resourceType === 'document' && performance?.navigation && performance.navigation.encodedBodySize > 0) {
    return performance.navigation.encodedBodySize
  }
  return null
}
