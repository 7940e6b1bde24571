// The api's HTTP surface, assembled from feature plugins. Tests call app.handle(new Request(...)).
import Elysia from 'elysia'
import pkg from '../package.json' with { type: 'json' }
import { BearerAuth } from './auth/bearer.ts'
import { Revocations } from './auth/revocation.ts'
import { dashboardRoutes } from './dashboard/index.ts'
import { RateLimiter } from './http/rate-limit.ts'
import { oauthRoutes } from './oauth/index.ts'
import { OAuthService } from './oauth/service.ts'
import { signInRoutes } from './signin/index.ts'
import { OidcClient, type OidcSettings } from './signin/oidc.ts'
import { hostRules } from './http/host.ts'
import { createMcpHandler } from './mcp/handler.ts'
import type { Services } from './services.ts'
import { viewerRoutes } from './viewer/index.ts'
import { wellKnown } from './wellknown.ts'

export interface AppOptions {
  /** The identity provider for sign-in; by default the one OIDC_ISSUER names (none when it is empty). */
  oidc?: OidcSettings | null
}

export function createApp(services: Services, opts: AppOptions = {}) {
  const rules = hostRules(services.config)
  const bearer = new BearerAuth(services.db.sql)
  const mcp = createMcpHandler(services, bearer)
  const { config, db, infra, log } = services
  const revocations = new Revocations(infra.pubsub, bearer, log)
  revocations
    .listen()
    .catch((e) => log.warn('revocation listener failed; other replicas forget within 5 s', { error: (e as Error).message }))
  const limiter = new RateLimiter(infra.kv)
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
  return new Elysia()
    .onRequest(({ request }) => rules.check(request) ?? undefined)
    .all('/api/mcp', ({ request }) => mcp(request), { parse: 'none' })
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
    .use(dashboardRoutes({ ...common, revocations }))
    .use(viewerRoutes(services.config))
    .get('/healthz', async () => {
      await services.db.sql`SELECT 1`
      return { ok: true, version: pkg.version, database: services.db.kind, queue: services.infra.kind }
    })
    .get(
      '/',
      () =>
        new Response(
          `App Audit ${pkg.version}\nMCP endpoint: ${services.config.baseUrl}/api/mcp (POST JSON-RPC 2.0, Authorization: Bearer act_...)\n`,
          { headers: { 'content-type': 'text/plain; charset=utf-8' } },
        ),
    )
}

export type App = ReturnType<typeof createApp>
