// Server response time and load time of the page, as the browser measured one cold load.

import { defineCheck } from '../types.ts'

export const TTFB_WARN_MS = 800
export const LOAD_WARN_MS = 4000

export const perfTiming = defineCheck({
  id: 'perf-timing',
  category: 'performance',
  title: 'The server answers and the page loads quickly',
  failTitle: 'The server answers or the page loads slowly',
  description: 'Reads time to first byte, DOMContentLoaded and the load event from the navigation timing of the page.',
  why:
    'A slow first byte delays everything else on the page; a slow load event means images, scripts and styles keep users waiting and ' +
    'hurts Core Web Vitals.',
  confirmation: `Warns when time to first byte exceeds ${TTFB_WARN_MS} ms or the load event ends after ${LOAD_WARN_MS} ms; otherwise reports the numbers as info. Measured once, from the scanner's network location, with an empty cache: distance to the server and a cold server-side cache weigh in, so confirm a warning with field data (Chrome UX Report, your RUM) before acting. A load event that had not finished when timings were read is not judged.`,
  severity: 'low',
  fix: {
    generic:
      'For a slow first byte: cache rendered pages or API responses, add a CDN in front, and look for slow database queries in the ' +
      'request. For a slow load: defer non-critical scripts, lazy-load images, and cut the page weight.',
    vercel:
      'Serve pages statically or with ISR/caching (Cache-Control: s-maxage=...) instead of rendering every request, and place Functions' +
      ' in the region next to your database (Project Settings > Functions > Region).',
    netlify:
      'Pre-render pages or cache function responses (Netlify-CDN-Cache-Control: public, s-maxage=..., stale-while-revalidate=...), and ' +
      'choose the Functions region next to your database.',
    nextjs:
      'Make routes static where possible (generateStaticParams, revalidate), cache fetches (fetch(url, { next: { revalidate: 60 } })), ' +
      'stream slow parts with <Suspense>, and defer third-party scripts with next/script.',
    nginx:
      'Cache upstream responses (proxy_cache_path ...; proxy_cache app; proxy_cache_valid 200 1m;), enable keepalive to the upstream, ' +
      'and profile the application for slow requests.',
    cloudflare:
      'Cache HTML at the edge with a Cache Rule (with a bypass for logged-in cookies), enable Argo Smart Routing or Tiered Cache for ' +
      'distant origins, and use Early Hints.',
  },
  requires: ['performance'],
  run: ({ performance }) => {
    const nav = performance.navigation
    if (!nav) {
      return {
        status: 'info',
        severity: 'info',
        evidence: { navigation: null, resources: performance.resources.length },
        summary: 'The browser reported no navigation timing for the page.',
      }
    }
    const loadMeasured = nav.load > 0
    const evidence = {
      ttfbMs: nav.ttfb,
      domContentLoadedMs: nav.domContentLoaded,
      loadMs: loadMeasured ? nav.load : null,
      thresholds: { ttfbMs: TTFB_WARN_MS, loadMs: LOAD_WARN_MS },
    }
    const slow: string[] = []
    if (nav.ttfb > TTFB_WARN_MS) slow.push(`first byte after ${nav.ttfb} ms (over ${TTFB_WARN_MS} ms)`)
    if (loadMeasured && nav.load > LOAD_WARN_MS) slow.push(`load event at ${nav.load} ms (over ${LOAD_WARN_MS} ms)`)
    if (slow.length > 0) return { status: 'warn', evidence, summary: `Slow page: ${slow.join('; ')}.` }
    return {
      status: 'info',
      severity: 'info',
      evidence,
      summary: `First byte ${nav.ttfb} ms, DOMContentLoaded ${nav.domContentLoaded} ms, load ${loadMeasured ? `${nav.load} ms` : 'not reached'}.`,
    }
  },
})
