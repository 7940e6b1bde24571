import { describe, expect, test } from 'bun:test'
import { perfCaching } from '../../../shared/checks/performance/perf-caching.ts'
import type { BrowserRequest } from '../../../shared/checks/types.ts'
import { makeArtifacts, request, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const asset = (url: string, type: string, headers: Record<string, string>) =>
  request(url, type, { headers: { 'content-length': '20000', ...headers } })
const run = (...requests: BrowserRequest[]) =>
  perfCaching.run(makeArtifacts({ page: { requests: [request(SITE, 'document'), ...requests] } }))

describe('perf-caching', () => {
  test('passes the default page', () => {
    expect(perfCaching.run(makeArtifacts()).status).toBe('pass')
  })

  test('warns on first-party scripts, styles, fonts and images without Cache-Control or Expires', () => {
    const r = run(
      asset('https://example.com/app.js', 'script', { etag: '"abc"' }),
      asset('https://example.com/site.css', 'stylesheet', {}),
      asset('https://example.com/inter.woff2', 'font', { 'cache-control': 'public, max-age=31536000, immutable' }),
      asset('https://example.com/logo.png', 'image', { expires: 'Thu, 01 Dec 2030 16:00:00 GMT' }),
    )
    expect(r.status).toBe('warn')
    expect(r.evidence.uncachedCount).toBe(2)
    expect(r.evidence.staticAssets).toBe(4)
    const listed = r.evidence.uncached as Array<{ url: string; validators: string[] }>
    expect(listed.find((u) => u.url.endsWith('app.js'))!.validators).toEqual(['etag'])
  })

  test('any explicit policy passes, even no-cache', () => {
    expect(run(asset('https://example.com/app.js', 'script', { 'cache-control': 'no-cache' })).status).toBe('pass')
  })

  test('leaves out third-party assets, tiny assets, documents and API calls', () => {
    const r = run(
      asset('https://fonts.vendor.net/f.woff2', 'font', {}),
      request('https://example.com/tiny.js', 'script', { headers: { 'content-length': '300' } }),
      asset('https://example.com/api/me', 'fetch', {}),
    )
    expect(r.status).toBe('pass')
    expect(r.evidence.smallUncached).toBe(1)
  })

  test('is skipped without a page', () => {
    expect(runCheck(perfCaching, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
