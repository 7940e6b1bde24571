// The OAuth 2.0 authorization server's routes: discovery, registration, authorization and token.
// CORS: the metadata, registration and token endpoints answer any origin (public clients in a browser
// may use them; no cookie is involved). /oauth/authorize never sends CORS headers and cannot be framed.
import Elysia from 'elysia'
import type { Sql } from '../../shared/db/index.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { requestBodies, type SentBody } from '../http/body.ts'
import { clientIp } from '../http/client-ip.ts'
import { corsPreflight, withCors } from '../http/cors.ts'
import { html } from '../../shared/lib/html.ts'
import { htmlPage } from '../http/layout.ts'
import type { RateLimiter } from '../http/rate-limit.ts'
import { csrfProblem, currentSession } from '../signin/session.ts'
import { consentPage } from './consent-page.ts'
import { isOAuthError, type OAuthErrorCode, oauthErrorResponse } from './errors.ts'
import type { AuthorizeCheck } from './authorize.ts'
import { redirectDisplay } from './redirect-uris.ts'
import type { OAuthService } from './service.ts'

const BODY_LIMIT = 65_536

export interface OAuthRouteDeps {
  oauth: OAuthService
  sql: Sql
  baseUrl: string
  limiter: RateLimiter
  trustedProxyHops: number
  log: Logger
}

/** The body's text, or null when it is too large; a body that could not be read fails the request as before (400 or 500). */
function sentText(sent: SentBody): string | null {
  if (sent.kind === 'unreadable') throw sent.error
  return sent.kind === 'text' ? sent.text : null
}

const mediaType = (req: Request) => (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()

const tooMany = (retryAfter: number) =>
  withCors(
    Response.json(
      { error: 'rate_limited', error_description: 'Too many requests from this address; retry later.' },
      { status: 429, headers: { 'retry-after': String(retryAfter), 'cache-control': 'no-store' } },
    ),
  )

const errorPage = (status: number, description: string) =>
  htmlPage(
    status,
    'Authorization failed',
    html`<div class="card"><h1>This authorization request cannot continue</h1><p>${description}</p>
<p class="muted">Go back to the application that sent you here and start the connection again.</p></div>`,
  )

/**
 * An invalid request from a known client. Its error is not sent to the client's redirect URI automatically:
 * anyone can register a client, so that would be an open redirect (RFC 9700 4.11.2). A signed-in person
 * sees which client asked and may follow a link back to it with the error; an anonymous visitor gets no link.
 */
const refusedPage = (check: Extract<AuthorizeCheck, { kind: 'redirect' }>, signedIn: boolean) =>
  htmlPage(
    400,
    'Authorization failed',
    html`<div class="card"><h1>This authorization request cannot continue</h1><p>${check.description}</p>${
      signedIn
        ? html`<p><a id="return-to-client" href="${check.url}" rel="noreferrer">Return to ${check.clientName}</a>
<span class="muted">(${redirectDisplay(check.redirectUri)})</span> with this error.</p>`
        : html`<p class="muted">Go back to the application that sent you here and start the connection again.</p>`
    }</div>`,
  )

const redirect = (location: string, status = 302) =>
  new Response(null, {
    status,
    headers: { location, 'cache-control': 'no-store', 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'" },
  })

export function oauthRoutes(d: OAuthRouteDeps) {
  return new Elysia({ name: 'oauth' }).use(clientRoutes(d)).use(authorizeRoutes(d))
}

/**
 * What an agent's client calls, from anywhere (CORS): the metadata, registration and the token endpoint,
 * each rate-limited per address before its body is looked at.
 */
function clientRoutes(d: OAuthRouteDeps) {
  const preflight = () => {
    const res = corsPreflight()
    res.headers.set('access-control-allow-methods', 'POST, OPTIONS')
    return res
  }
  const refused = (error: OAuthErrorCode, description: string) => withCors(oauthErrorResponse({ error, description }))
  return new Elysia({ name: 'oauth-client' })
    .use(requestBodies)
    .get('/.well-known/oauth-authorization-server', () =>
      withCors(Response.json(d.oauth.metadata(), { headers: { 'cache-control': 'public, max-age=3600' } })),
    )
    .options('/oauth/register', preflight)
    .options('/oauth/token', preflight)
    .post(
      '/oauth/register',
      async ({ request, sent }) => {
        const limit = await d.limiter.hit('oauthRegister', clientIp(request, d.trustedProxyHops))
        if (!limit.ok) return tooMany(limit.retryAfterSeconds)
        if (mediaType(request) !== 'application/json')
          return refused('invalid_client_metadata', 'send the client metadata as application/json')
        const text = sentText(sent)
        if (text === null) return refused('invalid_client_metadata', 'the body is too large')
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          return refused('invalid_client_metadata', 'the body is not valid JSON')
        }
        const result = await d.oauth.register(body)
        if (isOAuthError(result)) return withCors(oauthErrorResponse(result))
        d.log.info('oauth client registered', { clientId: result.client_id })
        return withCors(Response.json(result, { status: 201, headers: { 'cache-control': 'no-store' } }))
      },
      { bodyLimit: BODY_LIMIT },
    )
    .post(
      '/oauth/token',
      async ({ request, sent }) => {
        const limit = await d.limiter.hit('oauthToken', clientIp(request, d.trustedProxyHops))
        if (!limit.ok) return tooMany(limit.retryAfterSeconds)
        if (mediaType(request) !== 'application/x-www-form-urlencoded') {
          return refused('invalid_request', 'send the parameters as application/x-www-form-urlencoded')
        }
        const text = sentText(sent)
        if (text === null) return refused('invalid_request', 'the body is too large')
        const result = await d.oauth.exchange(new URLSearchParams(text))
        if (isOAuthError(result)) return withCors(oauthErrorResponse(result))
        return withCors(Response.json(result, { headers: { 'cache-control': 'no-store', pragma: 'no-cache' } }))
      },
      { bodyLimit: BODY_LIMIT },
    )
}

/** The person's side: the consent page for a signed-in user, and their answer to it (a CSRF-checked form). */
function authorizeRoutes(d: OAuthRouteDeps) {
  return new Elysia({ name: 'oauth-authorize' })
    .use(requestBodies)
    .get('/oauth/authorize', async ({ request }) => {
      const url = new URL(request.url)
      const check = await d.oauth.checkAuthorize(url.searchParams)
      if (check.kind === 'show') return errorPage(400, check.description)
      const session = await currentSession(d.sql, request)
      if (check.kind === 'redirect') return refusedPage(check, session !== null)
      if (!session) return redirect(`/auth/login?return_to=${encodeURIComponent(url.pathname + url.search)}`)
      const requestId = await d.oauth.holdRequest(check.request, session.id)
      return consentPage({
        request: check.request,
        requestId,
        csrfToken: session.csrfToken,
        userLabel: session.user.email || session.user.name || session.user.subject,
      })
    })
    .post(
      '/oauth/authorize',
      async ({ request, sent }) => {
        const session = await currentSession(d.sql, request)
        if (!session) return errorPage(401, 'You are not signed in, or your session has ended.')
        if (mediaType(request) !== 'application/x-www-form-urlencoded') return errorPage(400, 'Unexpected form encoding.')
        const text = sentText(sent)
        if (text === null) return errorPage(413, 'The form is too large.')
        const form = new URLSearchParams(text)
        const problem = csrfProblem(request, d.baseUrl, session, form.get('csrf'))
        if (problem) return errorPage(403, `Refused: ${problem}.`)
        const held = await d.oauth.takeRequest(form.get('request_id') ?? '', session.id)
        if (!held) return errorPage(400, 'This consent page has expired or was already answered.')
        const approved = form.get('decision') === 'approve'
        const location = await d.oauth.decide(held, { id: session.user.id, accountId: session.user.accountId }, approved)
        d.log.info(approved ? 'oauth consent granted' : 'oauth consent denied', { clientId: held.clientId, userId: session.user.id })
        return redirect(location, 303)
      },
      { bodyLimit: BODY_LIMIT },
    )
}
