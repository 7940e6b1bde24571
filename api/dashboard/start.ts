// The dashboard's start forms: a scan or an audit of a URL, started through the same services scan_app and
// audit_app call, then the browser goes to the report page, which shows the progress. A refused start
// re-renders the apps page with the reason and what was typed, at the status of the service's error code.
import Elysia from 'elysia'
import type { Principal } from '../../shared/db/accounts.ts'
import { AppError, isAppError } from '../../shared/errors.ts'
import { principalOf, sessionLabel, type FormPost } from './guards.ts'
import type { DashboardContext } from './context.ts'
import { auditOptions, StartUrl } from './model.ts'
import { appsPage } from './pages.ts'

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

export function startRoutes(c: DashboardContext) {
  const { d } = c
  const startForm = startFormOf(c)
  return new Elysia({ name: 'dashboard-start' })
    .use(c.guards)
    .post(
      '/dashboard/scans',
      ({ session, form }) =>
        startForm({ session, form }, 'scan', async (principal, url) => {
          // Answer once the scan is queued; the report page shows its progress.
          const id = await d.services!.scans.start(principal, url)
          d.log.info('scan started from the dashboard', { accountId: principal.account.id, scanId: id })
          return `/dashboard/scans/${id}`
        }),
      { form: true },
    )
    .post(
      '/dashboard/audits',
      ({ session, form }) =>
        startForm({ session, form }, 'audit', async (principal, url, form) => {
          const options = auditOptions(form)
          if (typeof options === 'string') throw new AppError('invalid_params', options)
          const started = await d.services!.audits.start(principal, url, options)
          d.log.info('audit started from the dashboard', { accountId: principal.account.id, auditId: started.auditId })
          return `/dashboard/audits/${started.auditId}`
        }),
      { form: true },
    )
}

/** A start form: the session's principal and the URL handed to `run`, or the page that says why not. */
function startFormOf({ d, service }: DashboardContext) {
  return async function startForm(
    { session, form }: FormPost,
    kind: 'scan' | 'audit',
    run: (p: Principal, url: string, form: URLSearchParams) => Promise<string>,
  ): Promise<Response> {
    const values = { url: form.get('url') ?? '', maxPages: form.get('maxPages') ?? '', maxDepth: form.get('maxDepth') ?? '' }
    const refuse = async (status: number, error: string) =>
      appsPage(await service.overview(session.user.accountId), session.csrfToken, sessionLabel(session), { kind, error, values }, status)
    const url = values.url.trim()
    if (!url) return refuse(400, 'Enter the URL of a page, such as https://app.example.com/.')
    if (url.length > StartUrl.maxLength!) return refuse(400, `That URL is longer than ${StartUrl.maxLength} characters.`)
    if (!d.services) return refuse(503, 'Scans cannot be started from this deployment of the dashboard.')
    const principal = await principalOf(d.sql, session)
    if (!principal) return refuse(401, 'This account no longer exists. Sign in again.')
    try {
      return new Response(null, { status: 303, headers: { location: await run(principal, url, form), 'cache-control': 'no-store' } })
    } catch (e) {
      if (!isAppError(e)) throw e
      return refuse(startStatus(e), startMessage(e))
    }
  }
}
