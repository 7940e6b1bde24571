import { describe, expect, test } from 'bun:test'
import { thirdPartyCookies } from '../../../shared/checks/privacy/third-party-cookies.ts'
import type { BrowserCookie } from '../../../shared/checks/types.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const cookie = (name: string, domain: string, value = 'secret-value-123'): BrowserCookie => ({
  name,
  value,
  domain,
  path: '/',
  secure: true,
  httpOnly: false,
  sameSite: 'None',
  expires: 2_000_000_000,
})
const run = (...cookies: BrowserCookie[]) => thirdPartyCookies.run(makeArtifacts({ page: { cookies } }))

describe('third-party-cookies', () => {
  test('passes without cookies, and with first-party session cookies', () => {
    expect(run().status).toBe('pass')
    expect(run(cookie('session', 'example.com'), cookie('prefs', '.example.com')).status).toBe('pass')
  })

  test('warns on third-party cookies with names and domains, never values', () => {
    const r = run(
      cookie('IDE', '.doubleclick.net'),
      cookie('test_cookie', '.doubleclick.net'),
      cookie('VISITOR_INFO1_LIVE', '.youtube.com'),
    )
    expect(r.status).toBe('warn')
    expect(r.evidence.thirdPartyCount).toBe(3)
    expect(r.evidence.thirdPartyDomains).toEqual({ 'doubleclick.net': 2, 'youtube.com': 1 })
    expect((r.evidence.thirdParty as Array<{ name: string; domain: string }>)[0]).toMatchObject({ name: 'IDE', domain: '.doubleclick.net' })
    expect(JSON.stringify(r.evidence)).not.toContain('secret-value-123')
    expect(r.summary).toContain('doubleclick.net')
  })

  test('a cookie on a subdomain of the site is first-party', () => {
    const www = 'https://www.example.com/'
    const r = thirdPartyCookies.run(
      makeArtifacts({
        target: { url: www, finalUrl: www, origin: 'https://www.example.com', scheme: 'https' },
        mainResponse: { url: www },
        page: { finalUrl: www, cookies: [cookie('cdn_lb', 'cdn.example.com'), cookie('sid', '.example.com')] },
      }),
    )
    expect(r.status).toBe('pass')
  })

  test('reports first-party analytics cookies set before consent as info, explaining jurisdiction', () => {
    const r = run(
      cookie('_ga', '.example.com'),
      cookie('_ga_ABC123', '.example.com'),
      cookie('_gid', '.example.com'),
      cookie('_fbp', '.example.com'),
      cookie('_hjSessionUser_123', 'example.com'),
    )
    expect(r.status).toBe('info')
    const listed = r.evidence.firstPartyAnalytics as Array<{ name: string; vendor: string }>
    expect(listed.map((c) => c.vendor)).toEqual(['Google Analytics', 'Google Analytics', 'Google Analytics', 'Meta Pixel', 'Hotjar'])
    expect(r.summary).toContain('jurisdiction')
    expect(thirdPartyCookies.confirmation).toContain('jurisdiction')
  })

  test('third-party cookies win over analytics ones', () => {
    expect(run(cookie('_ga', '.example.com'), cookie('IDE', '.doubleclick.net')).status).toBe('warn')
  })

  test('is skipped without a page', () => {
    expect(runCheck(thirdPartyCookies, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
