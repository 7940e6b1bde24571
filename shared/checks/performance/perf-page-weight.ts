// Total bytes the page downloaded while loading: the document plus every resource, as the browser measured.

import { defineCheck } from '../types.ts'
import { headerValue } from '../util/http.ts'
import { displayUrl, formatBytes, hasFullBody, MB } from './resources.ts'

export const PAGE_WEIGHT_WARN = 2 * MB
export const PAGE_WEIGHT_FAIL = 5 * MB
const MAX_LISTED = 10

export const perfPageWeight = defineCheck({
  id: 'perf-page-weight',
  category: 'performance',
  title: 'The page is not too heavy',
  failTitle: 'The page is too heavy',
  description: 'Adds up the bytes transferred for the document and every resource the browser loaded (navigation and resource timings).',
  why:
    'Every megabyte costs seconds on a mobile connection and money on metered plans; heavy pages load slowly, drain batteries and rank ' +
    'lower.',
  confirmation: `Sums transferSize of the navigation and of each resource timing entry. Cross-origin resources without Timing-Allow-Origin report 0 bytes to the page; their Content-Length from the browser's responses is used instead when known, and the rest are counted as unmeasured. Warns above ${formatBytes(PAGE_WEIGHT_WARN)}, fails above ${formatBytes(PAGE_WEIGHT_FAIL)} (decimal MB). One cold load with an empty cache, before any interaction; content loaded later (lazy images, infinite scroll) is not counted.`,
  severity: 'medium',
  fix: {
    generic:
      'Look at the largest resources listed: serve images as AVIF/WebP at the displayed size with loading="lazy" below the fold, split ' +
      'and tree-shake JavaScript, drop unused libraries and fonts, and compress text with brotli or gzip.',
    vercel:
      'Use the framework image component (next/image, or Vercel Image Optimization) for images, analyse bundles (e.g. ' +
      '@next/bundle-analyzer) to drop heavy dependencies, and load non-critical code with dynamic import().',
    netlify:
      'Serve images through Netlify Image CDN (/.netlify/images?url=...&w=...&fm=avif) at the displayed size, and trim JavaScript ' +
      'bundles (dynamic import(), removing unused dependencies).',
    nextjs:
      'Use next/image (sizes set, AVIF enabled with images.formats), next/font for fonts, dynamic() for heavy client components, and ' +
      '@next/bundle-analyzer to find large modules; keep components server-side where possible.',
    nginx:
      'Enable compression (gzip on; gzip_types text/css application/javascript application/json image/svg+xml;, or brotli), serve ' +
      'pre-resized WebP/AVIF images, and remove unused assets from the pages.',
    cloudflare:
      'Enable Polish (WebP/AVIF) or Cloudflare Images with resizing for images, keep compression on (brotli is automatic), and trim the' +
      ' JavaScript your pages load.',
  },
  requires: ['performance'],
  optional: ['page'],
  run: ({ performance, page }) => {
    const lengths = new Map<string, number>()
    for (const r of page?.requests ?? []) {
      const length = headerValue(r.headers, 'content-length')
      if (hasFullBody(r) && length && /^\d+$/.test(length) && !lengths.has(r.url)) lengths.set(r.url, Number(length))
    }
    const nav = performance.navigation
    const items: Array<{ url: string; type: string; bytes: number; estimated: boolean }> = []
    let unmeasured = 0
    if (nav) {
      const bytes = nav.transferSize > 0 ? nav.transferSize : ((page ? lengths.get(page.finalUrl) : undefined) ?? nav.encodedBodySize)
      items.push({ url: page?.finalUrl ?? 'document', type: 'document', bytes, estimated: nav.transferSize === 0 })
    }
    for (const r of performance.resources) {
      if (r.transferSize > 0) {
        items.push({ url: r.url, type: r.initiatorType, bytes: r.transferSize, estimated: false })
        continue
      }
      // 0 means cached, or a cross-origin resource hiding its size: fall back to what the response said.
      const length = r.encodedBodySize > 0 ? r.encodedBodySize : lengths.get(r.url)
      if (length !== undefined && length > 0) items.push({ url: r.url, type: r.initiatorType, bytes: length, estimated: true })
      else unmeasured++
    }
    const total = items.reduce((n, i) => n + i.bytes, 0)
    const byType: Record<string, number> = {}
    for (const i of items) byType[i.type] = (byType[i.type] ?? 0) + i.bytes
    const largest = [...items].sort((a, b) => b.bytes - a.bytes).slice(0, MAX_LISTED)
    const evidence = {
      totalBytes: total,
      total: formatBytes(total),
      requests: items.length + unmeasured,
      estimatedBytes: items.filter((i) => i.estimated).reduce((n, i) => n + i.bytes, 0),
      unmeasured,
      byType,
      largest: largest.map((i) => ({ url: displayUrl(i.url), type: i.type, bytes: i.bytes, ...(i.estimated ? { estimated: true } : {}) })),
      thresholds: { warn: PAGE_WEIGHT_WARN, fail: PAGE_WEIGHT_FAIL },
    }
    const top = largest[0]
    const biggest = top ? `; largest: ${displayUrl(top.url, 100)} (${formatBytes(top.bytes)})` : ''
    if (total > PAGE_WEIGHT_FAIL) {
      return {
        status: 'fail',
        evidence,
        summary: `The page transferred ${formatBytes(total)} while loading (over ${formatBytes(PAGE_WEIGHT_FAIL)})${biggest}.`,
      }
    }
    if (total > PAGE_WEIGHT_WARN) {
      return {
        status: 'warn',
        severity: 'low',
        evidence,
        summary: `The page transferred ${formatBytes(total)} while loading (over ${formatBytes(PAGE_WEIGHT_WARN)})${biggest}.`,
      }
    }
    return { status: 'pass', evidence, summary: `The page transferred ${formatBytes(total)} in ${evidence.requests} response(s).` }
  },
})
