// Every check has a title for a failure that names the problem, and a failing result carries it: in the
// report's checks and advice, in an audit's findings, and in a fix brief.
import { describe, expect, test } from 'bun:test'
import { brief } from '../../../api/findings/fix-brief.ts'
import { buildReport } from '../../../shared/report/scan-report.ts'
import { CHECKS } from '../../../shared/checks/registry.ts'
import { runCheck, titleFor } from '../../../shared/checks/runner.ts'
import { makeArtifacts, withHeaders } from './artifacts.ts'

describe('failing titles', () => {
  test('every registered check has a failing title that differs from its passing one', () => {
    const missing: string[] = []
    for (const c of CHECKS) {
      if (!c.failTitle || c.failTitle.trim() === '' || c.failTitle === c.title) missing.push(c.id)
    }
    expect(missing).toEqual([])
  })

  test('a failing title is a phrase of its own, not the passing title in other case', () => {
    for (const c of CHECKS) {
      expect(c.failTitle!.length).toBeGreaterThan(5)
      expect(c.failTitle!.toLowerCase()).not.toBe(c.title.toLowerCase())
    }
  })

  test('titleFor: fail and warn read as the problem, every other status as the check', () => {
    const check = { title: 'Session cookies are HttpOnly', failTitle: 'Session cookies are not HttpOnly' }
    expect(titleFor(check, 'fail')).toBe('Session cookies are not HttpOnly')
    expect(titleFor(check, 'warn')).toBe('Session cookies are not HttpOnly')
    for (const s of ['pass', 'info', 'skipped', 'error'] as const) expect(titleFor(check, s)).toBe('Session cookies are HttpOnly')
    expect(titleFor({ title: 'T' }, 'fail')).toBe('T')
  })

  test('a scan whose session cookie lacks HttpOnly and whose CSP is missing shows the problems in checks, advice and the fix brief', () => {
    const artifacts = makeArtifacts({
      mainResponse: { ...withHeaders({ 'content-security-policy': null }), setCookies: ['session=abc; Path=/; Secure; SameSite=Lax'] },
    })
    const results = CHECKS.map((c) => runCheck(c, artifacts as never))
    const byId = new Map(results.map((r) => [r.id, r]))
    expect(byId.get('cookie-httponly')!.status).toBe('fail')
    expect(byId.get('cookie-httponly')!.title).toBe('Session cookies are not HttpOnly')
    expect(byId.get('csp')!.title).toBe('Content-Security-Policy does not restrict scripts')
    // A passing check keeps the title of what it checks.
    expect(byId.get('x-content-type-options')!.status).toBe('pass')
    expect(byId.get('x-content-type-options')!.title).toBe('X-Content-Type-Options is nosniff')

    const report = buildReport(
      { id: 'scn_x', url: 'https://example.com/', finalUrl: 'https://example.com/', createdAt: new Date().toISOString(), timings: {} },
      results,
    )
    const advice = report.advice.find((a) => a.checkId === 'cookie-httponly')!
    expect(advice.title).toBe('Session cookies are not HttpOnly')
    const item = brief(report.checks.find((c) => c.id === 'cookie-httponly')!, 'generic', report, 'https://example.com/')
    expect(item.title).toBe('Session cookies are not HttpOnly')
    // A stored report written before failing titles existed is shown with the failing title too.
    const old = { ...report.checks.find((c) => c.id === 'csp')!, title: 'Content-Security-Policy restricts scripts' }
    expect(brief(old, 'generic', report, 'https://example.com/').title).toBe('Content-Security-Policy does not restrict scripts')
  })

  test('a failing title never says more than its evidence shows', () => {
    const byId = (overrides: Parameters<typeof makeArtifacts>[0]) =>
      new Map(CHECKS.map((c) => runCheck(c, makeArtifacts(overrides) as never)).map((r) => [r.id, r]))
    // Both cookies carry Secure, but the site is plain http: the problem is the transport, not the flag.
    const http = 'http://example.com/'
    const overHttp = byId({
      target: { url: http, finalUrl: http, origin: 'http://example.com', scheme: 'http' },
      mainResponse: { url: http, setCookies: ['sid=a; Path=/; Secure; HttpOnly; SameSite=Lax', 'pref=b; Path=/; Secure; SameSite=Lax'] },
    })
    expect(overHttp.get('cookie-secure')!.status).toBe('warn')
    expect(overHttp.get('cookie-secure')!.title).toBe('Cookies are set over plain http')
    // SameSite=None is declared: the problem is the missing Secure.
    const none = byId({ mainResponse: { setCookies: ['sid=a; Path=/; HttpOnly; SameSite=None'] } })
    expect(none.get('cookie-samesite')!.status).toBe('fail')
    expect(none.get('cookie-samesite')!.title).toBe('Cookies are SameSite=None without Secure')
    const missing = byId({ mainResponse: { setCookies: ['sid=a; Path=/; HttpOnly; Secure'] } })
    expect(missing.get('cookie-samesite')!.title).toBe('Cookies do not declare SameSite')
    // A bare product name announces no version.
    const bare = byId({ mainResponse: withHeaders({ 'x-powered-by': 'Express' }) })
    expect(bare.get('version-disclosure')!.status).toBe('warn')
    expect(bare.get('version-disclosure')!.title).toBe('Server software is named in headers')
    const versioned = byId({ mainResponse: withHeaders({ server: 'nginx/1.18.0' }) })
    expect(versioned.get('version-disclosure')!.title).toBe('Server software versions are announced')
    // A stored result is shown with the title its evidence gives, whatever title was stored with it.
    const stored = { ...overHttp.get('cookie-secure')!, title: 'Cookies are not marked Secure', advice: null }
    expect(brief(stored, 'generic', { checks: [stored] } as never, http).title).toBe('Cookies are set over plain http')
    expect(titleFor(CHECKS.find((c) => c.id === 'cookie-secure')!, 'warn', { plainHttp: 'yes' })).toBe('Cookies are not marked Secure')
    expect(titleFor(CHECKS.find((c) => c.id === 'version-disclosure')!, 'warn', { disclosures: [null, 3] })).toBe(
      'Server software versions are announced',
    )
  })
})
