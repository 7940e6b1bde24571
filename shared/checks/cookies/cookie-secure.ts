// Secure flag on first-party cookies of an https site.

import { cookieFixes } from '../util/fix.ts'
import { defineCheck } from '../types.ts'
import { firstPartyCookies, isSessionCookieName, isVendorCookieName } from '../util/cookies.ts'
import { isHttpsUrl } from '../util/http.ts'

export const cookieSecure = defineCheck({
  id: 'cookie-secure',
  category: 'cookies',
  title: 'Cookies are marked Secure',
  failTitle: 'Cookies are not marked Secure',
  // Over plain http even a Secure cookie crosses the network in clear: the problem is the transport.
  failTitleOf: (evidence) => (evidence.plainHttp === true ? 'Cookies are set over plain http' : null),
  description:
    'Reads first-party cookies (Set-Cookie on the main response, and cookies the browser stored for the site or a parent domain) and ' +
    'their Secure attribute.',
  why:
    'A cookie without Secure is also sent over plain http, where anyone on the network can read it; for a session cookie that is an ' +
    'account takeover.',
  confirmation:
    'On an https site: fails when a session-like cookie (session, sid, auth, token, jwt, PHPSESSID, ...) lacks Secure; warns when ' +
    'only other cookies lack it. On a site whose final URL is http, Secure cookies cannot work at all, so any first-party cookie is a' +
    ' warning (the missing https itself is judged by https-redirect and hsts). Not findings: third-party cookies, cookies set by ' +
    'analytics scripts (_ga, _hj*, ajs_*; listed in evidence), deletion cookies (Max-Age=0 or an expiry in the past). No first-party ' +
    'cookies passes.',
  severity: 'high',
  fix: {
    generic:
      'Add the Secure attribute to every cookie the site sets (Set-Cookie: name=value; Path=/; Secure; HttpOnly; SameSite=Lax), and ' +
      'serve the site only over https.',
    vercel:
      "Set the flag where the cookie is created, e.g. in a Vercel function: res.setHeader('Set-Cookie', 'sid=...; Path=/; Secure; " +
      "HttpOnly; SameSite=Lax').",
    netlify:
      "Set the flag where the cookie is created, e.g. in a Netlify function: headers: { 'Set-Cookie': 'sid=...; Path=/; Secure; " +
      "HttpOnly; SameSite=Lax' }.",
    nextjs:
      "In a route handler or server action:\nimport { cookies } from 'next/headers'\n(await cookies()).set('sid', value, { secure: " +
      "true, httpOnly: true, sameSite: 'lax', path: '/' })",
    nginx: 'For cookies set by the upstream app (nginx 1.19.3+):\nproxy_cookie_flags ~ secure httponly samesite=lax;',
    cloudflare:
      'Fix it in the application that sets the cookie. As a stop-gap, a Worker can rewrite Set-Cookie: ' +
      'response.headers.getSetCookie() -> append "; Secure" to each and set them again.',
    ...cookieFixes('Secure'),
  },
  fixTarget: { kind: 'cookies' },
  requires: ['target', 'mainResponse'],
  optional: ['page'],
  run: (artifacts) => {
    const cookies = firstPartyCookies(artifacts)
    const url = artifacts.mainResponse.url || artifacts.target.finalUrl
    if (cookies.length === 0) return { status: 'pass', evidence: { url, cookies: 0 }, summary: 'The site sets no first-party cookies.' }
    const names = cookies.map((c) => c.name)
    if (!isHttpsUrl(url)) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence: {
          url,
          cookies: cookies.length,
          names,
          plainHttp: true,
          withoutSecure: cookies.filter((c) => !c.secure).map((c) => c.name),
          note: 'The site is served over http: its cookies cross the network in clear.',
        },
        summary: `The site sets ${cookies.length} cookie(s) over plain http, where Secure cookies cannot work.`,
      }
    }
    const insecure = cookies.filter((c) => !c.secure && !isVendorCookieName(c.name))
    const session = insecure.filter((c) => isSessionCookieName(c.name))
    const evidence = {
      url,
      cookies: cookies.length,
      withoutSecure: insecure.map((c) => c.name),
      sessionWithoutSecure: session.map((c) => c.name),
      vendorWithoutSecure: cookies.filter((c) => !c.secure && isVendorCookieName(c.name)).map((c) => c.name),
    }
    if (session.length > 0) {
      return { status: 'fail', evidence, summary: `Session cookie(s) without Secure: ${session.map((c) => c.name).join(', ')}.` }
    }
    if (insecure.length > 0) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: `Cookie(s) without Secure: ${insecure.map((c) => c.name).join(', ')}.`,
      }
    }
    return { status: 'pass', evidence, summary: `All ${cookies.length} first-party cookie(s) are Secure.` }
  },
})
