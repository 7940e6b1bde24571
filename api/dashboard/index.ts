// The dashboard: its pages, its actions, and the dashboard routes (README: "Signing in, the dashboard, and OAuth for agents"). Rules enforced:
//   - authentication is the session cookie only: any Authorization header, even a valid bearer token,
//     is refused with 401 (these routes serve the web app, never an agent);
//   - each user sees only their own account's data: another account's id is 404, like a missing one;
//   - POSTs pass the Origin and anti-CSRF token checks (the cookie is SameSite=Lax besides);
//   - no CORS headers, no framing, no caching (pageHeaders / jsonHeaders).
// Who may call which route is one option of the route (guards.ts: `session` or `form`); the routes come in
// groups: pages, start forms, the script's actions, and the reads the report pages poll.
import Elysia from 'elysia'
import type { SignInSession } from '../../shared/db/users.ts'
import { type DashboardContext, type DashboardDeps, notFound } from './context.ts'
import { dashboardGuards, json, sessionLabel } from './guards.ts'
import { readPatch } from '../patches/service.ts'
import { appsPage, settingsPage } from './pages.ts'
import { type RepositoryPanel, repositoryPanel, repositoryRoutes } from './repository.ts'
import { DashboardService } from './service.ts'
import { startRoutes } from './start.ts'

export function dashboardRoutes(d: DashboardDeps) {
  const c: DashboardContext = {
    d,
    service: new DashboardService(d.sql, d.revocations, d.checkout ?? null, d.keepLocalKey),
    guards: dashboardGuards(d.sql, d.baseUrl),
  }
  // The connected repository's card (api/dashboard/repository.ts): its forms re-render the settings page.
  const patches = d.services?.patches ?? null
  const settingsWith = async (s: SignInSession, repository: RepositoryPanel, status: number) =>
    settingsPage(
      { ...(await c.service.settings(s.user.accountId)), mcpUrl: `${d.baseUrl}/api/mcp`, repository },
      s.csrfToken,
      sessionLabel(s),
      status,
    )
  return new Elysia({ name: 'dashboard' })
    .use(pageRoutes(c, settingsWith))
    .use(startRoutes(c))
    .use(actionRoutes(c))
    .use(repositoryRoutes({ guards: c.guards, patches, log: d.log, render: settingsWith }))
    .use(readRoutes(c))
}

/** The dashboard's pages: the apps overview and the settings. */
function pageRoutes(
  { d, service, guards }: DashboardContext,
  settingsWith: (s: SignInSession, repository: RepositoryPanel, status: number) => Promise<Response>,
) {
  const patches = d.services?.patches ?? null
  return new Elysia({ name: 'dashboard-pages' })
    .use(guards)
    .get('/dashboard', async ({ session: s }) => appsPage(await service.overview(s.user.accountId), s.csrfToken, sessionLabel(s)), {
      session: 'page',
    })
    .get('/dashboard/settings', async ({ session: s }) => settingsWith(s, await repositoryPanel(patches, s.user.accountId), 200), {
      session: 'page',
    })
}

/** The actions of the dashboard's script: API keys, OAuth agents, monitors. Each answers JSON. */
function actionRoutes({ d, service, guards }: DashboardContext) {
  return new Elysia({ name: 'dashboard-actions' })
    .use(guards)
    .post(
      '/dashboard/api/keys',
      async ({ session: s }) => {
        const key = await service.createKey(s.user.accountId)
        d.log.info('api key created', { accountId: s.user.accountId, keyId: key.id })
        return json(201, key)
      },
      { session: 'action' },
    )
    .post(
      '/dashboard/api/keys/:id/regenerate',
      async ({ session: s, params }) => {
        const key = await service.regenerateKey(s.user.accountId, params.id)
        if (key) d.log.info('api key regenerated', { accountId: s.user.accountId, oldKeyId: params.id, keyId: key.id, label: key.label })
        return key ? json(201, key) : notFound()
      },
      { session: 'action' },
    )
    .post(
      '/dashboard/api/keys/:id/revoke',
      async ({ session: s, params }) =>
        (await service.revokeKey(s.user.accountId, params.id)) ? json(200, { revoked: true }) : notFound(),
      { session: 'action' },
    )
    .post(
      '/dashboard/api/agents/:clientId/revoke',
      async ({ session: s, params }) => {
        const n = await service.revokeAgent(s.user.accountId, params.clientId)
        d.log.info('oauth agent revoked', { accountId: s.user.accountId, clientId: params.clientId, tokens: n })
        return n > 0 ? json(200, { revoked: n }) : notFound()
      },
      { session: 'action' },
    )
    .post(
      '/dashboard/api/monitors/:id/:verb',
      async ({ session: s, params }) => {
        // A monitor (monitor_app) paused, resumed or removed from its app's card.
        if (params.verb === 'remove') {
          const removed = await service.removeMonitor(s.user.accountId, params.id)
          if (removed) d.log.info('monitor removed', { accountId: s.user.accountId, monitorId: params.id })
          return removed ? json(200, { removed: true }) : notFound()
        }
        if (params.verb !== 'pause' && params.verb !== 'resume') return notFound()
        const monitor = await service.setMonitorEnabled(s.user.accountId, params.id, params.verb === 'resume')
        return monitor ? json(200, monitor) : notFound()
      },
      { session: 'action' },
    )
}

/** What the report pages' script polls: a scan, an audit, a patch or a directory run of the session's account. */
function readRoutes({ d, service, guards }: DashboardContext) {
  const found = (v: unknown) => (v ? json(200, v) : notFound())
  return new Elysia({ name: 'dashboard-reads' })
    .use(guards)
    .get('/api/scans/:id', async ({ session: s, params }) => found(await service.scan(s.user.accountId, params.id)), { session: 'api' })
    .get('/api/audits/:id', async ({ session: s, params }) => found(await service.audit(s.user.accountId, params.id)), { session: 'api' })
    .get('/api/patches/:id', async ({ session: s, params }) => found(await readPatch(d.sql, d.baseUrl, s.user.accountId, params.id)), {
      session: 'api',
    })
    .get(
      '/api/directory-runs/:id',
      async ({ session: s, params }) => found(await d.services?.directoryRuns?.read(s.user.accountId, params.id)),
      {
        session: 'api',
      },
    )
}
