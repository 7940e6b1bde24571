import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { CHECKS, CHECKS_VERSION, getCheck } from '../../../shared/checks/registry.ts'
import { defineCheck } from '../../../shared/checks/types.ts'
import { runCheck, runChecks } from '../../../shared/checks/runner.ts'
import { buildReport, type CheckResult } from '../../../shared/report/scan-report.ts'
import { CheckResultSchema, ReportSchema } from '../../../shared/report/schema.ts'
import { GOOD_HEADERS, makeArtifacts, probe, withHeaders } from '../checks/artifacts.ts'
import { PROBE_PATHS } from '../../../shared/checks/probe-paths.ts'

const SHELL =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<meta name="description" content="The example app."><link rel="canonical" href="https://example.com/"><title>App</title>' +
  '<script type="module" src="/assets/index-3f2a.js"></script></head><body><main id="root"></main></body></html>'

/** A site that does everything right: every header, a complete document, every probed path the SPA shell. */
function wellConfigured() {
  return makeArtifacts({
    mainResponse: {
      ...withHeaders({ 'permissions-policy': 'camera=(), microphone=()', 'cross-origin-opener-policy': 'same-origin' }, GOOD_HEADERS),
      body: SHELL,
    },
    page: { html: SHELL },
    probes: Object.fromEntries(PROBE_PATHS.map((p) => [p, probe(p, SHELL, 200, 'text/html')])),
  })
}

const META = {
  id: 'scn_1',
  url: 'https://example.com/',
  finalUrl: 'https://example.com/',
  createdAt: '2026-01-02T03:04:05.000Z',
  timings: { total: 1234 },
}

describe('runChecks', () => {
  test('runs every registered check once, in registry order', () => {
    const results = runChecks(makeArtifacts())
    expect(results.map((r) => r.id)).toEqual(CHECKS.map((c) => c.id))
    for (const r of results) expect(Value.Check(CheckResultSchema, r)).toBe(true)
  })

  test('a well-configured site raises no failure or warning and skips nothing', () => {
    const results = runChecks(wellConfigured())
    expect(results.filter((r) => r.status !== 'pass' && r.status !== 'info').map((r) => `${r.id}:${r.status}`)).toEqual([])
  })

  test('a check whose required artifact is null is skipped; one that only reads it optionally still runs', () => {
    const results = runChecks(makeArtifacts({ page: null, httpRedirect: null }))
    const byId = Object.fromEntries(results.map((r) => [r.id, r]))
    expect(byId['mixed-content']!.status).toBe('skipped')
    expect(byId['mixed-content']!.evidence).toEqual({ missing: ['page'] })
    expect(byId['https-redirect']!.status).toBe('skipped')
    expect(byId.csp!.status).toBe('pass')
    expect(byId['cookie-secure']!.status).toBe('pass')
  })

  test('a check that throws yields status error with the message and does not stop the scan', () => {
    const broken = defineCheck({
      id: 'broken',
      category: 'security',
      title: 'Broken',
      description: 'd',
      why: 'w',
      confirmation: 'c',
      severity: 'low',
      fix: { generic: 'g' },
      requires: ['mainResponse'],
      run: () => {
        throw new Error('boom')
      },
    })
    const r = runCheck(broken, makeArtifacts())
    expect(r).toMatchObject({ id: 'broken', status: 'error', evidence: { error: 'boom' } })
  })

  test('a check sees only the artifacts it declares', () => {
    let seen: string[] = []
    const spy = defineCheck({
      id: 'spy',
      category: 'security',
      title: 'Spy',
      description: 'd',
      why: 'w',
      confirmation: 'c',
      severity: 'low',
      fix: { generic: 'g' },
      requires: ['mainResponse'],
      optional: ['page'],
      run: (a) => {
        seen = Object.keys(a)
        return { status: 'pass', evidence: {}, summary: 's' }
      },
    })
    runCheck(spy, makeArtifacts())
    expect(seen.sort()).toEqual(['mainResponse', 'page'])
  })

  test('uses the outcome severity when the check overrides it', () => {
    const results = runChecks(makeArtifacts({ mainResponse: withHeaders({ 'strict-transport-security': 'max-age=60' }) }))
    expect(results.find((r) => r.id === 'hsts')).toMatchObject({ status: 'warn', severity: 'medium' })
  })
})

describe('buildReport', () => {
  const good = wellConfigured()
  const badSite = {
    ...good,
    mainResponse: {
      ...good.mainResponse,
      ...withHeaders(
        { 'content-security-policy': null, 'x-content-type-options': null, 'referrer-policy': null, server: 'nginx/1.18.0' },
        good.mainResponse.headers,
      ),
      setCookies: ['sid=abc; Path=/'],
    },
  }

  test('scores, grades and counts the results', () => {
    const report = buildReport(META, runChecks(badSite))
    // csp 25 + nosniff 5 + referrer warn 2 + cookie-secure 40 + cookie-httponly 30 + samesite warn 5 + version 5
    expect(report.score).toBe(0)
    expect(report.grade).toBe('F')
    expect(report.summary).toMatchObject({ fail: 5, warn: 2 })
    expect(report.checksVersion).toBe(CHECKS_VERSION)
    expect(Value.Check(ReportSchema, report)).toBe(true)
  })

  test('advice lists only fail and warn, highest impact first (then severity, then id), with the generic fix', () => {
    const report = buildReport(META, runChecks(badSite))
    expect(report.advice.map((a) => a.checkId)).toEqual([
      'cookie-secure',
      'cookie-httponly',
      'csp',
      'version-disclosure',
      'x-content-type-options',
      'cookie-samesite',
      'referrer-policy',
    ])
    expect(report.advice[0]).toMatchObject({ status: 'fail', severity: 'high', impact: 40, advice: getCheck('cookie-secure')!.fix.generic })
  })

  test('ties in impact are broken by severity', () => {
    const r = (id: string, severity: CheckResult['severity']): CheckResult => ({
      id,
      title: id,
      category: 'security',
      severity,
      status: 'fail',
      summary: '',
      evidence: {},
    })
    const report = buildReport(META, [r('x-content-type-options', 'low'), r('version-disclosure', 'medium')])
    expect(report.advice.map((a) => a.checkId)).toEqual(['version-disclosure', 'x-content-type-options'])
  })

  test('each check carries advice only when it failed or warned', () => {
    const report = buildReport(META, runChecks(badSite))
    for (const c of report.checks) {
      // A check that computes its advice from the evidence (csp: a policy from the page) gives that; the others their fix.
      const check = getCheck(c.id)!
      if (c.status === 'fail' || c.status === 'warn') expect(c.advice).toBe(check.advise?.(c, 'generic') ?? check.fix.generic)
      else expect(c.advice).toBeNull()
    }
  })

  test('a clean site gets 100 and A+', () => {
    const report = buildReport(META, runChecks(wellConfigured()))
    expect(report).toMatchObject({ score: 100, grade: 'A+', advice: [], timings: { total: 1234 }, createdAt: META.createdAt })
  })
})
