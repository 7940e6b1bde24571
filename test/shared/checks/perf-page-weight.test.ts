import { describe, expect, test } from 'bun:test'
import { perfPageWeight } from '../../../shared/checks/performance/perf-page-weight.ts'
import type { ResourceTiming } from '../../../shared/checks/types.ts'
import { makeArtifacts, request, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const resource = (url: string, transferSize: number, initiatorType = 'script', encodedBodySize = transferSize): ResourceTiming => ({
  url,
  initiatorType,
  transferSize,
  encodedBodySize,
  decodedBodySize: encodedBodySize,
  duration: 20,
})
const NAV = { ttfb: 80, domContentLoaded: 250, load: 400, transferSize: 2_000, encodedBodySize: 1_700, decodedBodySize: 4_000 }
const run = (resources: ResourceTiming[]) => perfPageWeight.run(makeArtifacts({ performance: { navigation: NAV, resources } }))

describe('perf-page-weight', () => {
  test('passes the small default page', () => {
    const r = perfPageWeight.run(makeArtifacts())
    expect(r.status).toBe('pass')
    expect(r.evidence.totalBytes).toBe(14_000)
  })

  test('warns above 2 MB, listing the largest resources first', () => {
    const r = run([resource('https://example.com/hero.jpg', 1_500_000, 'img'), resource('https://example.com/app.js', 800_000)])
    expect(r.status).toBe('warn')
    expect(r.evidence.totalBytes).toBe(2_302_000)
    expect((r.evidence.largest as Array<{ url: string }>)[0]!.url).toBe('https://example.com/hero.jpg')
    expect(r.summary).toContain('2.3 MB')
  })

  test('fails above 5 MB', () => {
    const r = run(Array.from({ length: 6 }, (_, i) => resource(`https://example.com/v${i}.mp4`, 1_000_000, 'video')))
    expect(r.status).toBe('fail')
    expect(r.evidence.byType).toMatchObject({ video: 6_000_000, document: 2_000 })
  })

  test('estimates cross-origin resources that hide their size from Content-Length, and counts the rest as unmeasured', () => {
    const artifacts = makeArtifacts({
      page: {
        requests: [
          request(SITE, 'document'),
          request('https://cdn.other.net/big.js', 'script', { headers: { 'content-length': '2500000' } }),
        ],
      },
      performance: {
        navigation: NAV,
        resources: [resource('https://cdn.other.net/big.js', 0), resource('https://cdn.other.net/hidden.js', 0)],
      },
    })
    const r = perfPageWeight.run(artifacts)
    expect(r.status).toBe('warn')
    expect(r.evidence).toMatchObject({ estimatedBytes: 2_500_000, unmeasured: 1 })
  })

  test('ignores query strings in listed URLs', () => {
    const r = run([resource('https://example.com/a.js?token=abc', 10)])
    expect(JSON.stringify(r.evidence)).not.toContain('token=abc')
  })

  test('is skipped without browser timings', () => {
    expect(runCheck(perfPageWeight, makeArtifacts({ performance: null })).status).toBe('skipped')
  })
})
