// The api's HTTP surface, assembled from feature plugins. Tests call app.handle(new Request(...)).
import Elysia from 'elysia'
import pkg from '../package.json' with { type: 'json' }
import { BearerAuth } from './auth/bearer.ts'
import { Revocations } from './auth/revocation.ts'
import { billingRoutes, checkoutCatalogFor } from './billing/index.ts'
import { cronRoutes } from './cron/index.ts'
import { dashboardRoutes } from './dashboard/index.ts'
import { exportRoutes } from './exports/index.ts'
import { RateLimiter } from './http/rate-limit.ts'
import { oauthRoutes } from './oauth/index.ts'
import { OAuthService } from './oauth/service.ts'
import { signInRoutes } from './signin/index.ts'
import { OidcClient, type OidcSettings } from './signin/oidc.ts'
import { hostRules } from './http/host.ts'
import { createMcpHandler } from './mcp/handler.ts'
import { publicRoutes } from './public/index.ts'
import { reportPageRoutes } from './report-pages/index.ts'
import type { Services } from './services.ts'
import { statusRoutes } from './status/index.ts'
import { viewerRoutes } from './viewer/index.ts'
import { wellKnown } from './wellknown.ts'
import { errorMessage } from '../shared/errors.ts'

export interface AppOptions {
  /** The identity provider for sign-in; by default the one OIDC_ISSUER names (none when it is empty). */
  oidc?: OidcSettings | null
  /** The embedded default: keeps a regenerated local key in DATA_DIR (returns where), so the next start uses it. */
  keepLocalKey?: (key: { plaintext: string; label: string }) => string | null
}

export function createApp(services: Services, opts: AppOptions = {}) {
  const rules = hostRules(services.config)
  const bearer = new BearerAuth(services.db.sql)
  const { config, db, infra, log } = services
  const limiter = new RateLimiter(infra.kv)
  const mcp = createMcpHandler(services, bearer, limiter)
  const revocations = new Revocations(infra.pubsub, bearer, log)
  revocations.listen().catch((e) => log.warn('revocation listener failed; other replicas forget within 5 s', { error: errorMessage(e) }))
  const oauth = new OAuthService({
    sql: db.sql,
    kv: infra.kv,
    baseUrl: config.baseUrl,
    now: () => new Date(),
    onRevoked: () => revocations.announce(),
  })
  const oidcSettings =
    opts.oidc !== undefined
      ? opts.oidc
      : config.OIDC_ISSUER
        ? {
            issuer: config.OIDC_ISSUER,
            clientId: config.OIDC_CLIENT_ID,
            clientSecret: config.OIDC_CLIENT_SECRET,
            scopes: config.OIDC_SCOPES,
            redirectUri: `${config.baseUrl}/auth/callback`,
          }
        : null
  const common = { sql: db.sql, baseUrl: config.baseUrl, limiter, trustedProxyHops: config.TRUSTED_PROXY_HOPS, log }
  /**
   * /api/mcp, mounted only at the server's fetch (server/api-server.ts), beside the router: the app's host
   * rules, then the handler; an error that escapes becomes the same deliberate answer. Its path has nothing
   * to decode.
   */
  const serveMcp = (request: Request, url?: URL): Response | Promise<Response> => {
    const failed = (e: unknown) => deliberateError('UNKNOWN', e, request, log)
    try {
      return rules.check(request, url) ?? mcp(request).catch(failed)
    } catch (e) {
      return failed(e)
    }
  }
  const app = new Elysia()
    .onRequest(({ request }) => rules.check(request) ?? malformedPath(request) ?? undefined)
    .onError({ as: 'global' }, ({ code, error, request }) => deliberateError(code, error, request, log))
    .use(wellKnown(services.config))
    .use(oauthRoutes({ ...common, oauth }))
    .use(
      signInRoutes({
        ...common,
        oidc: oidcSettings ? new OidcClient(oidcSettings) : null,
        kv: infra.kv,
        sessionTtlSeconds: config.SESSION_TTL_S,
      }),
    )
    .use(dashboardRoutes({ ...common, revocations, checkout: checkoutCatalogFor(config), services, keepLocalKey: opts.keepLocalKey }))
    .use(reportPageRoutes(services))
    .use(billingRoutes({ ...common, config }))
    .use(viewerRoutes(services.config, { signIn: oidcSettings !== null }))
    .use(statusRoutes(services))
    .use(cronRoutes(services))
    .use(exportRoutes(infra))
    .use(publicRoutes({ baseUrl: config.baseUrl, version: pkg.version }))
  return Object.assign(app, { serveMcp })
}

/**
 * Every error a route did not answer itself becomes a deliberate answer: never a framework's page, a stack
 * or a file path. Unknown paths are 404; what the framework could not read (a malformed escape in a path,
 * a body it failed to parse) is 400; anything else is logged and answered with a bare 500.
 */
export function deliberateError(code: unknown, error: unknown, request: Request | null, log: Services['log']): Response {
  const text = (status: number, body: string) =>
    new Response(`${body}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } })
  if (code === 'NOT_FOUND') return text(404, 'Not found')
  // The client went away while its body was being read: nobody receives the answer, and it is no fault here.
  if (error instanceof DOMException && error.name === 'AbortError') return text(400, 'Bad request: the connection was closed')
  if (code === 'PARSE' || code === 'VALIDATION' || code === 'INVALID_COOKIE_SIGNATURE' || error instanceof URIError) {
    return text(400, 'Bad request')
  }
  log.error('unhandled error', {
    method: request?.method,
    path: request ? safePath(request.url) : undefined,
    code: String(code),
    error: errorMessage(error).slice(0, 500),
  })
  return text(500, 'Internal error')
}

/** A path with a malformed percent-escape (%ZZ, a cut UTF-8 sequence) names nothing here: 400 before any route. */
function malformedPath(request: Request): Response | null {
  const path = request.url.replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/[?#].*$/s, '')
  try {
    decodeURIComponent(path)
    return null
  } catch {
    return new Response('Bad request: the path has a malformed percent-escape\n', {
      status: 400,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    })
  }
}

/** The path of a request for a log line: no query (it may hold a code or a token). */
function safePath(url: string): string {
  try {
    return new URL(url).pathname.slice(0, 200)
  } catch {
    return '(unparsable)'
  }
}

export type App = ReturnType<typeof createApp>
