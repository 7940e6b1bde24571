// How many requests the page made while loading.

import { defineCheck } from '../types.ts'
import { isNetworkUrl } from './resources.ts'

export const REQUESTS_WARN = 80
export const REQUESTS_FAIL = 150
/** The gatherer records at most this many requests (crawler LIMITS.requests). */
const RECORDED_LIMIT = 500

export const perfRequestCount = defineCheck({
  id: 'perf-request-count',
  category: 'performance',
  title: 'The page makes a reasonable number of requests',
  failTitle: 'The page makes too many requests',
  description: 'Counts the network requests the browser made while loading the page, by resource type.',
  why:
    "Each request costs a round trip, header bytes and a slot in the browser's queue; pages with hundreds of requests load slowly on " +
    'mobile networks even when each file is small.',
  confirmation: `Counts the browser's network requests (data: and blob: URLs excluded), including failed ones and third parties; without the request log, the navigation plus the resource timing entries (which browsers cap at 250 by default). Warns above ${REQUESTS_WARN}, fails above ${REQUESTS_FAIL}. One cold load before any interaction; requests made later (scrolling, clicks, polling) are not counted.`,
  severity: 'medium',
  fix: {
    generic:
      'Bundle small scripts and styles, inline tiny icons as SVG or use a sprite, lazy-load below-the-fold images and embeds, and ' +
      'remove tags and widgets you do not need (each third-party tag often pulls in many more requests).',
    vercel:
      'Let the framework bundle modules, lazy-load images and embeds, and move third-party tags behind interaction or consent; Vercel ' +
      'serves over HTTP/2 and HTTP/3, so fewer requests mostly means fewer third-party tags.',
    netlify:
      'Bundle assets in your build, lazy-load images and embeds, and trim third-party tags; Netlify serves over HTTP/2, so the biggest ' +
      'wins are usually third parties.',
    nextjs:
      'Load third-party scripts with next/script strategy="lazyOnload" (or behind consent), use next/image lazy loading, and check the ' +
      'Network panel for chunks that could merge (experimental optimizePackageImports for icon libraries).',
    nginx:
      'Enable HTTP/2 (listen 443 ssl http2; or http2 on;), bundle assets in the build, and lazy-load images; fewer third-party tags cut' +
      ' the most requests.',
    cloudflare:
      'Enable HTTP/3 (QUIC) and Early Hints, and consider Zaraz to load third-party tools from the edge instead of the browser, which ' +
      'removes their requests from the page.',
  },
  requires: ['performance'],
  optional: ['page'],
  run: ({ performance, page }) => {
    const fromLog = page !== null && page !== undefined
    const requests = fromLog ? page.requests.filter((r) => isNetworkUrl(r.url)) : []
    const count = fromLog ? requests.length : (performance.navigation ? 1 : 0) + performance.resources.length
    const byType: Record<string, number> = {}
    if (fromLog) for (const r of requests) byType[r.resourceType] = (byType[r.resourceType] ?? 0) + 1
    else for (const r of performance.resources) byType[r.initiatorType] = (byType[r.initiatorType] ?? 0) + 1
    const failed = requests.filter((r) => r.status === 0).length
    const evidence = {
      requests: count,
      source: fromLog ? 'browser requests' : 'resource timings',
      byType,
      ...(failed > 0 ? { failed } : {}),
      ...(fromLog && page.requests.length >= RECORDED_LIMIT ? { capped: true } : {}),
      thresholds: { warn: REQUESTS_WARN, fail: REQUESTS_FAIL },
    }
    const types = Object.entries(byType)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([t, n]) => `${n} ${t}`)
      .join(', ')
    if (count > REQUESTS_FAIL)
      return { status: 'fail', evidence, summary: `The page made ${count} requests while loading (over ${REQUESTS_FAIL}): ${types}.` }
    if (count > REQUESTS_WARN)
      return {
        status: 'warn',
        severity: 'low',
        evidence,
        summary: `The page made ${count} requests while loading (over ${REQUESTS_WARN}): ${types}.`,
      }
    return { status: 'pass', evidence, summary: `The page made ${count} request(s) while loading.` }
  },
})
