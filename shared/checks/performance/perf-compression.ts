// Text responses of the site (html, js, css, json, svg) sent without compression.

import { defineCheck } from '../types.ts'
import { siteDomains, isFirstPartyUrl } from '../util/domains.ts'
import { headerValue } from '../util/http.ts'
import {
  bodySize,
  contentEncoding,
  displayUrl,
  formatBytes,
  hasFullBody,
  isCompressibleType,
  isNetworkUrl,
  SMALL_RESPONSE,
  timingsByUrl,
} from './resources.ts'

const MAX_LISTED = 10

export const perfCompression = defineCheck({
  id: 'perf-compression',
  category: 'performance',
  title: 'Text responses are compressed',
  failTitle: 'Text responses are not compressed',
  description:
    'Looks at the Content-Encoding of every text response (HTML, JavaScript, CSS, JSON, SVG, XML) the browser received from the site ' +
    'while loading the page.',
  why:
    'Brotli or gzip shrink text to a quarter or less of its size; uncompressed scripts and styles make every visit download several ' +
    'times more bytes than needed.',
  confirmation: `Warns when a successful text response of the site (same registrable domain as the page, so cdn.example.com counts for www.example.com) larger than ${SMALL_RESPONSE} bytes came without Content-Encoding gzip, br, zstd or deflate, listing the biggest first. Size comes from Content-Length or the browser's measured body size; responses whose size is unknown are counted, not judged. Not findings: responses under ${SMALL_RESPONSE} bytes (compression gains nothing there), images, fonts and other binary types, partial (206) responses, and third-party responses (reported in evidence; only their owner can change them).`,
  severity: 'low',
  fix: {
    generic:
      'Enable brotli (preferred) or gzip for text types on the server or CDN: text/html, text/css, application/javascript, ' +
      'application/json, image/svg+xml.',
    vercel:
      'Vercel compresses responses from its edge automatically (brotli/gzip) when the client accepts it; an uncompressed response ' +
      'usually comes from a rewrite or proxy to another origin: enable compression there, or serve those assets from the project.',
    netlify:
      'Netlify compresses static assets automatically; uncompressed responses usually come from a function or a proxied origin: ' +
      'compress there (e.g. the compression middleware in Express), or set Content-Type correctly so the CDN treats the file as text.',
    nextjs:
      'next start compresses with gzip by default (compress: true in next.config.js); if a reverse proxy in front strips or skips it, ' +
      'enable compression on the proxy instead and keep Next.js output as is.',
    nginx:
      'In the http block:\ngzip on;\ngzip_min_length 1024;\ngzip_types text/css application/javascript application/json image/svg+xml ' +
      'text/plain application/xml;\n(text/html is always included; with the brotli module: brotli on; brotli_types with the same list.)',
    cloudflare:
      'Cloudflare compresses text types with brotli/gzip automatically when the response is proxied (orange cloud) and its Content-Type' +
      ' is a text type; check Rules > Compression Rules for a rule disabling it, and that the origin sends a correct Content-Type.',
  },
  requires: ['page', 'target', 'mainResponse'],
  optional: ['performance'],
  run: ({ page, target, mainResponse, performance }) => {
    const site = siteDomains({ target, mainResponse, page })
    const timings = timingsByUrl(performance ?? null)
    const uncompressed: Array<{ url: string; type: string; contentType: string; bytes: number }> = []
    let checked = 0
    let unknownSize = 0
    let thirdParty = 0
    const seen = new Set<string>()
    for (const r of page.requests) {
      if (!isNetworkUrl(r.url) || !hasFullBody(r) || seen.has(r.url)) continue
      const contentType = headerValue(r.headers, 'content-type') ?? ''
      if (!isCompressibleType(contentType)) continue
      seen.add(r.url)
      if (contentEncoding(r.headers)) {
        checked++
        continue
      }
      const size = bodySize(r, timings, page, performance ?? null)
      if (size === null) {
        unknownSize++
        continue
      }
      checked++
      if (size <= SMALL_RESPONSE) continue
      if (!isFirstPartyUrl(r.url, site)) {
        thirdParty++
        continue
      }
      uncompressed.push({ url: r.url, type: r.resourceType, contentType: contentType.split(';')[0]!.trim(), bytes: size })
    }
    uncompressed.sort((a, b) => b.bytes - a.bytes)
    const totalBytes = uncompressed.reduce((n, u) => n + u.bytes, 0)
    const evidence = {
      textResponses: checked + unknownSize,
      uncompressedCount: uncompressed.length,
      uncompressedBytes: totalBytes,
      uncompressed: uncompressed.slice(0, MAX_LISTED).map((u) => ({ ...u, url: displayUrl(u.url) })),
      ...(thirdParty > 0 ? { thirdPartyUncompressed: thirdParty } : {}),
      ...(unknownSize > 0 ? { unknownSize } : {}),
    }
    if (uncompressed.length > 0) {
      const top = uncompressed[0]!
      return {
        status: 'warn',
        evidence,
        summary: `${uncompressed.length} text response(s) (${formatBytes(totalBytes)}) sent without compression, e.g. ${displayUrl(top.url, 100)} (${formatBytes(top.bytes)}).`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary: `No uncompressed text response over ${SMALL_RESPONSE} bytes from the site (${evidence.textResponses} text response(s) seen).`,
    }
  },
})
