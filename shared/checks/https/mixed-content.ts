// Plain-http subresources an https page really requested, as the browser saw them.

import { defineCheck } from '../types.ts'
import { isHttpsUrl, isLoopbackHost, parseUrl } from '../util/http.ts'

/** Optionally-blockable ("passive") content: it cannot script the page. Everything else is active. */
const PASSIVE = new Set(['image', 'media', 'font', 'texttrack'])
const MAX_LISTED = 20

export const mixedContent = defineCheck({
  id: 'mixed-content',
  category: 'https',
  title: 'No mixed content on the https page',
  failTitle: 'Mixed content on the https page',
  description: 'Lists requests the browser made while loading the https page that went to http:// or ws:// URLs.',
  why:
    'A script, stylesheet, frame or API call over http lets anyone on the network take over the https page; images and media over http ' +
    'leak what is viewed and can be swapped.',
  confirmation:
    'Only for a page that loaded over https (skipped for an http page or when the browser could not load the page). Uses the requests' +
    ' the browser made, not URLs in the HTML. Fails for active content (script, stylesheet, xhr, fetch, frame document, websocket ' +
    'ws:, event source and other types); warns for passive content (image, media, font, text track). Requests the browser blocked ' +
    'still count: the page asks for them. Not findings: http://localhost and loopback addresses, which browsers treat as secure.',
  severity: 'high',
  fix: {
    generic:
      'Load every resource over https (or with a relative URL), and add "Content-Security-Policy: upgrade-insecure-requests" as a ' +
      'safety net.',
    vercel:
      'Fix the http:// URLs in the code; as a safety net, in vercel.json:\n{ "headers": [{ "source": "/(.*)", "headers": [{ "key": ' +
      '"Content-Security-Policy", "value": "upgrade-insecure-requests" }] }] }',
    netlify: 'Fix the http:// URLs in the code; as a safety net, in _headers:\n/*\n  Content-Security-Policy: upgrade-insecure-requests',
    nextjs:
      "Fix the http:// URLs (images, scripts, API base URLs in env vars); as a safety net add { key: 'Content-Security-Policy', value: " +
      "'upgrade-insecure-requests' } to headers() in next.config.js.",
    nginx: 'Fix the http:// URLs in the app; as a safety net:\nadd_header Content-Security-Policy "upgrade-insecure-requests" always;',
    cloudflare: 'SSL/TLS > Edge Certificates > Automatic HTTPS Rewrites: On (rewrites http links to resources that support https).',
  },
  fixTarget: { kind: 'mixed-content' },
  requires: ['page'],
  run: ({ page }) => {
    if (!isHttpsUrl(page.finalUrl)) {
      return {
        status: 'skipped',
        evidence: { page: page.finalUrl, reason: 'The page is not served over https, so there is no mixed content to judge.' },
        summary: 'Not applicable: the page is served over http.',
      }
    }
    const active: Array<Record<string, unknown>> = []
    const passive: Array<Record<string, unknown>> = []
    for (const request of page.requests) {
      const url = parseUrl(request.url)
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'ws:') || isLoopbackHost(url.hostname)) continue
      const item = { url: request.url, resourceType: request.resourceType, ...(request.failure ? { blocked: request.failure } : {}) }
      ;(PASSIVE.has(request.resourceType) ? passive : active).push(item)
    }
    const evidence = {
      page: page.finalUrl,
      requests: page.requests.length,
      active: active.slice(0, MAX_LISTED),
      passive: passive.slice(0, MAX_LISTED),
      activeCount: active.length,
      passiveCount: passive.length,
    }
    if (active.length > 0) {
      const first = active[0]!
      return {
        status: 'fail',
        evidence,
        summary: `${active.length} active resource(s) over http, e.g. ${first.resourceType} ${first.url}.`,
      }
    }
    if (passive.length > 0) {
      const first = passive[0]!
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: `${passive.length} passive resource(s) over http, e.g. ${first.resourceType} ${first.url}.`,
      }
    }
    return { status: 'pass', evidence, summary: `All ${page.requests.length} request(s) of the page used https.` }
  },
})
