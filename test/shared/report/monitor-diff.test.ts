// Comparing two scans of a monitored page: what got worse, what got better, and when an earlier regression
// counts as resolved.
import { describe, expect, test } from 'bun:test'
import type { CheckStatus, Severity } from '../../../shared/checks/types.ts'
import { type ComparableReport, diffReports, type Regression, resolveRegressions } from '../../../shared/report/monitor-diff.ts'

const URL_ = 'https://app.example/'
type Check = ComparableReport['checks'][number]
const check = (id: string, status: CheckStatus, evidence: Record<string, unknown> = {}, severity: Severity = 'high'): Check => ({
  id,
  title: `${id} title`,
  severity,
  status,
  summary: `${id} is ${status}`,
  evidence,
})
const report = (score: number, checks: Check[], url = URL_): ComparableReport => ({ url, finalUrl: url, score, checks })
const open = (items: ReturnType<typeof diffReports>['regressions']): Regression[] =>
  items.map((i) => ({ ...i, resolvedAt: null, resolvedByScanId: null }))

describe('diffReports', () => {
  test('a lower score and a check from pass to fail are regressions, reported once each', () => {
    const before = report(90, [check('csp', 'pass'), check('hsts', 'pass')])
    const after = report(65, [check('csp', 'fail', { header: null }), check('hsts', 'pass')])
    const { regressions, improvements } = diffReports(before, after)
    expect(regressions).toEqual([
      { kind: 'score', from: 90, to: 65 },
      { kind: 'check', checkId: 'csp', title: 'csp title', severity: 'high', from: 'pass', to: 'fail' },
    ])
    expect(improvements).toEqual([])
  })

  test('a warning that now fails is worse; a failure that now only warns is better', () => {
    const d = diffReports(report(70, [check('a', 'warn'), check('b', 'fail')]), report(70, [check('a', 'fail'), check('b', 'warn')]))
    expect(d.regressions.map((r) => r.kind === 'check' && `${r.checkId}:${r.from}>${r.to}`)).toEqual(['a:warn>fail'])
    expect(d.improvements.map((r) => r.kind === 'check' && `${r.checkId}:${r.from}>${r.to}`)).toEqual(['b:fail>warn'])
  })

  test('new evidence on a check that already failed is a new finding; the old evidence gone is a fixed one', () => {
    const before = report(40, [check('js-secrets', 'fail', { script: `${URL_}app.js`, kind: 'stripe' })])
    const after = report(40, [check('js-secrets', 'fail', { script: `${URL_}vendor.js`, kind: 'aws' })])
    const d = diffReports(before, after)
    expect(d.regressions).toMatchObject([{ kind: 'finding', checkId: 'js-secrets', change: 'new', status: 'fail' }])
    expect(d.improvements).toMatchObject([{ kind: 'finding', checkId: 'js-secrets', change: 'fixed' }])
  })

  test('numbers and the page address in evidence do not make a finding new', () => {
    const before = report(80, [check('perf-page-weight', 'warn', { bytes: 812_000, page: URL_ })])
    const after = report(80, [check('perf-page-weight', 'warn', { bytes: 790_000, page: URL_ })])
    expect(diffReports(before, after)).toEqual({ regressions: [], improvements: [] })
  })

  test('a check that could not run before and fails now is a new finding, not a worsened check', () => {
    const d = diffReports(report(90, [check('hsts', 'skipped')]), report(80, [check('hsts', 'fail', { header: null })]))
    expect(d.regressions.map((r) => r.kind)).toEqual(['score', 'finding'])
  })

  test('a finding whose check is missing from the new report is not counted as fixed', () => {
    const d = diffReports(report(80, [check('old-check', 'fail')]), report(80, []))
    expect(d.improvements).toEqual([])
  })
})

describe('resolveRegressions', () => {
  const before = report(90, [check('csp', 'pass'), check('x-content-type-options', 'pass')])
  const worse = report(60, [check('csp', 'fail', { header: null }), check('x-content-type-options', 'warn', { value: 'nosnif' })])
  const items = open(diffReports(before, worse).regressions)

  test('keeps every item open while the later scan still shows it', () => {
    const r = resolveRegressions(items, worse, { scanId: 'scn_later', at: '2026-11-25T10:00:00.000Z' })
    expect(r).toMatchObject({ open: 3, changed: false })
  })

  test('resolves each item the later scan no longer shows, and names that scan', () => {
    const partly = report(75, [check('csp', 'pass'), check('x-content-type-options', 'warn', { value: 'nosnif' })])
    const r = resolveRegressions(items, partly, { scanId: 'scn_fix', at: '2026-11-25T10:00:00.000Z' })
    expect(r.open).toBe(2) // the score (75 < 90) and the warning are still there
    expect(r.items.find((i) => i.kind === 'check' && i.checkId === 'csp')).toMatchObject({ resolvedByScanId: 'scn_fix' })
    const fixed = resolveRegressions(r.items, before, { scanId: 'scn_all', at: '2026-11-26T10:00:00.000Z' })
    expect(fixed.open).toBe(0)
    // An item resolved earlier keeps the scan that resolved it.
    expect(fixed.items.find((i) => i.kind === 'check' && i.checkId === 'csp')).toMatchObject({ resolvedByScanId: 'scn_fix' })
  })
})
