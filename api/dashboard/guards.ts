// Who may use a dashboard route, decided in one place for the dashboard and the report pages:
//   - any Authorization header is refused with 401, even a valid bearer token (these routes serve the web
//     app, never an agent; agents use /api/mcp);
//   - pages need a signed-in session on BASE_URL's host (where the session cookie lives), else they send
//     the browser to sign in and come back;
//   - actions (POST) need the session, the site's own Origin and the session's anti-CSRF token, sent as
//     the x-csrf-token header (the dashboard's script) or as the csrf field of a form (read capped).
import type { Sql } from '../../shared/db/index.ts'
import { getAccount, type Principal } from '../../shared/db/accounts.ts'
import type { SignInSession } from '../../shared/db/users.ts'
import { readRequestText } from '../../shared/lib/http-body.ts'
import { html } from '../../shared/lib/html.ts'
import { htmlPage } from '../http/layout.ts'
import { csrfProblem, currentSession } from '../signin/session.ts'

/** A dashboard form holds a few short fields. */
export const FORM_BODY_LIMIT = 8_192

const jsonHeaders = {
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
}

export const json = (status: number, body: unknown) => Response.json(body, { status, headers: jsonHeaders })
export const problem = (status: number, code: string, message: string) => json(status, { error: code, message })

export const bearerRefused = () =>
  problem(401, 'bearer_not_accepted', 'Dashboard routes accept only a signed-in session, never a bearer token; agents use /api/mcp.')

export function dashboardGuards(sql: Sql, baseUrl: string) {
  const base = new URL(baseUrl)

  /** The signed-in session of a dashboard route, or the 401 that ends the request. */
  async function authenticate(req: Request): Promise<SignInSession | Response> {
    if (req.headers.get('authorization') !== null) return bearerRefused()
    const session = await currentSession(sql, req)
    return session ?? problem(401, 'not_signed_in', 'Sign in at /auth/login.')
  }

  /** Pages: signed-in users only, on BASE_URL's host. */
  async function pageSession(req: Request): Promise<SignInSession | Response> {
    if (req.headers.get('authorization') !== null) return bearerRefused()
    const url = new URL(req.url)
    if ((req.headers.get('host') ?? url.host) !== base.host) return Response.redirect(`${baseUrl}${url.pathname}${url.search}`, 302)
    const session = await currentSession(sql, req)
    if (session) return session
    return new Response(null, {
      status: 302,
      headers: { location: `/auth/login?return_to=${encodeURIComponent(url.pathname)}`, 'cache-control': 'no-store' },
    })
  }

  /** An action of the dashboard's script (x-csrf-token header): the session, or the 401/403 that ends it. */
  async function action(req: Request): Promise<SignInSession | Response> {
    const s = await authenticate(req)
    if (s instanceof Response) return s
    const why = csrfProblem(req, baseUrl, s, req.headers.get('x-csrf-token'))
    return why ? problem(403, 'csrf', `Refused: ${why}.`) : s
  }

  /**
   * A form post: the session and the form's fields, or the page that ends it (401 bearer, 302 to sign in,
   * 413 too large, 403 wrong Origin or token).
   */
  async function formAction(req: Request): Promise<{ session: SignInSession; form: URLSearchParams } | Response> {
    if (req.headers.get('authorization') !== null) return bearerRefused()
    const session = await currentSession(sql, req)
    if (!session) return problem(401, 'not_signed_in', 'Sign in at /auth/login.')
    const text = await readRequestText(req, FORM_BODY_LIMIT).catch(() => '')
    if (text === null) return htmlPage(413, 'Too large', html`<h1>Too large</h1><p>The form is larger than the dashboard ever sends.</p>`)
    const form = new URLSearchParams(text)
    const why = csrfProblem(req, baseUrl, session, form.get('csrf') ?? req.headers.get('x-csrf-token'))
    if (why) return htmlPage(403, 'Refused', html`<h1>Refused</h1><p>Refused: ${why}. Reload the page and try again.</p>`)
    return { session, form }
  }

  /** The account of a session as a principal, so the dashboard calls the same services the MCP tools call. */
  async function principalOf(s: SignInSession): Promise<Principal | null> {
    const account = await getAccount(sql, s.user.accountId)
    return account ? { account, credentialId: s.id, kind: 'session' } : null
  }

  return { authenticate, pageSession, action, formAction, principalOf }
}

export type DashboardGuards = ReturnType<typeof dashboardGuards>
