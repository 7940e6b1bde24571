// Static assets of the site (scripts, styles, fonts, images) served without any caching headers.

import { defineCheck } from '../types.ts'
import { siteDomains, isFirstPartyUrl } from '../util/domains.ts'
import { headerValue } from '../util/http.ts'
import { bodySize, displayUrl, hasFullBody, isNetworkUrl, SMALL_RESPONSE, timingsByUrl } from './resources.ts'

const STATIC_TYPES = new Set(['script', 'stylesheet', 'font', 'image'])
const MAX_LISTED = 10

export const perfCaching = defineCheck({
  id: 'perf-caching',
  category: 'performance',
  title: 'Static assets carry caching headers',
  failTitle: 'Static assets lack caching headers',
  description: 'Looks at Cache-Control and Expires on the scripts, stylesheets, fonts and images the site served while the page loaded.',
  why:
    'Without caching headers, browsers and CDNs fall back to guesses and revalidate or re-download assets on every visit; explicit ' +
    'long-lived caching for fingerprinted files makes repeat visits nearly free.',
  confirmation: `Warns when a successful first-party static asset (script, stylesheet, font, image; same registrable domain as the page) has neither Cache-Control nor Expires. Any explicit policy passes, including no-cache or a short max-age: that is a deliberate choice. Not findings: third-party assets (their owner sets the headers), assets under ${SMALL_RESPONSE} bytes (revalidating them costs about as much as downloading them), data: URLs, failed or partial responses, and responses whose headers were not captured. ETag and Last-Modified are reported; alone they only allow revalidation.`,
  severity: 'low',
  fix: {
    generic:
      'Serve fingerprinted assets (app.3f2a9c.js) with Cache-Control: public, max-age=31536000, immutable, and other static files with ' +
      'a shorter max-age (e.g. max-age=3600) or no-cache plus an ETag.',
    vercel:
      'Vercel caches build output from the framework automatically; for files in public/ add in vercel.json:\n{ "headers": [{ "source":' +
      ' "/assets/(.*)", "headers": [{ "key": "Cache-Control", "value": "public, max-age=31536000, immutable" }] }] }',
    netlify:
      'In _headers:\n/assets/*\n  Cache-Control: public, max-age=31536000, immutable\n(only for fingerprinted file names; Netlify ' +
      'otherwise sends max-age=0, must-revalidate).',
    nextjs:
      "_next/static is served with immutable caching by next start; for files in public/ add headers() in next.config.js: { source: '" +
      "/images/:path*', headers: [{ key: 'Cache-Control', value: 'public, max-age=86400' }] }.",
    nginx:
      'location ~* \\.(?:js|css|woff2?|png|jpe?g|gif|svg|webp|avif)$ {\n  expires 30d;\n  add_header Cache-Control "public";\n}\n(use ' +
      'expires max; add_header Cache-Control "public, immutable"; for fingerprinted files).',
    cloudflare:
      'Caching > Cache Rules: for static file extensions set Edge TTL and Browser TTL (e.g. 1 month), or send Cache-Control from the ' +
      'origin; Cloudflare respects origin headers by default.',
  },
  requires: ['page', 'target', 'mainResponse'],
  optional: ['performance'],
  run: ({ page, target, mainResponse, performance }) => {
    const site = siteDomains({ target, mainResponse, page })
    const timings = timingsByUrl(performance ?? null)
    const uncached: Array<{ url: string; type: string; bytes: number | null; validators: string[] }> = []
    let checked = 0
    let small = 0
    let headersUnknown = 0
    const seen = new Set<string>()
    for (const r of page.requests) {
      if (!STATIC_TYPES.has(r.resourceType) || !isNetworkUrl(r.url) || !hasFullBody(r) || seen.has(r.url)) continue
      if (!isFirstPartyUrl(r.url, site)) continue
      seen.add(r.url)
      if (Object.keys(r.headers).length === 0) {
        headersUnknown++ // the response headers were not captured: nothing to judge
        continue
      }
      checked++
      if (headerValue(r.headers, 'cache-control') !== null || headerValue(r.headers, 'expires') !== null) continue
      const bytes = bodySize(r, timings, page, performance ?? null)
      if (bytes !== null && bytes < SMALL_RESPONSE) {
        small++
        continue
      }
      const validators = ['etag', 'last-modified'].filter((h) => headerValue(r.headers, h) !== null)
      uncached.push({ url: r.url, type: r.resourceType, bytes, validators })
    }
    uncached.sort((a, b) => (b.bytes ?? 0) - (a.bytes ?? 0))
    const evidence = {
      staticAssets: checked,
      uncachedCount: uncached.length,
      uncached: uncached.slice(0, MAX_LISTED).map((u) => ({ ...u, url: displayUrl(u.url) })),
      ...(small > 0 ? { smallUncached: small } : {}),
      ...(headersUnknown > 0 ? { headersUnknown } : {}),
    }
    if (uncached.length > 0) {
      const top = uncached[0]!
      return {
        status: 'warn',
        evidence,
        summary: `${uncached.length} static asset(s) of the site have no Cache-Control or Expires header, e.g. ${top.type} ${displayUrl(top.url, 100)}.`,
      }
    }
    const summary =
      checked === 0
        ? 'No first-party static assets to judge.'
        : small > 0
          ? `No first-party static asset over ${SMALL_RESPONSE} bytes lacks caching headers (${checked} checked).`
          : `All ${checked} first-party static asset(s) carry caching headers.`
    return { status: 'pass', evidence, summary }
  },
})
