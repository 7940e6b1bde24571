// The build gate's rules, on plain values: fingerprints, thresholds, and the baseline file.
import { describe, expect, test } from 'bun:test'
import {
  baselineOf,
  compareWithBaseline,
  type Finding,
  findingsOfAudit,
  findingsOfReport,
  fingerprintOf,
  judge,
  parseBaseline,
  unguardedNotice,
} from '../../cli/gates.ts'

const finding = (checkId: string, severity: Finding['severity'], status: Finding['status'] = 'fail'): Finding => ({
  fingerprint: `${checkId}:0000000000000000`,
  checkId,
  title: checkId,
  severity,
  status,
})

const check = (id: string, status: string, severity: string, summary = `${id} summary`) => ({
  id,
  title: id,
  category: 'security' as const,
  severity: severity as Finding['severity'],
  status: status as 'fail',
  summary,
  evidence: {},
  advice: null,
})

describe('fingerprints', () => {
  test('are the check id and a hash of the summary, blind to the target origin and to numbers', () => {
    const a = fingerprintOf('exposed-env-file', 'http://127.0.0.1:4001/.env is served (12 lines)', 'http://127.0.0.1:4001/')
    const b = fingerprintOf('exposed-env-file', 'http://127.0.0.1:5002/.env is served (13 lines)', 'http://127.0.0.1:5002/')
    expect(a).toMatch(/^exposed-env-file:[0-9a-f]{16}$/)
    expect(a).toBe(b)
  })

  test('change when the summary names something else', () => {
    const url = 'https://app.example.com/'
    expect(fingerprintOf('js-secrets', 'A Stripe live key in /app.js', url)).not.toBe(
      fingerprintOf('js-secrets', 'An AWS key in /app.js', url),
    )
    expect(fingerprintOf('csp', 'x', url)).not.toBe(fingerprintOf('hsts', 'x', url))
  })
})

describe('findings', () => {
  test('of a scan are its failed and warned checks, most severe first', () => {
    const report = {
      url: 'https://app.example.com/',
      checks: [check('seo-lang', 'warn', 'low'), check('hsts', 'pass', 'high'), check('csp', 'fail', 'high'), check('tls', 'info', 'info')],
    }
    expect(findingsOfReport(report).map((f) => [f.checkId, f.status])).toEqual([
      ['csp', 'fail'],
      ['seo-lang', 'warn'],
    ])
  })

  test('of an audit are fingerprinted the same way as a scan, so one baseline serves both', () => {
    const url = 'https://app.example.com/'
    const fromScan = findingsOfReport({ url, checks: [check('csp', 'fail', 'high', 'No CSP')] })
    const fromAudit = findingsOfAudit({
      url,
      findings: [{ fingerprint: 'csp:server', checkId: 'csp', title: 'csp', severity: 'high', status: 'fail', summary: 'No CSP' } as never],
    })
    expect(fromAudit[0]!.fingerprint).toBe(fromScan[0]!.fingerprint)
  })
})

describe('thresholds', () => {
  const findings = [
    finding('exposed-env-file', 'critical'),
    finding('csp', 'high'),
    finding('seo-lang', 'low', 'warn'),
    finding('x', 'info'),
  ]

  test('a score equal to --min-score passes and one below fails', () => {
    expect(judge(70, [], { minScore: 70 }).passed).toBe(true)
    const v = judge(69, [], { minScore: 70 })
    expect(v.passed).toBe(false)
    expect(v.failures).toEqual(['score 69 is below --min-score 70'])
  })

  test('--fail-on counts failed and warned findings at or above the level, never info', () => {
    expect(judge(50, findings, { failOn: 'critical' }).counted.map((f) => f.checkId)).toEqual(['exposed-env-file'])
    expect(judge(50, findings, { failOn: 'low' }).counted.map((f) => f.checkId)).toEqual(['exposed-env-file', 'csp', 'seo-lang'])
    expect(judge(50, [finding('x', 'info')], { failOn: 'low' }).passed).toBe(true)
  })

  test('with a baseline only new findings count, and any new one of low or above fails without --fail-on', () => {
    expect(judge(50, findings, { failOn: 'high' }, []).passed).toBe(true)
    const v = judge(50, findings, {}, [finding('seo-lang', 'low', 'warn')])
    expect(v.passed).toBe(false)
    expect(v.failures).toEqual(['1 new finding at or above low: seo-lang (low)'])
  })

  test('no threshold never fails', () => {
    expect(judge(0, findings, {})).toEqual({ passed: true, failures: [], counted: [] })
  })

  test('the score stays absolute with a baseline', () => {
    expect(judge(40, findings, { minScore: 50 }, []).passed).toBe(false)
  })
})

describe('a run that nothing gates', () => {
  test('says no threshold was set when it found critical findings, and nothing otherwise', () => {
    const found = [finding('exposed-env-file', 'critical'), finding('csp', 'high'), finding('leaked-key', 'critical')]
    expect(unguardedNotice(found, {}, false)).toStartWith(
      'no threshold was set, so 2 critical findings (exposed-env-file, leaked-key) did not fail the build',
    )
    expect(unguardedNotice([finding('csp', 'high')], {}, false)).toBeUndefined()
    expect(unguardedNotice(found, { minScore: 0 }, false)).toBeUndefined()
    expect(unguardedNotice(found, { failOn: 'low' }, false)).toBeUndefined()
    expect(unguardedNotice(found, {}, true)).toBeUndefined()
  })
})

describe('baseline files', () => {
  const head = [finding('csp', 'high'), finding('hsts', 'high')]

  test('round-trip through JSON and compare by fingerprint', () => {
    const file = baselineOf(
      'scan',
      'scn_1',
      'https://app.example.com/',
      60,
      [finding('csp', 'high'), finding('cors', 'critical')],
      new Date(0),
    )
    const parsed = parseBaseline(JSON.stringify(file))
    if (typeof parsed === 'string') throw new Error(parsed)
    const cmp = compareWithBaseline(parsed, head)
    expect(cmp.new.map((f) => f.checkId)).toEqual(['hsts'])
    expect(cmp.fixed.map((f) => f.checkId)).toEqual(['cors'])
    expect(cmp.unchanged.map((f) => f.checkId)).toEqual(['csp'])
  })

  test.each([
    ['not json', 'not JSON'],
    ['{"a":1}', 'not a baseline'],
    ['{"appaudit":"baseline","version":2}', 'version 2'],
    ['{"appaudit":"baseline","version":1,"id":"scn_1","url":"u","findings":[{"checkId":"csp"}]}', 'lacks its fingerprint'],
  ])('a file that is %p is refused, saying why', (text, why) => {
    expect(parseBaseline(text)).toContain(why)
  })
})
