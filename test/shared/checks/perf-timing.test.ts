import { describe, expect, test } from 'bun:test'
import { perfTiming } from '../../../shared/checks/performance/perf-timing.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const nav = (ttfb: number, load: number) => ({
  ttfb,
  domContentLoaded: Math.min(load, ttfb + 100),
  load,
  transferSize: 2_000,
  encodedBodySize: 1_700,
  decodedBodySize: 4_000,
})
const run = (ttfb: number, load: number) => perfTiming.run(makeArtifacts({ performance: { navigation: nav(ttfb, load), resources: [] } }))

describe('perf-timing', () => {
  test('reports a fast page as info with its numbers', () => {
    const r = perfTiming.run(makeArtifacts())
    expect(r.status).toBe('info')
    expect(r.evidence).toMatchObject({ ttfbMs: 80, domContentLoadedMs: 250, loadMs: 400 })
    expect(r.summary).toContain('80 ms')
  })

  test('warns when the first byte takes more than 800 ms', () => {
    const r = run(1_200, 1_800)
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('first byte after 1200 ms')
    expect(run(800, 1_000).status).toBe('info')
  })

  test('warns when the load event ends after 4 s', () => {
    const r = run(100, 5_000)
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('load event at 5000 ms')
  })

  test('does not judge a load event that had not finished', () => {
    const r = run(100, 0)
    expect(r.status).toBe('info')
    expect(r.evidence.loadMs).toBeNull()
  })

  test('is info without navigation timing and skipped without timings', () => {
    expect(perfTiming.run(makeArtifacts({ performance: { navigation: null, resources: [] } })).status).toBe('info')
    expect(runCheck(perfTiming, makeArtifacts({ performance: null })).status).toBe('skipped')
  })
})
