// SameSite on first-party cookies.

import { cookieFixes } from '../util/fix.ts'
import { defineCheck } from '../types.ts'
import { firstPartyCookies } from '../util/cookies.ts'

export const cookieSameSite = defineCheck({
  id: 'cookie-samesite',
  category: 'cookies',
  title: 'Cookies declare SameSite',
  failTitle: 'Cookies do not declare SameSite',
  failTitleOf: (evidence) =>
    Array.isArray(evidence.sameSiteNoneWithoutSecure) && evidence.sameSiteNoneWithoutSecure.length > 0
      ? 'Cookies are SameSite=None without Secure'
      : null,
  description: 'Reads the SameSite attribute of first-party cookies.',
  why:
    'SameSite=Lax or Strict stops browsers from sending the cookie on cross-site requests, a strong defence against cross-site request ' +
    'forgery.',
  confirmation:
    'Fails when a cookie is SameSite=None without Secure (browsers reject it; older ones send it everywhere). Warns when a cookie has' +
    ' no SameSite attribute or an invalid one: browsers then apply their own default, which differs between browsers. Evidence lists ' +
    'cookie names only, never values. No first-party cookies passes.',
  severity: 'medium',
  fix: {
    generic:
      'Give every cookie an explicit SameSite: Lax for session cookies, Strict where possible, and None only together with Secure for ' +
      'cookies that must be sent cross-site.',
    vercel: "Set it where the cookie is created, e.g. res.setHeader('Set-Cookie', 'sid=...; Path=/; Secure; HttpOnly; SameSite=Lax').",
    netlify: "Set it where the cookie is created, e.g. headers: { 'Set-Cookie': 'sid=...; Path=/; Secure; HttpOnly; SameSite=Lax' }.",
    nextjs: "(await cookies()).set('sid', value, { sameSite: 'lax', secure: true, httpOnly: true, path: '/' })",
    nginx: 'For cookies set by the upstream app (nginx 1.19.3+):\nproxy_cookie_flags ~ samesite=lax;',
    cloudflare: 'Fix it in the application; a Worker can append "; SameSite=Lax" to Set-Cookie headers that lack it as a stop-gap.',
    ...cookieFixes('SameSite'),
  },
  fixTarget: { kind: 'cookies' },
  requires: ['target', 'mainResponse'],
  optional: ['page'],
  run: (artifacts) => {
    const cookies = firstPartyCookies(artifacts)
    if (cookies.length === 0) return { status: 'pass', evidence: { cookies: 0 }, summary: 'The site sets no first-party cookies.' }
    const noneInsecure = cookies.filter((c) => c.sameSite === 'None' && !c.secure)
    const missing = cookies.filter((c) => c.sameSite === null)
    const evidence = {
      cookies: cookies.length,
      sameSiteNoneWithoutSecure: noneInsecure.map((c) => c.name),
      withoutSameSite: missing.map((c) => c.name),
      invalidSameSite: missing.filter((c) => c.sameSiteRaw !== null).map((c) => c.name),
    }
    if (noneInsecure.length > 0) {
      return { status: 'fail', evidence, summary: `SameSite=None without Secure: ${noneInsecure.map((c) => c.name).join(', ')}.` }
    }
    if (missing.length > 0) {
      return {
        status: 'warn',
        severity: 'low',
        evidence,
        summary: `Cookie(s) without a valid SameSite: ${missing.map((c) => c.name).join(', ')}.`,
      }
    }
    return { status: 'pass', evidence, summary: `All ${cookies.length} first-party cookie(s) declare SameSite.` }
  },
})
