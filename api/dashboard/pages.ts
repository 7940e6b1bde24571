// The dashboard's server-rendered pages. Dynamic bits (live scan progress, creating and revoking
// credentials, starting a checkout) are done by the small script in client.ts through the dashboard routes.
import type { Plan } from '../../shared/db/accounts.ts'
import type { ApiKeyListItem } from '../../shared/db/credentials.ts'
import type { AuditListItem } from '../../shared/db/dashboard.ts'
import type { MonitorRunItem } from '../../shared/db/monitors.ts'
import type { Agent } from '../../shared/db/oauth.ts'
import type { AppListItem, ScanListItem } from '../../shared/db/scans.ts'
import type { BillingView, CheckoutKind } from '../billing/service.ts'
import type { ChangeItem } from '../../shared/report/monitor-diff.ts'
import { esc, layout, newNonce, pageHeaders } from '../http/layout.ts'
import { DASHBOARD_SCRIPT } from './client.ts'
import { type RepositoryPanel, repositorySection } from './repository.ts'
import type { MonitorPanel } from './service.ts'

const when = (d: Date | null) => (d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'never')

function nav(csrf: string, user: string): string {
  return `<a href="/dashboard">Apps</a><a href="/dashboard/settings">Settings</a><span class="muted">${esc(user)}</span>
<form method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${esc(csrf)}"><button type="submit" id="sign-out">Sign out</button></form>`
}

/** A signed-in page: the dashboard's navigation, the session's anti-CSRF token, one inline script and style by nonce. */
export function dashboardPage(
  title: string,
  body: string,
  csrf: string,
  user: string,
  opts: { status?: number; script?: string; style?: string; nonce?: string } = {},
): Response {
  const nonce = opts.nonce ?? newNonce()
  const html = layout({
    title,
    nonce,
    body: `<meta name="csrf-token" content="${esc(csrf)}">${opts.style ? `<style nonce="${nonce}">${opts.style}</style>` : ''}${body}`,
    nav: nav(csrf, user),
    script: opts.script ?? DASHBOARD_SCRIPT,
  })
  return new Response(html, { status: opts.status ?? 200, headers: pageHeaders(nonce) })
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

function runRow(r: MonitorRunItem): string {
  const score = r.score === null ? '' : r.previousScore === null ? `${r.score}` : `${r.previousScore} → ${r.score}`
  const what = r.error ? r.error.message : [...r.regressions, ...r.improvements].map(changeText).join('; ')
  return `<tr data-run="${esc(r.id)}" data-status="${esc(r.status)}"><td>${when(r.createdAt)}</td><td>${r.scanId ? `<code>${esc(r.scanId)}</code>` : ''}</td>
<td class="status">${esc(r.status)}${r.alert ? ' (alert)' : ''}</td><td class="score">${esc(score)}</td><td>${esc(what)}</td></tr>`
}

/** An app's monitor: schedule and state, pause/resume and remove, regressions still open, and its latest runs. */
function monitorSection(m: MonitorPanel | null): string {
  if (!m) return ''
  const schedule = m.schedule === 'daily' ? `daily at ${atHour(m.hour)}` : `weekly on ${WEEKDAYS[m.weekday ?? 0]} at ${atHour(m.hour)}`
  const state = m.enabled ? `next run ${when(m.nextRunAt)}` : 'paused'
  const open = m.openRuns.flatMap((r) => r.regressions.filter((x) => x.resolvedAt === null).map((x) => ({ x, at: r.createdAt })))
  return `<div class="monitor" data-monitor="${esc(m.id)}" data-enabled="${m.enabled}"><h3>Monitor</h3>
<p><code>${esc(m.url)}</code> ${esc(schedule)}, alerts on ${m.notifyOn === 'any' ? 'any change' : 'regressions'};
<span class="monitor-state">${state}</span>. Last score ${m.lastScore === null ? 'not yet' : `${esc(m.lastScore)} (${esc(m.lastGrade)})`};
<span class="open-regressions">${esc(m.openRegressions)}</span> open regressions.</p>
<p><button class="monitor-toggle" data-monitor="${esc(m.id)}" data-verb="${m.enabled ? 'pause' : 'resume'}">${m.enabled ? 'Pause' : 'Resume'}</button>
<button class="danger monitor-remove" data-monitor="${esc(m.id)}">Remove</button></p>
${open.length ? `<h4>Open regressions</h4><ul class="regressions">${open.map(({ x, at }) => `<li>${esc(changeText(x))} <span class="muted">since ${when(at)}</span></li>`).join('')}</ul>` : ''}
${
  m.runs.length
    ? `<table class="monitor-runs"><thead><tr><th>Run</th><th>Scan</th><th>Status</th><th>Score</th><th>Changes</th></tr></thead><tbody>
${m.runs.map(runRow).join('')}</tbody></table>`
    : '<p class="muted">No runs yet.</p>'
}</div>`
}

/** The forms that start a scan or an audit (the same services scan_app and audit_app call). */
function startSection(csrf: string, form: StartForm): string {
  const v = (k: keyof StartForm['values']) => esc(form.values[k] ?? '')
  const error = form.error ? `<p class="banner bad" id="start-error" role="alert">${esc(form.error)}</p>` : ''
  const field = `<input type="hidden" name="csrf" value="${esc(csrf)}">`
  return `<section class="card" id="start"><h2>Scan or audit an app</h2>${error}
<form method="post" action="/dashboard/scans" id="start-scan">${field}
<label>Page URL <input name="url" type="url" required maxlength="2048" size="40" placeholder="https://app.example.com/" value="${form.kind === 'scan' ? v('url') : ''}"></label>
<button type="submit" class="primary">Scan this page</button> <span class="muted">A few seconds; not metered.</span></form>
<form method="post" action="/dashboard/audits" id="start-audit">${field}
<label>Site URL <input name="url" type="url" required maxlength="2048" size="40" placeholder="https://app.example.com/" value="${form.kind === 'audit' ? v('url') : ''}"></label>
<label>pages <input name="maxPages" type="number" min="1" max="500" value="${form.kind === 'audit' && form.values.maxPages ? v('maxPages') : '50'}"></label>
<label>depth <input name="maxDepth" type="number" min="0" max="10" value="${form.kind === 'audit' && form.values.maxDepth ? v('maxDepth') : '3'}"></label>
<button type="submit" class="primary">Audit the whole site</button> <span class="muted">Minutes; uses one of this week's audits, then a credit.</span></form></section>`
}

export interface StartForm {
  kind?: 'scan' | 'audit'
  error?: string
  values: { url?: string; maxPages?: string; maxDepth?: string }
}

const scoreText = (score: number | null, grade: string | null) => (score === null ? '' : `${esc(score)} ${esc(grade)}`)

export function appsPage(
  apps: Array<AppListItem & { recentScans: ScanListItem[]; recentAudits: AuditListItem[]; monitor?: MonitorPanel | null }>,
  csrf: string,
  user: string,
  start: StartForm = { values: {} },
  status = 200,
): Response {
  const cards = apps
    .map(
      (app) => `<section class="card app"><h2>${esc(app.origin)}</h2>
<p class="muted">Score ${app.latestCompletedScan ? `${esc(app.latestCompletedScan.score)} (${esc(app.latestCompletedScan.grade)})` : 'not yet'}</p>
<table><thead><tr><th>Scan</th><th>URL</th><th>Status</th><th>Score</th><th>Started</th></tr></thead><tbody>
${app.recentScans
  .map(
    (
      s,
    ) => `<tr data-scan="${esc(s.id)}" data-status="${esc(s.status)}"><td><a href="/dashboard/scans/${esc(s.id)}"><code>${esc(s.id)}</code></a></td><td>${esc(s.url)}</td>
<td class="status">${esc(s.status)}</td><td class="score">${scoreText(s.score, s.grade)}</td><td>${when(s.createdAt)}</td></tr>`,
  )
  .join('')}
</tbody></table>
${
  app.recentAudits.length
    ? `<h3>Audits</h3><table><thead><tr><th>Audit</th><th>URL</th><th>Status</th><th>Pages</th><th>Score</th><th>Started</th></tr></thead><tbody>
${app.recentAudits
  .map(
    (
      a,
    ) => `<tr data-audit="${esc(a.id)}" data-status="${esc(a.status)}"><td><a href="/dashboard/audits/${esc(a.id)}"><code>${esc(a.id)}</code></a></td><td>${esc(a.url)}</td>
<td class="status">${esc(a.status)}</td><td class="pages">${esc(a.pagesScanned)} of ${esc(a.pagesDiscovered)}</td><td class="score">${scoreText(a.score, a.grade)}</td><td>${when(a.createdAt)}</td></tr>`,
  )
  .join('')}
</tbody></table>`
    : ''
}${monitorSection(app.monitor ?? null)}</section>`,
    )
    .join('')
  const empty = `<div class="card"><h2>No apps yet</h2><p>Start a scan above, or connect an MCP client (Settings, Agents and MCP) and ask it to run
<code>scan_app</code> on your app; its scans and audits appear here, with live progress.</p></div>`
  return dashboardPage('Apps', `<h1>Apps</h1>${startSection(csrf, start)}${apps.length ? cards : empty}`, csrf, user, {
    status,
    style: DASHBOARD_STYLE,
  })
}

const DASHBOARD_STYLE = `.banner{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.6rem 1rem}
.banner.bad{background:#ffebe9;border-color:#cf222e}#start form{margin:.6rem 0}#start input{font:inherit;padding:.3rem}`

const PLAN_NAMES: Record<Plan, string> = { free: 'Free', launch: 'Launch', scale: 'Scale' }

/** Plan, this week's allowance and credits; the checkout buttons only for what this deployment sells. */
function billingSection(b: BillingView): string {
  const grace = b.graceUntil
    ? `<p id="grace"><strong>A payment failed.</strong> The ${PLAN_NAMES[b.plan]} plan stays until ${when(new Date(b.graceUntil))};
after that the account is on Free unless the payment goes through.</p>`
    : ''
  const button = (k: CheckoutKind) =>
    k === 'credits'
      ? `<button class="checkout" data-kind="credits">Buy ${esc(b.creditsPerPack)} credits</button>`
      : `<button class="primary checkout" data-kind="${esc(k)}">Upgrade to ${PLAN_NAMES[k]}</button>`
  const actions = b.offers.length
    ? `<p id="checkout">${b.offers.map(button).join(' ')}</p><p class="muted">Stripe takes the payment and sends you back here.</p>`
    : ''
  return `<section class="card" id="billing"><h2>Plan and credits</h2><table><tbody>
<tr><th>Plan</th><td id="plan">${PLAN_NAMES[b.plan]}</td></tr>
<tr><th>Audits left this week</th><td id="allowance-left">${esc(b.left)} of ${esc(b.allowance)} <span class="muted">(resets ${when(new Date(b.resetsAt))})</span></td></tr>
<tr><th>Credits</th><td id="credits">${esc(b.credits)} <span class="muted">(each pays for one audit past the weekly allowance)</span></td></tr>
</tbody></table>${grace}${actions}</section>`
}

export function settingsPage(
  s: { keys: ApiKeyListItem[]; agents: Agent[]; billing: BillingView; mcpUrl: string; repository?: RepositoryPanel },
  csrf: string,
  user: string,
  status = 200,
): Response {
  const keys = s.keys
    .map(
      (k) => `<tr data-key="${esc(k.id)}"><td><code>${esc(k.displayPrefix)}…</code></td><td>${esc(k.label)}</td>
<td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td>
<td><button class="regenerate" data-key="${esc(k.id)}">Regenerate</button> <button class="danger revoke-key" data-key="${esc(k.id)}">Revoke</button></td></tr>`,
    )
    .join('')
  const agents = s.agents
    .map(
      (a) => `<tr data-agent="${esc(a.clientId)}"><td class="agent-name">${esc(a.clientName)}</td><td>${when(a.createdAt)}</td>
<td>${when(a.lastUsedAt)}</td><td><button class="danger revoke-agent" data-agent="${esc(a.clientId)}">Revoke</button></td></tr>`,
    )
    .join('')
  const body = `<h1>Settings</h1>${billingSection(s.billing)}<section class="card" id="agents-and-mcp"><h2>Agents and MCP</h2>
<p>MCP endpoint: <code>${esc(s.mcpUrl)}</code>. Clients that support OAuth connect with the URL alone and ask you to approve them;
scripts and CI use an API key as <code>Authorization: Bearer act_…</code>.</p>
<h3>API keys</h3>
<div id="new-key" hidden><p><strong>Your new API key. Copy it now: it is shown only once.</strong></p>
<p><span class="secret" id="new-key-value"></span> <button id="copy-key">Copy</button> <span id="copied" class="muted"></span></p></div>
<table id="keys"><thead><tr><th>Key</th><th>Label</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${
    keys || '<tr><td colspan="5" class="muted">No API keys.</td></tr>'
  }</tbody></table>
<p><button class="primary" id="create-key">Create API key</button></p>
<h3>OAuth agents</h3>
<table id="agents"><thead><tr><th>Agent</th><th>Connected</th><th>Last used</th><th></th></tr></thead><tbody>${
    agents || '<tr><td colspan="4" class="muted">No agents connected through OAuth.</td></tr>'
  }</tbody></table>
<p class="muted">Revoking an agent stops its token at once; it has to ask for your approval again.</p></section>`
  const repository = s.repository ? repositorySection(s.repository, csrf) : ''
  return dashboardPage('Settings', body + repository, csrf, user, { status })
}
