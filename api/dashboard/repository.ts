// The connected repository on the settings page: connect (git URL + token) and disconnect, both plain
// CSRF-protected forms. The token is sealed at rest by the patch service and never rendered again: the
// page says only that one is set. A refused connection re-renders the page with the reason and the URL
// typed, never the token.
import Elysia from 'elysia'
import { isAppError } from '../../shared/errors.ts'
import type { SignInSession } from '../../shared/db/users.ts'
import { type Html, html } from '../../shared/lib/html.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { PatchService } from '../patches/service.ts'
import type { RepoConnection } from '../patches/store.ts'
import type { DashboardGuards } from './guards.ts'

export interface RepositoryPanel {
  /** false: this deployment cannot store a token (no SECRETS_KEY, or no patch service). */
  available: boolean
  connection: RepoConnection | null
  /** A refused connect: the reason, and the fields to fill in again (never the token). */
  error?: string
  values?: { url?: string; baseBranch?: string }
}

const when = (d: Date | null) => (d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'never')

/** The settings page's "Repository" card. */
export function repositorySection(r: RepositoryPanel, csrf: string): Html {
  const field = html`<input type="hidden" name="csrf" value="${csrf}">`
  const intro = html`<p>With a repository connected, <code>create_patch</code> (Scale plan) pushes its fix on a new branch and opens a
pull request listing the findings it fixes and how to verify each. Use a token that may push branches and open pull requests on
this repository only (a fine-grained token with Contents and Pull requests write access).</p>`
  if (!r.available)
    return html`<section class="card" id="repository"><h2>Repository</h2>${intro}
<p class="muted" id="repository-unavailable">This deployment stores no repository tokens (it has no SECRETS_KEY).</p></section>`
  const error = r.error && html`<p class="banner bad" id="repository-error" role="alert">${r.error}</p>`
  if (r.connection) {
    const c = r.connection
    return html`<section class="card" id="repository"><h2>Repository</h2>${intro}${error}
<table id="repository-connection"><tbody>
<tr><th>Repository</th><td><code id="repository-url">${c.url}</code></td></tr>
<tr><th>Pull requests into</th><td><code>${c.baseBranch}</code></td></tr>
<tr><th>Token</th><td id="repository-token">set <span class="muted">(stored encrypted; it is never shown again)</span></td></tr>
<tr><th>Connected</th><td>${when(c.createdAt)}</td></tr><tr><th>Last used</th><td>${when(c.lastUsedAt)}</td></tr>
</tbody></table>
<form method="post" action="/dashboard/repository/disconnect" id="repository-disconnect">${field}
<p class="actions"><button type="submit" class="danger">Disconnect</button> <span class="muted">Deletes the stored token; branches and pull requests stay.</span></p></form>
<p class="muted">To change the repository or its token, disconnect and connect again.</p></section>`
  }
  const v = r.values ?? {}
  return html`<section class="card" id="repository"><h2>Repository</h2>${intro}${error}
<form method="post" action="/dashboard/repository" id="repository-connect" autocomplete="off">${field}
<label class="field"><span>Git URL</span><input name="url" type="url" required maxlength="2048" placeholder="https://github.com/acme/site.git" value="${v.url ?? ''}"></label>
<label class="field"><span>Token</span><input name="token" type="password" required maxlength="4096" autocomplete="new-password"></label>
<label class="field"><span>Base branch</span><input name="baseBranch" maxlength="100" placeholder="the default branch" value="${v.baseBranch ?? ''}"></label>
<p class="actions"><button type="submit" class="primary">Connect repository</button> <span class="muted">The URL and token are checked against the repository first.</span></p></form></section>`
}

/** What the routes need: the guards, the patch service (absent: connecting is refused), and the page renderer. */
export interface RepositoryRouteDeps {
  guards: DashboardGuards
  patches: PatchService | null
  log: Logger
  /** The settings page with this repository card, at this status. */
  render(session: SignInSession, panel: RepositoryPanel, status: number): Promise<Response>
}

export async function repositoryPanel(patches: PatchService | null, accountId: string): Promise<RepositoryPanel> {
  if (!patches?.box) return { available: false, connection: null }
  return { available: true, connection: await patches.connection(accountId) }
}

/** The status a refused connect answers with, by error code. */
const REFUSAL_STATUS: Partial<Record<string, number>> = { invalid_params: 400, plan_required: 403, rate_limited: 429 }

const backToSettings = () =>
  new Response(null, { status: 303, headers: { location: '/dashboard/settings#repository', 'cache-control': 'no-store' } })

export function repositoryRoutes(d: RepositoryRouteDeps) {
  return new Elysia({ name: 'dashboard-repository' })
    .use(d.guards)
    .post(
      '/dashboard/repository',
      async ({ session, form }) => {
        const accountId = session.user.accountId
        const values = { url: (form.get('url') ?? '').slice(0, 2048), baseBranch: (form.get('baseBranch') ?? '').slice(0, 100) }
        const refuse = async (status: number, error: string) =>
          d.render(session, { ...(await repositoryPanel(d.patches, accountId)), error, values }, status)
        if (!d.patches?.box) return refuse(503, 'This deployment stores no repository tokens (it has no SECRETS_KEY).')
        const baseBranch = values.baseBranch.trim()
        try {
          const c = await d.patches.connect(accountId, {
            url: values.url,
            token: form.get('token') ?? '',
            ...(baseBranch ? { baseBranch } : {}),
          })
          d.log.info('repository connected from the dashboard', { accountId, repositoryId: c.id })
          return backToSettings()
        } catch (e) {
          if (!isAppError(e)) throw e
          return refuse(REFUSAL_STATUS[e.code] ?? 500, e.message)
        }
      },
      { form: true },
    )
    .post(
      '/dashboard/repository/disconnect',
      async ({ session }) => {
        const accountId = session.user.accountId
        if (d.patches && (await d.patches.disconnect(accountId))) d.log.info('repository disconnected', { accountId })
        return backToSettings()
      },
      { form: true },
    )
}
