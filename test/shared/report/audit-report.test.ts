// The audit result: the same problem on many pages is one finding listing them; the site score comes
// from each check's worst outcome, through the one scoring table.
import { describe, expect, test } from 'bun:test'
import { buildAuditResult, fingerprintOf, MAX_FINDING_PAGES, type AuditPageInput } from '../../../shared/report/audit-report.ts'
import type { CheckResult } from '../../../shared/report/scan-report.ts'
import { gradeOf, scoreOf } from '../../../shared/report/scoring.ts'

const check = (
  id: string,
  status: CheckResult['status'],
  evidence: Record<string, unknown> = {},
  severity: CheckResult['severity'] = 'medium',
): CheckResult => ({
  id,
  title: id,
  category: 'security',
  severity,
  status,
  summary: `${id} ${status}`,
  evidence,
})
const page = (path: string, checks: CheckResult[], ok = true): AuditPageInput => ({
  url: `https://www.example.com${path}`,
  finalUrl: `https://www.example.com${path}`,
  depth: 1,
  httpStatus: ok ? 200 : 500,
  ok,
  loadMs: 100,
  checks,
})
const meta = {
  auditId: 'aud_x',
  url: 'https://www.example.com/',
  stoppedBy: 'done' as const,
  pagesDiscovered: 3,
  finishedAt: '2026-11-23T00:00:00.000Z',
}

describe('fingerprints', () => {
  test('ignore the page address, numbers and key order, but not what the problem is', () => {
    const a = { url: 'https://www.example.com/a', finalUrl: 'https://www.example.com/a' }
    const b = { url: 'https://www.example.com/b', finalUrl: 'https://www.example.com/b' }
    expect(fingerprintOf(check('perf-page-weight', 'warn', { bytes: 812_000, page: a.url }), a)).toBe(
      fingerprintOf(check('perf-page-weight', 'warn', { page: b.url, bytes: 790_000 }), b),
    )
    expect(fingerprintOf(check('csp', 'fail', { header: null, seenAt: `${a.url}#x` }), a)).toBe(
      fingerprintOf(check('csp', 'fail', { header: null, seenAt: `${b.url}#x` }), b),
    )
    expect(fingerprintOf(check('js-secrets', 'fail', { script: 'https://www.example.com/app.js' }), a)).not.toBe(
      fingerprintOf(check('js-secrets', 'fail', { script: 'https://www.example.com/vendor.js' }), a),
    )
    expect(fingerprintOf(check('csp', 'fail'), a)).not.toBe(fingerprintOf(check('hsts', 'fail'), a))
  })
})

describe('buildAuditResult', () => {
  test('merges one problem seen on several pages into one finding with its pages', () => {
    const r = buildAuditResult(
      meta,
      [
        page('/', [check('csp', 'fail', { header: null }), check('hsts', 'pass')]),
        page('/a', [check('csp', 'fail', { header: null }), check('hsts', 'warn', { maxAge: 60 })]),
        page('/b', [check('csp', 'warn', { header: null }), check('hsts', 'pass')]),
      ],
      [],
    )
    const csp = r.findings.filter((f) => f.checkId === 'csp')
    expect(csp).toHaveLength(1)
    expect(csp[0]).toMatchObject({
      pageCount: 3,
      status: 'fail',
      pages: ['https://www.example.com/', 'https://www.example.com/a', 'https://www.example.com/b'],
    })
    expect(r.findings.find((f) => f.checkId === 'hsts')?.pages).toEqual(['https://www.example.com/a'])
    // Highest impact first.
    expect(r.findings[0]!.checkId).toBe('csp')
    expect(r.checks.find((c) => c.id === 'csp')).toMatchObject({ status: 'fail', pagesAffected: 3 })
  })

  test('scores the site from the worst outcome of each check, site-wide checks included', () => {
    const pages = [page('/', [check('csp', 'pass'), check('hsts', 'pass')]), page('/a', [check('csp', 'fail'), check('hsts', 'pass')])]
    const site = [check('exposed-env-file', 'fail', { path: '/.env' }, 'critical')]
    const r = buildAuditResult(meta, pages, site)
    const expected = scoreOf([check('csp', 'fail'), check('hsts', 'pass'), check('exposed-env-file', 'fail')])
    expect(r.score).toBe(expected)
    expect(r.grade).toBe(gradeOf(expected))
    expect(r.siteChecks).toEqual(site)
    const env = r.findings.find((f) => f.checkId === 'exposed-env-file')
    expect(env).toMatchObject({ pageCount: 0, pages: [], severity: 'critical' })
  })

  test('counts failed pages apart and gives them no score', () => {
    const r = buildAuditResult(meta, [page('/', [check('csp', 'pass')]), page('/broken', [], false)], [])
    expect(r).toMatchObject({ pagesScanned: 1, pagesFailed: 1, pagesDiscovered: 3 })
    expect(r.pages.find((p) => p.url.endsWith('/broken'))).toMatchObject({ ok: false, score: null, grade: null })
  })

  test('lists at most MAX_FINDING_PAGES pages per finding but counts them all', () => {
    const many = Array.from({ length: MAX_FINDING_PAGES + 20 }, (_, i) => page(`/p/${i}`, [check('csp', 'fail', { header: null })]))
    const [f] = buildAuditResult(meta, many, []).findings
    expect(f!.pageCount).toBe(MAX_FINDING_PAGES + 20)
    expect(f!.pages).toHaveLength(MAX_FINDING_PAGES)
  })
})

describe('findings merged by what they are about', () => {
  const axe = (rules: Array<{ id: string; impact: string; nodes: number; targets: string[] }>): CheckResult => ({
    ...check('accessibility', rules.some((r) => r.impact === 'serious' || r.impact === 'critical') ? 'fail' : 'warn'),
    category: 'accessibility',
    evidence: {
      engine: 'axe-core 4.11.0',
      violations: rules.length,
      listed: rules.map((r) => ({ ...r, help: `help for ${r.id}`, helpUrl: `https://dequeuniversity.com/rules/axe/${r.id}` })),
    },
  })

  test('accessibility: one finding per axe rule with its pages and the elements on each, whatever else the pages have', () => {
    const r = buildAuditResult(
      meta,
      [
        page('/', [axe([{ id: 'image-alt', impact: 'critical', nodes: 2, targets: ['img.a', 'img.b'] }])]),
        page('/a', [
          axe([
            { id: 'image-alt', impact: 'critical', nodes: 1, targets: ['#hero'] },
            { id: 'region', impact: 'moderate', nodes: 4, targets: ['p', 'div', 'span', 'h2'] },
          ]),
        ]),
        page('/b', [axe([{ id: 'region', impact: 'moderate', nodes: 1, targets: ['footer'] }])]),
      ],
      [],
    )
    const a11y = r.findings.filter((f) => f.checkId === 'accessibility')
    expect(a11y.map((f) => f.subject?.key).sort()).toEqual(['image-alt', 'region'])
    const alt = a11y.find((f) => f.subject?.key === 'image-alt')!
    expect(alt).toMatchObject({
      status: 'fail',
      pageCount: 2,
      pages: ['https://www.example.com/', 'https://www.example.com/a'],
      elements: 3,
      subject: { kind: 'axe-rule', key: 'image-alt' },
      targets: [
        { page: 'https://www.example.com/', nodes: 2, targets: ['img.a', 'img.b'] },
        { page: 'https://www.example.com/a', nodes: 1, targets: ['#hero'] },
      ],
    })
    expect(alt.summary).toContain('2 pages')
    const region = a11y.find((f) => f.subject?.key === 'region')!
    expect(region).toMatchObject({ status: 'warn', severity: 'low', pageCount: 2, elements: 5 })
    // Targets per page are bounded.
    expect(region.targets![0]!.targets).toHaveLength(3)
    expect(r.checks.find((c) => c.id === 'accessibility')).toMatchObject({ status: 'fail', pagesAffected: 3 })
    // Fingerprints name the rule, not the page, so they are stable from run to run.
    expect(alt.fingerprint).toBe(
      buildAuditResult(meta, [page('/z', [axe([{ id: 'image-alt', impact: 'serious', nodes: 9, targets: [] }])])], []).findings[0]!
        .fingerprint,
    )
  })

  const httponly = (names: string[]): CheckResult => ({
    ...check(
      'cookie-httponly',
      'fail',
      { cookies: names.length, sessionCookies: names, sessionWithoutHttpOnly: names, otherWithoutHttpOnly: [] },
      'high',
    ),
    category: 'cookies',
  })

  test('cookies: one finding per cookie, on the pages whose responses set it only', () => {
    const withSet = (p: AuditPageInput, cookiesSet: string[]): AuditPageInput => ({ ...p, cookiesSet })
    const r = buildAuditResult(
      meta,
      [
        withSet(page('/', [httponly(['sid', 'auth_token'])]), ['sid', 'auth_token', 'theme']),
        // The jar still holds sid here, but this page did not set it: not its finding.
        withSet(page('/a', [httponly(['sid'])]), []),
        withSet(page('/b', [httponly(['auth_token'])]), ['auth_token']),
        withSet(page('/c', [check('cookie-httponly', 'pass', { cookies: 0 })]), []),
      ],
      [],
    )
    const cookies = r.findings.filter((f) => f.checkId === 'cookie-httponly')
    expect(cookies.map((f) => [f.subject?.key, f.pages])).toEqual([
      ['auth_token', ['https://www.example.com/', 'https://www.example.com/b']],
      ['sid', ['https://www.example.com/']],
    ])
    expect(cookies.find((f) => f.subject?.key === 'sid')).toMatchObject({ pageCount: 1, status: 'fail', evidence: { cookie: 'sid' } })
    expect(r.checks.find((c) => c.id === 'cookie-httponly')?.pagesAffected).toBe(2)
  })

  test('cookies: pages stored before pages recorded what they set keep their findings', () => {
    const r = buildAuditResult(meta, [page('/', [httponly(['sid'])]), page('/a', [httponly(['sid'])])], [])
    expect(r.findings.find((f) => f.subject?.key === 'sid')?.pageCount).toBe(2)
  })

  test('third parties: one entry per host with its pages; third-party cookies one finding per host', () => {
    const requests = (hosts: string[]): CheckResult => ({
      ...check('third-party-requests', 'info', {
        hosts: hosts.map((host) => ({ host, domain: host, requests: 2, types: { script: 2 } })),
      }),
      category: 'privacy',
      severity: 'info',
    })
    const tpc = (domains: string[]): CheckResult => ({
      ...check('third-party-cookies', 'warn', {
        thirdParty: domains.map((d) => ({ name: `id_${d}`, domain: `.${d}` })),
      }),
      category: 'privacy',
    })
    const r = buildAuditResult(
      meta,
      [
        { ...page('/', [requests(['cdn.one.test', 'two.test']), tpc(['ads.test'])]), cookiesSet: ['id_ads.test'] },
        { ...page('/a', [requests(['cdn.one.test']), tpc(['ads.test'])]), cookiesSet: [] },
        page('/b', [requests(['cdn.one.test', 'two.test'])]),
      ],
      [],
    )
    expect(r.thirdParties.map((t) => [t.subject?.key, t.pageCount, t.status])).toEqual([
      ['cdn.one.test', 3, 'info'],
      ['two.test', 2, 'info'],
    ])
    expect(r.thirdParties[0]!.evidence).toMatchObject({ host: 'cdn.one.test', requests: 6, types: { script: 6 } })
    // Informational hosts are not findings (findings fail or warn) and cost nothing.
    expect(r.findings.some((f) => f.checkId === 'third-party-requests')).toBe(false)
    const cookieHosts = r.findings.filter((f) => f.checkId === 'third-party-cookies')
    expect(cookieHosts.map((f) => [f.subject?.key, f.pages])).toEqual([['ads.test', ['https://www.example.com/']]])
  })
})

describe('secrets and libraries across pages', () => {
  const secret = (value: string, extra: Record<string, unknown> = {}) => ({
    kind: 'stripe-secret-key',
    severity: 'critical',
    public: false,
    value,
    line: 1,
    ...extra,
  })
  const library = (id: string, version: string, fixedIn: string | null, scripts: string[]) => ({
    library: id === 'handlebars' ? 'Handlebars' : 'Moment',
    id,
    version,
    scripts,
    advisories: [{ ids: [`GHSA-${id}`], severity: 'high', summary: 's', fixedIn }],
    fixedVersion: fixedIn,
    upgrade: 'a fixed release',
  })

  test('the same secret and the same library on two pages are one finding each, listing both pages', () => {
    const bundle = 'https://www.example.com/assets/index.js'
    // /pricing loads one more chunk: the evidence differs, the secret and the library do not.
    const home = [
      check('js-secrets', 'fail', { scripts: 1, findings: [secret('sk_live_…abcd', { script: bundle })] }, 'critical'),
      check('vulnerable-js-library', 'fail', { findings: [library('handlebars', '4.0.11', '4.7.7', [bundle])] }, 'high'),
    ]
    const pricing = [
      check(
        'js-secrets',
        'fail',
        { scripts: 2, findings: [secret('sk_live_…abcd', { script: bundle }), secret('sk_live_…wxyz', { script: `${bundle}?chunk=2` })] },
        'critical',
      ),
      check(
        'vulnerable-js-library',
        'fail',
        { findings: [library('handlebars', '4.0.11', '4.7.7', [bundle]), library('moment', '2.29.1', '2.29.4', [`${bundle}?chunk=2`])] },
        'high',
      ),
    ]
    const r = buildAuditResult(meta, [page('/', home), page('/pricing', pricing)], [])
    const byKey = (id: string) => r.findings.filter((f) => f.checkId === id).map((f) => [f.subject?.key, f.pageCount, f.pages.length])
    expect(byKey('js-secrets').sort()).toEqual([
      ['stripe-secret-key sk_live_…abcd', 2, 2],
      ['stripe-secret-key sk_live_…wxyz', 1, 1],
    ])
    expect(byKey('vulnerable-js-library').sort()).toEqual([
      ['handlebars@4.0.11', 2, 2],
      ['moment@2.29.1', 1, 1],
    ])
    const handlebars = r.findings.find((f) => f.subject?.key === 'handlebars@4.0.11')!
    expect(handlebars.summary).toContain('Handlebars 4.0.11 has known vulnerabilities (GHSA-handlebars), fixed in 4.7.7; loaded on 2 pages')
    expect(handlebars.advice).toContain('npm install handlebars@^4.7.7')
    expect(handlebars.advice).not.toContain('jquery')
  })

  test('public-by-design keys and end-of-life-only libraries beside a finding are not findings of their own', () => {
    const r = buildAuditResult(
      meta,
      [
        page('/', [
          check('js-secrets', 'fail', {
            findings: [secret('sk_live_…abcd'), secret('pk_live_…abcd', { kind: 'stripe-publishable-key', public: true })],
          }),
          check('vulnerable-js-library', 'fail', {
            findings: [library('handlebars', '4.0.11', '4.7.7', []), { library: 'Vue', id: 'vue', version: '2.7.16', advisories: [] }],
          }),
        ]),
      ],
      [],
    )
    expect(r.findings.map((f) => f.subject?.key).sort()).toEqual(['handlebars@4.0.11', 'stripe-secret-key sk_live_…abcd'])
  })
})
