// HttpOnly on session-like cookies: the ones script injection must not be able to read.

import { cookieFixes } from '../util/fix.ts'
import { defineCheck } from '../types.ts'
import { firstPartyCookies, isSessionCookieName } from '../util/cookies.ts'

export const cookieHttpOnly = defineCheck({
  id: 'cookie-httponly',
  category: 'cookies',
  title: 'Session cookies are HttpOnly',
  failTitle: 'Session cookies are not HttpOnly',
  description: 'Reads first-party cookies and flags session-like ones that JavaScript can read.',
  why: 'Any cross-site scripting bug can read a session cookie without HttpOnly and send it to an attacker, who then holds the session.',
  confirmation:
    'Fails when a first-party cookie whose name looks like a session or credential (session, sess, sid, auth, token, jwt, remember; ' +
    'connect.sid, PHPSESSID, JSESSIONID, laravel_session, *_session, next-auth session tokens, Supabase auth tokens) lacks HttpOnly. ' +
    'Not findings: other cookies without HttpOnly (theme, consent, analytics), CSRF/XSRF token cookies (JavaScript must read them by ' +
    "design), and analytics vendors' cookies set from JavaScript (ai_session, __stripe_sid, intercom-session-*).",
  severity: 'high',
  fix: {
    generic:
      'Add HttpOnly to the session cookie (Set-Cookie: sid=...; Path=/; Secure; HttpOnly; SameSite=Lax) and keep tokens out of ' +
      'JavaScript-readable storage.',
    vercel:
      "Set the flag where the cookie is created, e.g. in a Vercel function: res.setHeader('Set-Cookie', 'sid=...; Path=/; Secure; " +
      "HttpOnly; SameSite=Lax').",
    netlify:
      "Set the flag where the cookie is created, e.g. in a Netlify function: headers: { 'Set-Cookie': 'sid=...; Path=/; Secure; " +
      "HttpOnly; SameSite=Lax' }.",
    nextjs:
      "In a route handler or server action:\nimport { cookies } from 'next/headers'\n(await cookies()).set('session', value, { " +
      "httpOnly: true, secure: true, sameSite: 'lax', path: '/' })",
    nginx: 'For cookies set by the upstream app (nginx 1.19.3+):\nproxy_cookie_flags ~*(session|sid|token) httponly secure samesite=lax;',
    cloudflare:
      'Fix it in the application that sets the cookie; a Worker can append "; HttpOnly" to the session cookie\'s Set-Cookie as a ' +
      'stop-gap.',
    ...cookieFixes('HttpOnly'),
  },
  fixTarget: { kind: 'cookies' },
  requires: ['target', 'mainResponse'],
  optional: ['page'],
  run: (artifacts) => {
    const cookies = firstPartyCookies(artifacts)
    if (cookies.length === 0) return { status: 'pass', evidence: { cookies: 0 }, summary: 'The site sets no first-party cookies.' }
    const session = cookies.filter((c) => isSessionCookieName(c.name))
    const exposed = session.filter((c) => !c.httpOnly)
    const evidence = {
      cookies: cookies.length,
      sessionCookies: session.map((c) => c.name),
      sessionWithoutHttpOnly: exposed.map((c) => c.name),
      otherWithoutHttpOnly: cookies.filter((c) => !c.httpOnly && !isSessionCookieName(c.name)).map((c) => c.name),
    }
    if (exposed.length > 0) {
      return { status: 'fail', evidence, summary: `Session cookie(s) readable by JavaScript: ${exposed.map((c) => c.name).join(', ')}.` }
    }
    return {
      status: 'pass',
      evidence,
      summary: session.length > 0 ? 'Session cookies are HttpOnly.' : 'No session-like cookies; other cookies need not be HttpOnly.',
    }
  },
})
