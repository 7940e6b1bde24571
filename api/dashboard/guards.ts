// Who may use a dashboard route, decided in one place (the `session` and `form` options of a route) for the
// dashboard, the report pages and checkout:
//   - any Authorization header is refused with 401, even a valid bearer token (these routes serve the web
//     app, never an agent; agents use /api/mcp);
//   - pages need a signed-in session on BASE_URL's host (where the session cookie lives), else they send
//     the browser to sign in and come back;
//   - actions (POST) need the session, the site's own Origin and the session's anti-CSRF token, sent as
//     the x-csrf-token header (the dashboard's script) or as the csrf field of a form (read capped).
import Elysia, { status } from 'elysia'
import type { Sql } from '../../shared/db/index.ts'
import { getAccount, type Principal } from '../../shared/db/accounts.ts'
import type { SignInSession } from '../../shared/db/users.ts'
import { cappedParser, formText, leaveUnread, type SentBody } from '../http/body.ts'
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

export const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { ...jsonHeaders, ...extra } })
export const problem = (status: number, code: string, message: string, extra: Record<string, string> = {}) =>
  json(status, { error: code, message }, extra)

export const bearerRefused = () =>
  problem(401, 'bearer_not_accepted', 'Dashboard routes accept only a signed-in session, never a bearer token; agents use /api/mcp.')

/** How a route is guarded: a page (sign-in redirect), a read of the script (401), an action of the script (401, 403). */
export type SessionKind = 'page' | 'api' | 'action'

/** A guard's refusal ends the request: Elysia sends this Response as it is. */
const refuse = (res: Response) => status(res.status, res)

/** A form post's session and fields. */
export type FormPost = { session: SignInSession; form: URLSearchParams }

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
   * A form post: the session and the form's fields, or the page that ends it (401 bearer or not signed in,
   * 413 too large, 403 wrong Origin or token).
   */
  async function formPost(req: Request, sent: SentBody): Promise<FormPost | Response> {
    const session = await authenticate(req)
    if (session instanceof Response) return session
    const text = formText(sent)
    if (text === null) return htmlPage(413, 'Too large', html`<h1>Too large</h1><p>The form is larger than the dashboard ever sends.</p>`)
    const form = new URLSearchParams(text)
    const why = csrfProblem(req, baseUrl, session, form.get('csrf') ?? req.headers.get('x-csrf-token'))
    if (why) return htmlPage(403, 'Refused', html`<h1>Refused</h1><p>Refused: ${why}. Reload the page and try again.</p>`)
    return { session, form }
  }

  const guards: Record<SessionKind, (req: Request) => Promise<SignInSession | Response>> = { page: pageSession, api: authenticate, action }

  // `session: kind` gives the handler `session`; `form: true` gives it `session` and `form` (the body read
  // capped at FORM_BODY_LIMIT). Neither reads a body it does not need.
  return new Elysia().macro({
    session: (kind: SessionKind) => ({
      parse: leaveUnread,
      async resolve({ request }) {
        const s = await guards[kind](request)
        return s instanceof Response ? refuse(s) : { session: s }
      },
    }),
    form: {
      parse: cappedParser(FORM_BODY_LIMIT),
      async resolve({ request, body }) {
        const post = await formPost(request, body as SentBody)
        return post instanceof Response ? refuse(post) : post
      },
    },
  })
}

export type DashboardGuards = ReturnType<typeof dashboardGuards>

/** The account of a session as a principal, so the dashboard calls the same services the MCP tools call. */
export async function principalOf(sql: Sql, s: SignInSession): Promise<Principal | null> {
  const account = await getAccount(sql, s.user.accountId)
  return account ? { account, credentialId: s.id, kind: 'session' } : null
}

/** What a page shows as the signed-in person. */
export const sessionLabel = (s: { user: { email: string | null; name: string | null; subject: string } }) =>
  s.user.email || s.user.name || s.user.subject
