// The dashboard: its pages, its actions, and the dashboard routes (README: "Signing in, the dashboard, and OAuth for agents"). Rules enforced:
//   - authentication is the session cookie only: any Authorization header, even a valid bearer token,
//     is refused with 401 (these routes serve the web app, never an agent);
//   - each user sees only their own account's data: another account's id is 404, like a missing one;
//   - POSTs pass the Origin and anti-CSRF token checks (the cookie is SameSite=Lax besides);
//   - no CORS headers, no framing, no caching (pageHeaders / jsonHeaders).
// Patches and directory runs do not exist yet: their routes authenticate, then answer 404 for any id.
import Elysia from 'elysia'
import type { Sql } from '../../shared/db/index.ts'
import type { SignInSession } from '../../shared/db/users.ts'
import type { Logger } from '../../shared/log.ts'
import type { Revocations } from '../auth/revocation.ts'
import type { CheckoutCatalog } from '../billing/service.ts'
import { csrfProblem, currentSession } from '../signin/session.ts'
import { appsPage, settingsPage } from './pages.ts'
import { DashboardService } from './service.ts'

export interface DashboardDeps {
  sql: Sql
  baseUrl: string
  revocations: Revocations
  log: Logger
  /** What checkout sells on this deployment (api/billing); null or absent: no Upgrade or Buy credits button. */
  checkout?: CheckoutCatalog | null
}

const jsonHeaders = {
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
}

const json = (status: number, body: unknown) => Response.json(body, { status, headers: jsonHeaders })
const problem = (status: number, code: string, message: string) => json(status, { error: code, message })

export function dashboardRoutes(d: DashboardDeps) {
  const service = new DashboardService(d.sql, d.revocations, d.checkout ?? null)
  const base = new URL(d.baseUrl)

  /** The signed-in session of a dashboard route, or the 401 that ends the request. */
  async function authenticate(req: Request): Promise<SignInSession | Response> {
    if (req.headers.get('authorization') !== null) {
      return problem(
        401,
        'bearer_not_accepted',
        'Dashboard routes accept only a signed-in session, never a bearer token; agents use /api/mcp.',
      )
    }
    const session = await currentSession(d.sql, req)
    return session ?? problem(401, 'not_signed_in', 'Sign in at /auth/login.')
  }

  /** Pages: signed-in users only, on BASE_URL's host (where the session cookie lives). */
  async function pageSession(req: Request): Promise<SignInSession | Response> {
    const url = new URL(req.url)
    if ((req.headers.get('host') ?? url.host) !== base.host) return Response.redirect(`${d.baseUrl}${url.pathname}${url.search}`, 302)
    const session = await currentSession(d.sql, req)
    if (session) return session
    return new Response(null, {
      status: 302,
      headers: { location: `/auth/login?return_to=${encodeURIComponent(url.pathname)}`, 'cache-control': 'no-store' },
    })
  }

  async function action(req: Request, run: (s: SignInSession) => Promise<Response>): Promise<Response> {
    const s = await authenticate(req)
    if (s instanceof Response) return s
    const why = csrfProblem(req, d.baseUrl, s, req.headers.get('x-csrf-token'))
    if (why) return problem(403, 'csrf', `Refused: ${why}.`)
    return run(s)
  }

  const label = (s: SignInSession) => s.user.email || s.user.name || s.user.subject
  const notFound = () => problem(404, 'not_found', 'No such resource in this account.')

  return new Elysia({ name: 'dashboard' })
    .get('/dashboard', async ({ request }) => {
      const s = await pageSession(request)
      if (s instanceof Response) return s
      return appsPage(await service.overview(s.user.accountId), s.csrfToken, label(s))
    })
    .get('/dashboard/settings', async ({ request }) => {
      const s = await pageSession(request)
      if (s instanceof Response) return s
      return settingsPage({ ...(await service.settings(s.user.accountId)), mcpUrl: `${d.baseUrl}/api/mcp` }, s.csrfToken, label(s))
    })
    .post(
      '/dashboard/api/keys',
      ({ request }) =>
        action(request, async (s) => {
          const key = await service.createKey(s.user.accountId)
          d.log.info('api key created', { accountId: s.user.accountId, keyId: key.id })
          return json(201, key)
        }),
      { parse: 'none' },
    )
    .post(
      '/dashboard/api/keys/:id/regenerate',
      ({ request, params }) =>
        action(request, async (s) => {
          const key = await service.regenerateKey(s.user.accountId, params.id)
          return key ? json(201, key) : notFound()
        }),
      { parse: 'none' },
    )
    .post(
      '/dashboard/api/keys/:id/revoke',
      ({ request, params }) =>
        action(request, async (s) => ((await service.revokeKey(s.user.accountId, params.id)) ? json(200, { revoked: true }) : notFound())),
      { parse: 'none' },
    )
    .post(
      '/dashboard/api/agents/:clientId/revoke',
      ({ request, params }) =>
        action(request, async (s) => {
          const n = await service.revokeAgent(s.user.accountId, params.clientId)
          d.log.info('oauth agent revoked', { accountId: s.user.accountId, clientId: params.clientId, tokens: n })
          return n > 0 ? json(200, { revoked: n }) : notFound()
        }),
      { parse: 'none' },
    )
    .post(
      '/dashboard/api/monitors/:id/:verb',
      ({ request, params }) =>
        action(request, async (s) => {
          // A monitor (monitor_app) paused, resumed or removed from its app's card.
          if (params.verb === 'remove') {
            const removed = await service.removeMonitor(s.user.accountId, params.id)
            if (removed) d.log.info('monitor removed', { accountId: s.user.accountId, monitorId: params.id })
            return removed ? json(200, { removed: true }) : notFound()
          }
          if (params.verb !== 'pause' && params.verb !== 'resume') return notFound()
          const monitor = await service.setMonitorEnabled(s.user.accountId, params.id, params.verb === 'resume')
          return monitor ? json(200, monitor) : notFound()
        }),
      { parse: 'none' },
    )
    .get('/api/scans/:id', async ({ request, params }) => {
      const s = await authenticate(request)
      if (s instanceof Response) return s
      const scan = await service.scan(s.user.accountId, params.id)
      return scan ? json(200, scan) : notFound()
    })
    .get('/api/audits/:id', async ({ request, params }) => {
      const s = await authenticate(request)
      if (s instanceof Response) return s
      const audit = await service.audit(s.user.accountId, params.id)
      return audit ? json(200, audit) : notFound()
    })
    .get('/api/patches/:id', async ({ request }) => {
      const s = await authenticate(request)
      return s instanceof Response ? s : notFound()
    })
    .get('/api/directory-runs/:id', async ({ request }) => {
      const s = await authenticate(request)
      return s instanceof Response ? s : notFound()
    })
}
