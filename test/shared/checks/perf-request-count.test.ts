import { describe, expect, test } from 'bun:test'
import { perfRequestCount } from '../../../shared/checks/performance/perf-request-count.ts'
import { makeArtifacts, request, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const withRequests = (n: number) =>
  makeArtifacts({
    page: {
      requests: [request(SITE, 'document'), ...Array.from({ length: n - 1 }, (_, i) => request(`https://example.com/i${i}.png`, 'image'))],
    },
  })

describe('perf-request-count', () => {
  test('passes the small default page', () => {
    const r = perfRequestCount.run(makeArtifacts())
    expect(r.status).toBe('pass')
    expect(r.evidence.requests).toBe(2)
  })

  test('warns above 80 and fails above 150 requests', () => {
    expect(perfRequestCount.run(withRequests(80)).status).toBe('pass')
    const warn = perfRequestCount.run(withRequests(81))
    expect(warn.status).toBe('warn')
    expect(warn.evidence.byType).toEqual({ document: 1, image: 80 })
    expect(perfRequestCount.run(withRequests(151)).status).toBe('fail')
  })

  test('does not count data: and blob: URLs', () => {
    const artifacts = makeArtifacts({
      page: { requests: [request(SITE, 'document'), ...Array.from({ length: 100 }, () => request('data:image/png;base64,AAAA', 'image'))] },
    })
    expect(perfRequestCount.run(artifacts).evidence.requests).toBe(1)
  })

  test('counts resource timings when the request log is missing', () => {
    const r = runCheck(perfRequestCount, makeArtifacts({ page: null }))
    expect(r.evidence).toMatchObject({ requests: 2, source: 'resource timings' })
  })

  test('is skipped without browser timings', () => {
    expect(runCheck(perfRequestCount, makeArtifacts({ performance: null })).status).toBe('skipped')
  })
})
