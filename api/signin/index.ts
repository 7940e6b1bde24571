// Sign-in for people: /auth/login sends the browser to the identity provider, /auth/callback verifies
// what comes back and opens a session, /auth/logout ends it. Rules enforced here:
//   - the flow is bound to the browser that started it: its state is also in a short-lived cookie
//     (against login CSRF), and the server-side record is used once;
//   - return_to is a local path only (never another origin: no open redirect);
//   - sign-in happens on BASE_URL's host, so the session cookie lands where the callback is;
//   - a subject seen for the first time gets a user and a new free account;
//   - logout is a POST with the Origin and anti-CSRF checks.
import Elysia from 'elysia'
import type { Sql } from '../../shared/db/index.ts'
import { createSession, deleteSession, upsertUser } from '../../shared/db/users.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { KeyValue } from '../../shared/infra/types.ts'
import { formText, requestBodies } from '../http/body.ts'
import { clientIp } from '../http/client-ip.ts'
import { clearCookie, readCookie, setCookie } from '../http/cookies.ts'
import { html } from '../../shared/lib/html.ts'
import { htmlPage } from '../http/layout.ts'
import type { RateLimiter } from '../http/rate-limit.ts'
import type { OidcClient } from './oidc.ts'
import { csrfProblem, currentSession, SESSION_COOKIE } from './session.ts'

const FLOW_COOKIE = 'aa_signin'
const FLOW_TTL_S = 600
/** The sign-out form holds one anti-CSRF token. */
const LOGOUT_BODY_LIMIT = 4_096

export interface SignInDeps {
  oidc: OidcClient | null
  sql: Sql
  kv: KeyValue
  baseUrl: string
  sessionTtlSeconds: number
  limiter: RateLimiter
  trustedProxyHops: number
  log: Logger
}

const LOCAL = 'http://return-to.invalid'

/**
 * A local path to return to after sign-in, or the dashboard. The path is read as a browser reads it (the
 * WHATWG parser drops tabs and newlines and treats a backslash as a slash, so /\t/evil.example is
 * //evil.example) and kept only when it stays on this origin; what is returned is the parsed form, never
 * the raw text.
 */
export function safeReturnTo(raw: string | null): string {
  if (!raw?.startsWith('/')) return '/dashboard'
  let u: URL
  try {
    u = new URL(raw, LOCAL)
  } catch {
    return '/dashboard'
  }
  if (u.origin !== LOCAL || u.pathname.startsWith('//')) return '/dashboard'
  return u.pathname + u.search + u.hash
}

const failed = (status: number, message: string) =>
  htmlPage(
    status,
    'Sign-in failed',
    html`<div class="card"><h1>Sign-in failed</h1><p>${message}</p><p><a href="/auth/login">Try again</a></p></div>`,
  )

/**
 * A deployment without an identity provider: trying again cannot help, so the page says what does. The
 * dashboard, and the viewer's link to a report, lead here.
 */
const notConfigured = () =>
  htmlPage(
    503,
    'No sign-in on this server',
    html`<div class="card"><h1>No sign-in on this server</h1>
<p>This server has no identity provider configured, so there is no dashboard to sign in to.</p>
<p>Results are read over MCP with an API key: <code>get_scan</code>, <code>get_audit</code> and
<code>get_findings</code> (an audit's report: <code>get_audit {auditId}</code>).</p>
<p>Operators: set <code>OIDC_ISSUER</code>, <code>OIDC_CLIENT_ID</code> and <code>OIDC_CLIENT_SECRET</code>
and register <code>{BASE_URL}/auth/callback</code> at the provider (README, "Signing in"); keys come from
<code>bun run admin create-key</code>.</p></div>`,
  )

const redirect = (location: string, cookies: string[] = []) => {
  const headers = new Headers({ location, 'cache-control': 'no-store' })
  for (const c of cookies) headers.append('set-cookie', c)
  return new Response(null, { status: 302, headers })
}

export function signInRoutes(d: SignInDeps) {
  const base = new URL(d.baseUrl)
  const flowKey = (state: string) => `signin:flow:${state}`

  return new Elysia({ name: 'signin' })
    .use(requestBodies)
    .get('/auth/login', async ({ request }) => {
      const url = new URL(request.url)
      const returnTo = safeReturnTo(url.searchParams.get('return_to'))
      const host = request.headers.get('host') ?? url.host
      if (host !== base.host) return redirect(`${d.baseUrl}/auth/login?return_to=${encodeURIComponent(returnTo)}`)
      if (!d.oidc) return notConfigured()
      const limit = await d.limiter.hit('signIn', clientIp(request, d.trustedProxyHops))
      if (!limit.ok) return failed(429, `Too many sign-in attempts; retry in ${limit.retryAfterSeconds} s.`)
      const start = await d.oidc.start()
      if ('error' in start) {
        d.log.warn('identity provider unavailable', { error: start.message })
        return failed(503, 'The identity provider cannot be reached right now.')
      }
      await d.kv.set(flowKey(start.state), JSON.stringify({ nonce: start.nonce, verifier: start.verifier, returnTo }), FLOW_TTL_S)
      return redirect(start.url, [setCookie(FLOW_COOKIE, start.state, { maxAgeSeconds: FLOW_TTL_S, path: '/auth' })])
    })
    .get('/auth/callback', async ({ request }) => {
      if (!d.oidc) return notConfigured()
      const q = new URL(request.url).searchParams
      const state = q.get('state') ?? ''
      const bound = readCookie(request, FLOW_COOKIE)
      if (!state || !bound || bound !== state) return failed(400, 'This sign-in was not started in this browser, or it took too long.')
      const raw = await d.kv.get(flowKey(state))
      if (!raw || !(await d.kv.del(flowKey(state)))) return failed(400, 'This sign-in has expired or was already completed.')
      const flow = JSON.parse(raw) as { nonce: string; verifier: string; returnTo: string }
      if (q.get('error')) return failed(400, `The identity provider refused: ${q.get('error_description') ?? q.get('error')}`)
      const code = q.get('code')
      if (!code) return failed(400, 'The identity provider sent no code.')
      const identity = await d.oidc.finish({ code, iss: q.get('iss'), nonce: flow.nonce, verifier: flow.verifier })
      if ('error' in identity) {
        d.log.warn('sign-in refused', { error: identity.error, reason: identity.message })
        return failed(400, "The identity provider's answer could not be verified.")
      }
      const user = await upsertUser(d.sql, identity)
      const { cookie } = await createSession(d.sql, user.id, d.sessionTtlSeconds)
      d.log.info('signed in', { userId: user.id, accountId: user.accountId })
      return redirect(flow.returnTo, [
        setCookie(SESSION_COOKIE, cookie, { maxAgeSeconds: d.sessionTtlSeconds }),
        clearCookie(FLOW_COOKIE, '/auth'),
      ])
    })
    .post(
      '/auth/logout',
      async ({ request, sent }) => {
        const session = await currentSession(d.sql, request)
        if (session) {
          const text = formText(sent)
          if (text === null) return failed(413, 'The sign-out form is too large.')
          const form = new URLSearchParams(text)
          const problem = csrfProblem(request, d.baseUrl, session, form.get('csrf') ?? request.headers.get('x-csrf-token'))
          if (problem) return failed(403, `Refused: ${problem}.`)
          await deleteSession(d.sql, session.id)
        }
        return new Response(null, {
          status: 303,
          headers: { location: '/', 'set-cookie': clearCookie(SESSION_COOKIE), 'cache-control': 'no-store' },
        })
      },
      { bodyLimit: LOGOUT_BODY_LIMIT },
    )
}
