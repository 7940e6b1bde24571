import { describe, expect, test } from 'bun:test'
import { perfCompression } from '../../../shared/checks/performance/perf-compression.ts'
import type { BrowserRequest } from '../../../shared/checks/types.ts'
import { makeArtifacts, request, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const js = (url: string, bytes: number | null, encoding?: string, extra: Partial<BrowserRequest> = {}) =>
  request(url, 'script', {
    headers: {
      'content-type': 'application/javascript; charset=utf-8',
      ...(bytes !== null ? { 'content-length': String(bytes) } : {}),
      ...(encoding ? { 'content-encoding': encoding } : {}),
    },
    ...extra,
  })
const run = (...requests: BrowserRequest[]) =>
  perfCompression.run(makeArtifacts({ page: { requests: [request(SITE, 'document'), ...requests] } }))

describe('perf-compression', () => {
  test('passes the default page', () => {
    expect(perfCompression.run(makeArtifacts()).status).toBe('pass')
  })

  test('warns on uncompressed first-party text over 1 KB, listing the biggest first', () => {
    const r = run(
      js('https://example.com/assets/small.js', 5_000),
      js('https://example.com/assets/vendor.js', 300_000),
      request('https://example.com/app.css', 'stylesheet', { headers: { 'content-type': 'text/css', 'content-length': '40000' } }),
      request('https://example.com/api/data', 'fetch', { headers: { 'content-type': 'application/json', 'content-length': '9000' } }),
    )
    expect(r.status).toBe('warn')
    const listed = r.evidence.uncompressed as Array<{ url: string; bytes: number; contentType: string }>
    expect(listed.map((u) => u.url)).toEqual([
      'https://example.com/assets/vendor.js',
      'https://example.com/app.css',
      'https://example.com/api/data',
      'https://example.com/assets/small.js',
    ])
    expect(listed[1]!.contentType).toBe('text/css')
    expect(r.summary).toContain('vendor.js')
  })

  test('does not require compression under 1 KB', () => {
    expect(run(js('https://example.com/tiny.js', 900), js('https://example.com/edge.js', 1024)).status).toBe('pass')
  })

  test('passes gzip, br and zstd; identity is not compression', () => {
    expect(
      run(
        js('https://example.com/a.js', 90_000, 'br'),
        js('https://example.com/b.js', 90_000, 'gzip'),
        js('https://example.com/c.js', 90_000, 'zstd'),
      ).status,
    ).toBe('pass')
    expect(run(js('https://example.com/d.js', 90_000, 'identity')).status).toBe('warn')
  })

  test('ignores binary types, failed and partial responses', () => {
    const r = run(
      request('https://example.com/photo.jpg', 'image', { headers: { 'content-type': 'image/jpeg', 'content-length': '900000' } }),
      js('https://example.com/failed.js', 90_000, undefined, { status: 0 }),
      js('https://example.com/range.js', 90_000, undefined, { status: 206 }),
    )
    expect(r.status).toBe('pass')
  })

  test('counts a subdomain of the same registrable domain as first-party', () => {
    const artifacts = makeArtifacts({
      target: { url: 'https://www.example.com/', finalUrl: 'https://www.example.com/', origin: 'https://www.example.com', scheme: 'https' },
      mainResponse: { url: 'https://www.example.com/' },
      page: { finalUrl: 'https://www.example.com/', requests: [js('https://cdn.example.com/app.js', 50_000)] },
    })
    expect(perfCompression.run(artifacts).status).toBe('warn')
  })

  test('third-party uncompressed text is reported, not judged', () => {
    const r = run(js('https://widgets.vendor.net/w.js', 80_000))
    expect(r.status).toBe('pass')
    expect(r.evidence.thirdPartyUncompressed).toBe(1)
  })

  test('takes the size from resource timings when there is no Content-Length, and counts unknown sizes', () => {
    const artifacts = makeArtifacts({
      page: {
        requests: [request(SITE, 'document'), js('https://example.com/chunked.js', null), js('https://example.com/unknown.js', null)],
      },
      performance: {
        navigation: null,
        resources: [
          {
            url: 'https://example.com/chunked.js',
            initiatorType: 'script',
            transferSize: 60_300,
            encodedBodySize: 60_000,
            decodedBodySize: 60_000,
            duration: 5,
          },
        ],
      },
    })
    const r = perfCompression.run(artifacts)
    expect(r.status).toBe('warn')
    expect(r.evidence).toMatchObject({ uncompressedCount: 1, unknownSize: 1 })
  })

  test('is skipped without a page', () => {
    expect(runCheck(perfCompression, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
