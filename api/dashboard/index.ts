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
import type { Logger } from '../../shared/lib/log.ts'
import type { Revocations } from '../auth/revocation.ts'
import type { CheckoutCatalog } from '../billing/service.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import { AppError, isAppError } from '../../shared/errors.ts'
import type { AuditService } from '../audits/service.ts'
import type { ScanService } from '../scans/service.ts'
import { dashboardGuards, json, problem } from './guards.ts'
import type { DirectoryRunService } from '../directory-runs/service.ts'
import { type PatchService, readPatch } from '../patches/service.ts'
import { appsPage, settingsPage } from './pages.ts'
import { type RepositoryPanel, repositoryPanel, repositoryRoutes } from './repository.ts'
import { DashboardService } from './service.ts'

export interface DashboardDeps {
  sql: Sql
  baseUrl: string
  revocations: Revocations
  log: Logger
  /** What checkout sells on this deployment (api/billing); null or absent: no Upgrade or Buy credits button. */
  checkout?: CheckoutCatalog | null
  /** The embedded default: keeps a regenerated local key in DATA_DIR (returns where), so the next start prints and uses it. */
  keepLocalKey?: (key: { plaintext: string; label: string }) => string | null
  /** The services scan_app and audit_app call, for the start forms; absent: the forms answer 503. */
  services?: { scans: ScanService; audits: AuditService; patches?: PatchService; directoryRuns?: DirectoryRunService }
}

/** Start an audit: the fields of the dashboard's form, bounded like audit_app's options. */
function auditOptions(form: URLSearchParams): { maxPages?: number; maxDepth?: number } | string {
  const int = (name: string, min: number, max: number): number | undefined | string => {
    const raw = form.get(name)
    if (raw === null || raw.trim() === '') return undefined
    const n = Number(raw)
    return Number.isSafeInteger(n) && n >= min && n <= max ? n : `${name} must be a whole number from ${min} to ${max}.`
  }
  const maxPages = int('maxPages', 1, 500)
  const maxDepth = int('maxDepth', 0, 10)
  if (typeof maxPages === 'string') return maxPages
  if (typeof maxDepth === 'string') return maxDepth
  return { ...(maxPages !== undefined ? { maxPages } : {}), ...(maxDepth !== undefined ? { maxDepth } : {}) }
}

/** The HTTP status of a start that the service refused, by its error code. */
function startStatus(e: AppError): number {
  switch (e.code) {
    case 'invalid_url':
    case 'invalid_params':
    case 'target_blocked':
    case 'target_unreachable':
      return 400
    case 'allowance_exhausted':
      return 402
    case 'rate_limited':
      return 429
    case 'scanner_unavailable':
      return 503
    default:
      return 500
  }
}

/** What a person reads when a start is refused: the service's own message, plus what to do where it helps. */
function startMessage(e: AppError): string {
  if (e.code === 'allowance_exhausted') {
    const d = e.details as { allowance?: number; used?: number; credits?: number; resetsAt?: string }
    return `${e.message} This week: ${d.used ?? '?'} of ${d.allowance ?? '?'} audits used, ${d.credits ?? 0} credits left; the allowance resets ${d.resetsAt ?? 'next Monday'}. Settings → Plan and credits sells more.`
  }
  return e.message
}

export function dashboardRoutes(d: DashboardDeps) {
  const service = new DashboardService(d.sql, d.revocations, d.checkout ?? null, d.keepLocalKey)
  const guards = dashboardGuards(d.sql, d.baseUrl)
  const { authenticate, pageSession } = guards

  async function action(req: Request, run: (s: SignInSession) => Promise<Response>): Promise<Response> {
    const s = await guards.action(req)
    return s instanceof Response ? s : run(s)
  }

  /** A start form: the session's principal and the URL, or the page that says why not. */
  async function startForm(
    req: Request,
    kind: 'scan' | 'audit',
    run: (p: Principal, url: string, form: URLSearchParams) => Promise<string>,
  ): Promise<Response> {
    const a = await guards.formAction(req)
    if (a instanceof Response) return a
    const { session, form } = a
    const values = { url: form.get('url') ?? '', maxPages: form.get('maxPages') ?? '', maxDepth: form.get('maxDepth') ?? '' }
    const refuse = async (status: number, error: string) =>
      appsPage(await service.overview(session.user.accountId), session.csrfToken, label(session), { kind, error, values }, status)
    const url = values.url.trim()
    if (!url) return refuse(400, 'Enter the URL of a page, such as https://app.example.com/.')
    if (url.length > 2_048) return refuse(400, 'That URL is longer than 2048 characters.')
    if (!d.services) return refuse(503, 'Scans cannot be started from this deployment of the dashboard.')
    const principal = await guards.principalOf(session)
    if (!principal) return refuse(401, 'This account no longer exists. Sign in again.')
    try {
      return new Response(null, { status: 303, headers: { location: await run(principal, url, form), 'cache-control': 'no-store' } })
    } catch (e) {
      if (!isAppError(e)) throw e
      return refuse(startStatus(e), startMessage(e))
    }
  }

  const label = (s: SignInSession) => s.user.email || s.user.name || s.user.subject
  // The connected repository's card (api/dashboard/repository.ts): its forms re-render the settings page.
  const patches = d.services?.patches ?? null
  const settingsWith = async (s: SignInSession, repository: RepositoryPanel, status: number) =>
    settingsPage(
      { ...(await service.settings(s.user.accountId)), mcpUrl: `${d.baseUrl}/api/mcp`, repository },
      s.csrfToken,
      label(s),
      status,
    )
  const notFound = () => problem(404, 'not_found', 'No such resource in this account.')

  return new Elysia({ name: 'dashboard' })
    .get('/dashboard', async ({ request }) => {
      const s = await pageSession(request)
      if (s instanceof Response) return s
      return appsPage(await service.overview(s.user.accountId), s.csrfToken, label(s))
    })
    .post(
      '/dashboard/scans',
      ({ request }) =>
        startForm(request, 'scan', async (principal, url) => {
          // Answer once the scan is queued; the report page shows its progress.
          const id = await d.services!.scans.start(principal, url)
          d.log.info('scan started from the dashboard', { accountId: principal.account.id, scanId: id })
          return `/dashboard/scans/${id}`
        }),
      { parse: 'none' },
    )
    .post(
      '/dashboard/audits',
      ({ request }) =>
        startForm(request, 'audit', async (principal, url, form) => {
          const options = auditOptions(form)
          if (typeof options === 'string') throw new AppError('invalid_params', options)
          const started = await d.services!.audits.start(principal, url, options)
          d.log.info('audit started from the dashboard', { accountId: principal.account.id, auditId: started.auditId })
          return `/dashboard/audits/${started.auditId}`
        }),
      { parse: 'none' },
    )
    .get('/dashboard/settings', async ({ request }) => {
      const s = await pageSession(request)
      if (s instanceof Response) return s
      return settingsPage(
        {
          ...(await service.settings(s.user.accountId)),
          mcpUrl: `${d.baseUrl}/api/mcp`,
          repository: await repositoryPanel(patches, s.user.accountId),
        },
        s.csrfToken,
        label(s),
      )
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
          if (key) d.log.info('api key regenerated', { accountId: s.user.accountId, oldKeyId: params.id, keyId: key.id, label: key.label })
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
    .use(repositoryRoutes({ guards, patches, log: d.log, render: settingsWith }))
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
    .get('/api/patches/:id', async ({ request, params }) => {
      const s = await authenticate(request)
      if (s instanceof Response) return s
      const patch = await readPatch(d.sql, d.baseUrl, s.user.accountId, params.id)
      return patch ? json(200, patch) : notFound()
    })
    .get('/api/directory-runs/:id', async ({ request, params }) => {
      const s = await authenticate(request)
      if (s instanceof Response) return s
      const run = (await d.services?.directoryRuns?.read(s.user.accountId, params.id)) ?? null
      return run ? json(200, run) : notFound()
    })
}
