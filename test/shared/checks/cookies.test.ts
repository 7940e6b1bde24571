import { describe, expect, test } from 'bun:test'
import { cookieHttpOnly } from '../../../shared/checks/cookies/cookie-httponly.ts'
import { cookieSameSite } from '../../../shared/checks/cookies/cookie-samesite.ts'
import { cookieSecure } from '../../../shared/checks/cookies/cookie-secure.ts'
import type { BrowserCookie } from '../../../shared/checks/types.ts'
import { firstPartyCookies, isSessionCookieName, parseSetCookie } from '../../../shared/checks/util/cookies.ts'
import { makeArtifacts } from './artifacts.ts'

const browserCookie = (name: string, extra: Partial<BrowserCookie> = {}): BrowserCookie => ({
  name,
  value: 'v',
  domain: 'example.com',
  path: '/',
  secure: true,
  httpOnly: true,
  sameSite: 'Lax',
  expires: -1,
  ...extra,
})

const withCookies = (setCookies: string[], browser: BrowserCookie[] = []) =>
  makeArtifacts({ mainResponse: { setCookies }, page: { cookies: browser } })

const httpSite = (setCookies: string[]) =>
  makeArtifacts({
    target: { url: 'http://example.com/', finalUrl: 'http://example.com/', scheme: 'http' },
    mainResponse: { url: 'http://example.com/', setCookies },
    page: { finalUrl: 'http://example.com/', cookies: [] },
  })

describe('Set-Cookie parser', () => {
  test('reads attributes case-insensitively and never keeps the value', () => {
    const c = parseSetCookie('sid=s3cr3t; path=/; SECURE; httponly; SameSite=strict; Domain=.Example.com', 'www.example.com')
    expect(c).toMatchObject({ name: 'sid', domain: 'example.com', hostOnly: false, secure: true, httpOnly: true, sameSite: 'Strict' })
    expect(JSON.stringify(c)).not.toContain('s3cr3t')
  })

  test('treats Max-Age=0 and a 1970 expiry as deletions', () => {
    expect(parseSetCookie('sid=; Max-Age=0', 'example.com')).toBeNull()
    expect(parseSetCookie('sid=; Expires=Thu, 01 Jan 1970 00:00:00 GMT', 'example.com')).toBeNull()
  })

  test('keeps an invalid SameSite as unspecified, with the raw value', () => {
    expect(parseSetCookie('a=1; SameSite=Sometimes', 'example.com')).toMatchObject({ sameSite: null, sameSiteRaw: 'Sometimes' })
  })
})

describe('first-party cookies', () => {
  test('include parent-domain browser cookies and exclude third-party ones', () => {
    const cookies = firstPartyCookies(
      withCookies([], [browserCookie('a', { domain: '.example.com' }), browserCookie('ads', { domain: '.tracker.example' })]),
    )
    expect(cookies.map((c) => c.name)).toEqual(['a'])
  })

  test('prefer the Set-Cookie attributes over the browser copy of the same cookie', () => {
    const cookies = firstPartyCookies(withCookies(['sid=1; Path=/'], [browserCookie('sid', { secure: true })]))
    expect(cookies).toHaveLength(1)
    expect(cookies[0]!.secure).toBe(false)
  })
})

describe('session cookie names', () => {
  test('recognise common session and token cookies', () => {
    for (const name of [
      'connect.sid',
      'PHPSESSID',
      'JSESSIONID',
      'laravel_session',
      '_myapp_session',
      'ASP.NET_SessionId',
      'next-auth.session-token',
      'sb-abc-auth-token',
      'accessToken',
      'jwt',
      'auth',
    ]) {
      expect(isSessionCookieName(name)).toBe(true)
    }
  })

  test('ignore csrf tokens, preferences and analytics vendors', () => {
    for (const name of [
      'theme',
      'XSRF-TOKEN',
      'csrftoken',
      '_ga',
      'ai_session',
      '__stripe_sid',
      'sidebar_state',
      'oauth_state',
      'consent',
    ]) {
      expect(isSessionCookieName(name)).toBe(false)
    }
  })
})

describe('cookie-secure', () => {
  test('passes with evidence {cookies: 0} when the site sets no cookies', () => {
    const r = cookieSecure.run(withCookies([]))
    expect(r.status).toBe('pass')
    expect(r.evidence.cookies).toBe(0)
  })

  test('passes when every cookie is Secure', () => {
    expect(cookieSecure.run(withCookies(['sid=1; Secure; HttpOnly'])).status).toBe('pass')
  })

  test('fails a session cookie without Secure on https', () => {
    const r = cookieSecure.run(withCookies(['sid=1; HttpOnly; SameSite=Lax']))
    expect(r.status).toBe('fail')
    expect(r.evidence.sessionWithoutSecure).toEqual(['sid'])
  })

  test('warns when only non-session cookies lack Secure', () => {
    expect(cookieSecure.run(withCookies(['theme=dark; Path=/'])).status).toBe('warn')
  })

  test('does not warn for analytics cookies their vendor script set without Secure', () => {
    const r = cookieSecure.run(withCookies([], [browserCookie('_ga', { secure: false, httpOnly: false })]))
    expect(r.status).toBe('pass')
    expect(r.evidence.vendorWithoutSecure).toEqual(['_ga'])
  })

  test('checks browser-stored cookies too', () => {
    expect(cookieSecure.run(withCookies([], [browserCookie('session', { secure: false })])).status).toBe('fail')
  })

  test('ignores third-party cookies', () => {
    expect(cookieSecure.run(withCookies([], [browserCookie('sid', { domain: '.ads.example', secure: false })])).status).toBe('pass')
  })

  test('warns on an http site that sets cookies, since Secure cannot work there', () => {
    const r = cookieSecure.run(httpSite(['sid=1; HttpOnly']))
    expect(r.status).toBe('warn')
    expect(r.evidence.names).toEqual(['sid'])
  })
})

describe('cookie-httponly', () => {
  test('fails a session cookie readable by JavaScript', () => {
    const r = cookieHttpOnly.run(withCookies(['connect.sid=s%3Aabc; Path=/; Secure']))
    expect(r.status).toBe('fail')
    expect(r.evidence.sessionWithoutHttpOnly).toEqual(['connect.sid'])
  })

  test('passes a theme cookie without HttpOnly: not a session cookie', () => {
    const r = cookieHttpOnly.run(withCookies(['theme=dark; Path=/; Secure']))
    expect(r.status).toBe('pass')
    expect(r.evidence.otherWithoutHttpOnly).toEqual(['theme'])
  })

  test('passes a CSRF token cookie without HttpOnly', () => {
    expect(cookieHttpOnly.run(withCookies(['XSRF-TOKEN=abc; Path=/; Secure'])).status).toBe('pass')
  })

  test('passes HttpOnly session cookies', () => {
    expect(cookieHttpOnly.run(withCookies(['PHPSESSID=abc; Secure; HttpOnly'])).status).toBe('pass')
  })
})

describe('cookie-samesite', () => {
  test('passes cookies that declare SameSite', () => {
    expect(cookieSameSite.run(withCookies(['a=1; SameSite=Lax', 'b=2; SameSite=None; Secure'])).status).toBe('pass')
  })

  test('warns for a cookie without SameSite and lists names only', () => {
    const r = cookieSameSite.run(withCookies(['pref=secretvalue; Secure']))
    expect(r.status).toBe('warn')
    expect(r.evidence.withoutSameSite).toEqual(['pref'])
    expect(JSON.stringify(r.evidence)).not.toContain('secretvalue')
  })

  test('fails SameSite=None without Secure', () => {
    const r = cookieSameSite.run(withCookies(['track=1; SameSite=None']))
    expect(r.status).toBe('fail')
    expect(r.evidence.sameSiteNoneWithoutSecure).toEqual(['track'])
  })

  test('passes with no cookies', () => {
    expect(cookieSameSite.run(withCookies([])).evidence.cookies).toBe(0)
  })
})
