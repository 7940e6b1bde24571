// The dashboard's server-rendered pages, built with html`...` (everything interpolated is escaped). Dynamic
// bits (live scan progress, creating and revoking credentials, starting a checkout) are done by the small
// script in client.ts, bundled when this module loads, through the dashboard routes.
import type { Plan } from '../../shared/db/accounts.ts'
import type { ApiKeyListItem } from '../../shared/db/credentials.ts'
import type { AuditListItem } from '../../shared/db/dashboard.ts'
import type { MonitorRunItem } from '../../shared/db/monitors.ts'
import type { Agent } from '../../shared/db/oauth.ts'
import type { AppListItem, ScanListItem } from '../../shared/db/scans.ts'
import type { BillingView, CheckoutKind } from '../billing/service.ts'
import type { ChangeItem } from '../../shared/report/monitor-diff.ts'
import { type Html, html, joinHtml, raw } from '../../shared/lib/html.ts'
import { bundleClientScript } from '../http/client-script.ts'
import { layout, newNonce, pageHeaders } from '../http/layout.ts'
import { type RepositoryPanel, repositorySection } from './repository.ts'
import type { MonitorPanel } from './service.ts'

const DASHBOARD_SCRIPT = await bundleClientScript(new URL('./client.ts', import.meta.url))

const when = (d: Date | null) => (d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'never')

function nav(csrf: string, user: string): Html {
  return html`<a href="/dashboard">Apps</a><a href="/dashboard/settings">Settings</a><span class="muted">${user}</span>
<form method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" id="sign-out">Sign out</button></form>`
}

/** A signed-in page: the dashboard's navigation, the session's anti-CSRF token, one inline script and style by nonce. */
export function dashboardPage(
  title: string,
  body: Html,
  csrf: string,
  user: string,
  opts: { status?: number; script?: string; style?: Html; nonce?: string } = {},
): Response {
  const nonce = opts.nonce ?? newNonce()
  const page = layout({
    title,
    nonce,
    body: html`<meta name="csrf-token" content="${csrf}">${opts.style && html`<style nonce="${nonce}">${opts.style}</style>`}${body}`,
    nav: nav(csrf, user),
    script: opts.script ?? DASHBOARD_SCRIPT,
  })
  return new Response(page, { status: opts.status ?? 200, headers: pageHeaders(nonce) })
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
const atHour = (h: number) => `${String(h).padStart(2, '0')}:00 UTC`

function changeText(c: ChangeItem): string {
  switch (c.kind) {
    case 'score':
      return `score ${c.from} → ${c.to}`
    case 'check':
      return `${c.checkId}: ${c.from} → ${c.to}`
    case 'finding':
      return `${c.change} ${c.status} ${c.checkId}: ${c.summary}`
  }
}

function runRow(r: MonitorRunItem): Html {
  const score = r.score === null ? '' : r.previousScore === null ? `${r.score}` : `${r.previousScore} → ${r.score}`
  const what = r.error ? r.error.message : [...r.regressions, ...r.improvements].map(changeText).join('; ')
  // The run's time links to its scan's report, when it made one.
  const at = r.scanId ? html`<a href="/dashboard/scans/${r.scanId}">${when(r.createdAt)}</a>` : when(r.createdAt)
  return html`<tr data-run="${r.id}" data-status="${r.status}"><td>${at}</td>
<td class="status">${r.status}${r.alert && ' (alert)'}</td><td class="score">${score}</td><td>${what}</td></tr>`
}

/** An app's monitor: schedule and state, pause/resume and remove, regressions still open, and its latest runs. */
function monitorSection(m: MonitorPanel | null): Html | null {
  if (!m) return null
  const schedule = m.schedule === 'daily' ? `daily at ${atHour(m.hour)}` : `weekly on ${WEEKDAYS[m.weekday ?? 0]} at ${atHour(m.hour)}`
  const state = m.enabled ? `next run ${when(m.nextRunAt)}` : 'paused'
  const open = m.openRuns.flatMap((r) => r.regressions.filter((x) => x.resolvedAt === null).map((x) => ({ x, at: r.createdAt })))
  return html`<div class="monitor" data-monitor="${m.id}" data-enabled="${String(m.enabled)}"><h3>Monitor</h3>
<p><code>${m.url}</code> ${schedule}, alerts on ${m.notifyOn === 'any' ? 'any change' : 'regressions'};
<span class="monitor-state">${state}</span>. Last score ${m.lastScore === null ? 'not yet' : `${m.lastScore} (${m.lastGrade})`};
<span class="open-regressions">${m.openRegressions}</span> open regressions.</p>
<p><button class="monitor-toggle" data-monitor="${m.id}" data-verb="${m.enabled ? 'pause' : 'resume'}">${m.enabled ? 'Pause' : 'Resume'}</button>
<button class="danger monitor-remove" data-monitor="${m.id}">Remove</button></p>
${open.length > 0 && html`<h4>Open regressions</h4><ul class="regressions">${open.map(({ x, at }) => html`<li>${changeText(x)} <span class="muted">since ${when(at)}</span></li>`)}</ul>`}
${
  m.runs.length
    ? html`<table class="monitor-runs"><thead><tr><th>Run</th><th>Status</th><th>Score</th><th>Changes</th></tr></thead><tbody>
${m.runs.map(runRow)}</tbody></table>`
    : html`<p class="muted">No runs yet.</p>`
}</div>`
}

/** The forms that start a scan or an audit (the same services scan_app and audit_app call). */
function startSection(csrf: string, form: StartForm): Html {
  const v = (k: keyof StartForm['values']) => form.values[k] ?? ''
  const error = form.error && html`<p class="banner bad" id="start-error" role="alert">${form.error}</p>`
  const field = html`<input type="hidden" name="csrf" value="${csrf}">`
  return html`<section class="card" id="start"><h2>Scan or audit an app</h2>${error}
<form method="post" action="/dashboard/scans" id="start-scan">${field}
<label class="field"><span>Page URL</span><input name="url" type="url" required maxlength="2048" placeholder="https://app.example.com/" value="${form.kind === 'scan' ? v('url') : ''}"></label>
<p class="actions"><button type="submit" class="primary">Scan this page</button> <span class="muted">A few seconds; not metered.</span></p></form>
<form method="post" action="/dashboard/audits" id="start-audit">${field}
<label class="field"><span>Site URL</span><input name="url" type="url" required maxlength="2048" placeholder="https://app.example.com/" value="${form.kind === 'audit' ? v('url') : ''}"></label>
<div class="fields"><label class="field"><span>Pages</span><input name="maxPages" type="number" min="1" max="500" value="${form.kind === 'audit' && form.values.maxPages ? v('maxPages') : '50'}"></label>
<label class="field"><span>Depth</span><input name="maxDepth" type="number" min="0" max="10" value="${form.kind === 'audit' && form.values.maxDepth ? v('maxDepth') : '3'}"></label></div>
<p class="actions"><button type="submit" class="primary">Audit the whole site</button> <span class="muted">Minutes; uses one of this week's audits, then a credit.</span></p></form></section>`
}

export interface StartForm {
  kind?: 'scan' | 'audit'
  error?: string
  values: { url?: string; maxPages?: string; maxDepth?: string }
}

const scoreText = (score: number | null, grade: string | null) => (score === null ? '' : `${score} ${grade}`)

type AppCard = AppListItem & { recentScans: ScanListItem[]; recentAudits: AuditListItem[]; monitor?: MonitorPanel | null }

/** A scan's or an audit's link: what it looked at and when (its id is for agents, not people). */
const reportLink = (href: string, url: string, at: Date) =>
  html`<a href="${href}" class="report-link"><span class="target">${url}</span> <span class="when">${when(at)}</span></a>`

const scanRow = (s: ScanListItem) =>
  html`<tr data-scan="${s.id}" data-status="${s.status}"><td>${reportLink(`/dashboard/scans/${s.id}`, s.url, s.createdAt)}</td>
<td class="status">${s.status}</td><td class="score">${scoreText(s.score, s.grade)}</td></tr>`

const auditRow = (a: AuditListItem) =>
  html`<tr data-audit="${a.id}" data-status="${a.status}"><td>${reportLink(`/dashboard/audits/${a.id}`, a.url, a.createdAt)}</td>
<td class="status">${a.status}</td><td class="pages">${a.pagesScanned} of ${a.pagesDiscovered}</td><td class="score">${scoreText(a.score, a.grade)}</td></tr>`

/** One app: its latest score, recent scans and audits, and its monitor. */
function appCard(app: AppCard): Html {
  const latest = app.latestCompletedScan
  return html`<section class="card app"><h2>${app.origin}</h2>
<p class="muted">Score ${latest ? `${latest.score} (${latest.grade})` : 'not yet'}</p>
${
  app.recentScans.length > 0 &&
  html`<table><thead><tr><th>Scan</th><th>Status</th><th>Score</th></tr></thead><tbody>
${app.recentScans.map(scanRow)}
</tbody></table>`
}
${
  app.recentAudits.length > 0 &&
  html`<h3>Audits</h3><table><thead><tr><th>Audit</th><th>Status</th><th>Pages</th><th>Score</th></tr></thead><tbody>
${app.recentAudits.map(auditRow)}
</tbody></table>`
}${monitorSection(app.monitor ?? null)}</section>`
}

export function appsPage(apps: AppCard[], csrf: string, user: string, start: StartForm = { values: {} }, status = 200): Response {
  const empty = html`<div class="card"><h2>No apps yet</h2><p>Start a scan above, or connect an MCP client (Settings, Agents and MCP) and ask it to run
<code>scan_app</code> on your app; its scans and audits appear here, with live progress.</p></div>`
  return dashboardPage('Apps', html`<h1>Apps</h1>${startSection(csrf, start)}${apps.length ? apps.map(appCard) : empty}`, csrf, user, {
    status,
    style: DASHBOARD_STYLE,
  })
}

const DASHBOARD_STYLE = raw(`.banner{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.6rem 1rem}
.banner.bad{background:#ffebe9;border-color:#cf222e}#start form{margin:.8rem 0 1.2rem}
.report-link{display:block;text-decoration:none}.report-link .target{text-decoration:underline;overflow-wrap:anywhere}
.report-link .when{display:block;color:#5b6673;font-size:.9em}`)

const PLAN_NAMES: Record<Plan, string> = { free: 'Free', launch: 'Launch', scale: 'Scale' }

/** Plan, this week's allowance and credits; the checkout buttons only for what this deployment sells. */
function billingSection(b: BillingView): Html {
  const grace =
    b.graceUntil &&
    html`<p id="grace"><strong>A payment failed.</strong> The ${PLAN_NAMES[b.plan]} plan stays until ${when(new Date(b.graceUntil))};
after that the account is on Free unless the payment goes through.</p>`
  const button = (k: CheckoutKind) =>
    k === 'credits'
      ? html`<button class="checkout" data-kind="credits">Buy ${b.creditsPerPack} credits</button>`
      : html`<button class="primary checkout" data-kind="${k}">Upgrade to ${PLAN_NAMES[k]}</button>`
  const actions =
    b.offers.length > 0 &&
    html`<p id="checkout">${joinHtml(b.offers.map(button), ' ')}</p><p class="muted">Stripe takes the payment and sends you back here.</p>`
  return html`<section class="card" id="billing"><h2>Plan and credits</h2><table><tbody>
<tr><th>Plan</th><td id="plan">${PLAN_NAMES[b.plan]}</td></tr>
<tr><th>Audits left this week</th><td id="allowance-left">${b.left} of ${b.allowance} <span class="muted">(resets ${when(new Date(b.resetsAt))})</span></td></tr>
<tr><th>Credits</th><td id="credits">${b.credits} <span class="muted">(each pays for one audit past the weekly allowance)</span></td></tr>
</tbody></table>${grace}${actions}</section>`
}

export function settingsPage(
  s: { keys: ApiKeyListItem[]; agents: Agent[]; billing: BillingView; mcpUrl: string; repository?: RepositoryPanel },
  csrf: string,
  user: string,
  status = 200,
): Response {
  const keys = s.keys.map(
    (k) => html`<tr data-key="${k.id}"><td><code>${k.displayPrefix}…</code></td><td>${k.label}</td>
<td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td>
<td><button class="regenerate" data-key="${k.id}">Regenerate</button> <button class="danger revoke-key" data-key="${k.id}">Revoke</button></td></tr>`,
  )
  const agents = s.agents.map(
    (a) => html`<tr data-agent="${a.clientId}"><td class="agent-name">${a.clientName}</td><td>${when(a.createdAt)}</td>
<td>${when(a.lastUsedAt)}</td><td><button class="danger revoke-agent" data-agent="${a.clientId}">Revoke</button></td></tr>`,
  )
  const body = html`<h1>Settings</h1>${billingSection(s.billing)}<section class="card" id="agents-and-mcp"><h2>Agents and MCP</h2>
<p>MCP endpoint: <code>${s.mcpUrl}</code>. Clients that support OAuth connect with the URL alone and ask you to approve them;
scripts and CI use an API key as <code>Authorization: Bearer act_…</code>.</p>
<h3>API keys</h3>
<div id="new-key" hidden><p><strong>Your new API key. Copy it now: it is shown only once.</strong></p>
<p><span class="secret" id="new-key-value"></span> <button id="copy-key">Copy</button> <span id="copied" class="muted"></span></p></div>
<table id="keys"><thead><tr><th>Key</th><th>Label</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${
    keys.length ? keys : html`<tr><td colspan="5" class="muted">No API keys.</td></tr>`
  }</tbody></table>
<p><button class="primary" id="create-key">Create API key</button></p>
<h3>OAuth agents</h3>
<table id="agents"><thead><tr><th>Agent</th><th>Connected</th><th>Last used</th><th></th></tr></thead><tbody>${
    agents.length ? agents : html`<tr><td colspan="4" class="muted">No agents connected through OAuth.</td></tr>`
  }</tbody></table>
<p class="muted">Revoking an agent stops its token at once; it has to ask for your approval again.</p></section>`
  const repository = s.repository && repositorySection(s.repository, csrf)
  return dashboardPage('Settings', html`${body}${repository}`, csrf, user, { status, style: DASHBOARD_STYLE })
}
