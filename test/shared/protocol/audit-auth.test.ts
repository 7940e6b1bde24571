// The rules of an authenticated audit's credentials, on plain values: what is accepted and how it is
// normalised, what is refused (never echoing a value), which values are scrubbed, which links end a session
// and which redirects mean it was lost.
import { describe, expect, test } from 'bun:test'
import {
  type AuditAuth,
  isLogoutUrl,
  REDACTED,
  scrubber,
  scrubDeep,
  secretsOf,
  sentToLogin,
  validateAuth,
} from '../../../shared/protocol/audit-auth.ts'
import { AppError } from '../../../shared/errors.ts'

const start = new URL('https://app.example.com/dashboard')
const refusal = (auth: AuditAuth) => {
  try {
    validateAuth(auth, start)
  } catch (e) {
    expect(e).toBeInstanceOf(AppError)
    return e as AppError
  }
  throw new Error('accepted')
}

describe('validateAuth', () => {
  test('accepts cookies, headers and a login form, normalised', () => {
    const v = validateAuth(
      {
        cookies: [
          { name: 'sid', value: 'abc123' },
          { name: 'pref', value: 'x', domain: '.Example.com' },
        ],
        headers: { Authorization: 'Bearer t0ken-value', 'X-Tenant': 'acme' },
        login: { url: 'https://app.example.com/login?next=/', fields: { email: 'a@b.c', '#pw': 'secret-pw' } },
      },
      start,
    )
    expect(v.cookies).toEqual([
      { name: 'sid', value: 'abc123' },
      { name: 'pref', value: 'x', domain: 'example.com' },
    ])
    expect(v.headers).toEqual({ authorization: 'Bearer t0ken-value', 'x-tenant': 'acme' })
    expect(v.login).toEqual({
      url: 'https://app.example.com/login?next=/',
      fields: { '[name="email"]': 'a@b.c', '#pw': 'secret-pw' },
      submit: 'button[type=submit], input[type=submit]',
    })
  })

  test.each([
    ['nothing to log in with', {}, '/cookies'],
    ['an empty cookie list', { cookies: [] }, '/cookies'],
    ['a cookie name with a space', { cookies: [{ name: 'a b', value: 'v' }] }, '/cookies/0/name'],
    ['a cookie value with a semicolon', { cookies: [{ name: 'a', value: 'v; Path=/' }] }, '/cookies/0/value'],
    ['a cookie for another site', { cookies: [{ name: 'a', value: 'v', domain: 'evil.com' }] }, '/cookies/0/domain'],
    ['a cookie for a public suffix', { cookies: [{ name: 'a', value: 'v', domain: 'com' }] }, '/cookies/0/domain'],
    ['a Host header', { headers: { Host: 'x' } }, '/headers/Host'],
    ['a Cookie header', { headers: { cookie: 'a=b' } }, '/headers/cookie'],
    ['a Proxy-Authorization header', { headers: { 'Proxy-Authorization': 'x' } }, '/headers/Proxy-Authorization'],
    ['a header value with a line break', { headers: { 'X-A': 'a\r\nB: c' } }, '/headers/X-A'],
    ['a header name with a colon', { headers: { 'X:A': 'a' } }, '/headers/X:A'],
    ['a login page on another origin', { login: { url: 'https://evil.example.com/login', fields: { a: 'b' } } }, '/login/url'],
    ['a login page over http of an https site', { login: { url: 'http://app.example.com/login', fields: { a: 'b' } } }, '/login/url'],
    ['a login form without fields', { login: { url: 'https://app.example.com/login', fields: {} } }, '/login/fields'],
    ['a login URL that is not a URL', { login: { url: 'login', fields: { a: 'b' } } }, '/login/url'],
  ] as Array<[string, AuditAuth, string]>)('refuses %s', (_what, auth, path) => {
    const e = refusal(auth)
    expect(e.code).toBe('invalid_params')
    expect((e.details.details as Array<{ path: string }>)[0]!.path).toBe(path)
  })

  test('a refusal never repeats the value it refused', () => {
    const secret = 'Sup3r-s3cret-value'
    const cases: AuditAuth[] = [
      { cookies: [{ name: 'a', value: `${secret};x` }] },
      { headers: { 'X-A': `${secret}\n` } },
      { headers: { Host: secret } },
      { cookies: [{ name: 'a', value: secret, domain: 'evil.com' }] },
    ]
    for (const auth of cases) {
      expect(JSON.stringify(refusal(auth))).not.toContain(secret)
      expect(refusal(auth).message).not.toContain(secret)
    }
  })
})

describe('scrubbing', () => {
  const auth: AuditAuth = {
    cookies: [
      { name: 'sid', value: 'session-0123456789' },
      { name: 'short', value: 'ab' },
    ],
    headers: { authorization: 'Bearer tok-abcdef' },
    login: { url: 'https://app.example.com/login', fields: { '#pw': 'hunter2-pass' } },
  }

  test('every value of six characters or more, and a bearer token alone, longest first', () => {
    expect(secretsOf(auth)).toEqual(['session-0123456789', 'Bearer tok-abcdef', 'hunter2-pass', 'tok-abcdef'])
  })

  test('scrubs strings and every string inside objects and lists, keys included', () => {
    const scrub = scrubber(secretsOf(auth))
    expect(scrub('auth: Bearer tok-abcdef; token tok-abcdef; pw hunter2-pass')).toBe(`auth: ${REDACTED}; token ${REDACTED}; pw ${REDACTED}`)
    expect(scrubDeep<Record<string, unknown>>({ a: ['x session-0123456789 y', 3, null], 'hunter2-pass': { b: 'ok' } }, scrub)).toEqual({
      a: [`x ${REDACTED} y`, 3, null],
      [REDACTED]: { b: 'ok' },
    })
    expect(scrubber([])('anything')).toBe('anything')
  })

  // A session id, a header and a password with the characters that encodings change.
  const tricky: AuditAuth = {
    cookies: [{ name: 'sid', value: 's3ss/i0n=+Zm9v' }],
    headers: { authorization: 'Bearer t0k/en="<&>\'' },
    login: { url: 'https://app.example.com/login', fields: { '[name="email"]': 'dev@example.test', '[name="password"]': 'p&ss w0rd/="<' } },
  }
  const trickyScrub = scrubber(secretsOf(tricky))

  test.each([
    ['re-serialised by URLSearchParams (a query the frontier rewrote)', (s: string) => new URLSearchParams({ s }).toString().slice(2)],
    ['percent-encoded as a path part', (s: string) => encodeURIComponent(s)],
    ['percent-encoded with lower-case hex', (s: string) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['percent-encoded twice', (s: string) => encodeURIComponent(encodeURIComponent(s))],
    ['as encodeURI leaves it', (s: string) => encodeURI(s)],
    ['HTML-escaped', (s: string) => Bun.escapeHTML(s)],
    ['HTML-escaped with &#39;', (s: string) => Bun.escapeHTML(s).replaceAll('&#x27;', '&#39;')],
    ['escaped inside a JSON string', (s: string) => JSON.stringify(s).slice(1, -1)],
    ['escaped inside a JSON string with \\/', (s: string) => JSON.stringify(s).slice(1, -1).replaceAll('/', '\\/')],
    [
      'escaped inside a JSON string with \\u00XX',
      (s: string) =>
        JSON.stringify(s)
          .slice(1, -1)
          .replace(/[<>&']/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
    ],
    ['in base64', (s: string) => Buffer.from(s).toString('base64')],
    ['in base64url', (s: string) => Buffer.from(s).toString('base64url')],
  ])('a secret %s is scrubbed', (_, encode) => {
    for (const secret of ['s3ss/i0n=+Zm9v', 't0k/en="<&>\'', 'p&ss w0rd/="<']) {
      expect(trickyScrub(`<a href="/list?sid=${encode(secret)}">next</a>`)).toBe(`<a href="/list?sid=${REDACTED}">next</a>`)
    }
  })

  test('the base64 of user:password (HTTP Basic, as a site may echo it) is scrubbed', () => {
    const basic = `Basic ${Buffer.from('dev@example.test:p&ss w0rd/="<').toString('base64')}`
    expect(trickyScrub(basic)).toBe(`Basic ${REDACTED}`)
  })
})

describe('links and redirects of a session', () => {
  test.each([
    ['https://a.test/logout', true],
    ['https://a.test/log-out', true],
    ['https://a.test/users/sign_out', true],
    ['https://a.test/account/signout?next=/', true],
    ['https://a.test/auth/logoff', true],
    ['https://a.test/session/end-session', true],
    ['https://a.test/?action=logout', true],
    ['https://a.test/blog/how-to-log-out-of-everything', true],
    ['https://a.test/catalogue', false],
    ['https://a.test/logouts-report', false],
    ['https://a.test/app/settings', false],
  ])('%s is a logout link: %p', (url, expected) => {
    expect(isLogoutUrl(new URL(url))).toBe(expected)
  })

  test('a page sent to the login form lost the session; one that stayed, or moved elsewhere, did not', () => {
    const login = 'https://a.test/signin'
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/signin?next=%2Fapp%2F1', login)).toBe(true)
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/app/1', login)).toBe(false)
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/app/overview', login)).toBe(false)
    // Without a login form: a redirect to a path that names a login page.
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/users/sign_in')).toBe(true)
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/login')).toBe(true)
    expect(sentToLogin('https://a.test/app/1', 'https://id.example.com/auth/realms/x')).toBe(true)
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/blog/author')).toBe(false)
    expect(sentToLogin('https://a.test/login', 'https://a.test/login')).toBe(false)
    // Ordinary redirects of pages that merely mention a login are not a lost session.
    expect(sentToLogin('https://a.test/docs/auth', 'https://a.test/docs/auth/')).toBe(false)
    expect(sentToLogin('https://a.test/docs/auth/intro', 'https://a.test/docs/auth/overview')).toBe(false)
    expect(sentToLogin('https://a.test/app/1', 'https://a.test/signin/', 'https://a.test/signin')).toBe(true)
  })
})
