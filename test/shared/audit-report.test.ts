// The audit result: the same problem on many pages is one finding listing them; the site score comes
// from each check's worst outcome, through the one scoring table.
import { describe, expect, test } from 'bun:test'
import { buildAuditResult, fingerprintOf, MAX_FINDING_PAGES, type AuditPageInput } from '../../shared/audit-report.ts'
import type { CheckResult } from '../../shared/report.ts'
import { gradeOf, scoreOf } from '../../shared/scoring.ts'

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
