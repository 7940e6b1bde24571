// The report page of a scan or an audit, server-rendered: score and grade, findings by impact with their
// evidence, the fix for the detected platform and how to verify it, every check, and for audits the pages
// (paginated). The owner's page adds live progress while it runs, the live viewer, and sharing; the public
// page (/r/{slug}) is the same report without any of those and asks not to be indexed. Built with html`...`,
// so everything that came from the scanned site is escaped; long text is bounded (clip).
import type { AuditPageSummary } from '../../shared/report/audit-report.ts'
import { type Html, html, joinHtml, raw } from '../../shared/lib/html.ts'
import { bundleClientScript } from '../http/client-script.ts'
import { clip, evidenceText } from '../../shared/report/export/escape.ts'
import type { ModelFinding, ReportModel } from '../../shared/report/export/model.ts'
import type { FixView, ReportPageData } from './service.ts'

/** Pages of an audit shown per page of the table. */
export const PAGES_PER_PAGE = 50
/**
 * Findings shown per page of the list. An audit of hundreds of pages can have hundreds of findings (one per
 * page for page-specific evidence): each with its evidence and fix, all at once would be megabytes.
 */
export const FINDINGS_PER_PAGE = 25

/** Where each list of a report page is: its page numbers, both kept in every link. */
export interface ListPages {
  pages: number
  findings: number
}

/** A link to the report with these list pages, to the list's section. */
const listHref = (linkBase: string, at: ListPages, anchor: string) =>
  `${linkBase}?${new URLSearchParams({ ...(at.findings > 1 ? { findings: String(at.findings) } : {}), ...(at.pages > 1 ? { page: String(at.pages) } : {}) })}#${anchor}`

/** The page of a list shown (1-based, clamped to what exists) and its number of pages. */
function pageOf(total: number, perPage: number, asked: number): { current: number; count: number } {
  const count = Math.max(1, Math.ceil(total / perPage))
  return { current: Math.min(Math.max(1, asked), count), count }
}

function pager(count: number, current: number, href: (n: number) => string): Html | null {
  if (count <= 1) return null
  return html`<p class="pager">Page ${current} of ${count}: ${Array.from({ length: count }, (_, i) => i + 1).map((n) =>
    n === current ? html`<span>${n}</span>` : html`<a href="${href(n)}">${n}</a>`,
  )}</p>`
}
/** Pages listed under one finding (the rest are counted). */
const FINDING_PAGES_SHOWN = 10

const when = (d: Date | string | null) => (d ? `${new Date(d).toISOString().slice(0, 16).replace('T', ' ')} UTC` : '')

/**
 * A grade's colour, for the badge and the page alike: green for A, through olive, amber and orange, to red
 * for F. Each is dark enough for white text at the badge's 11 px (contrast at least 4.5:1, WCAG AA).
 */
export const GRADE_COLOURS = { a: '#1a7f37', b: '#4d7c0f', c: '#9a6700', d: '#bc4c00', f: '#cf222e', x: '#57606a' } as const

export function gradeColour(grade: string | null | undefined): string {
  const g = (grade?.[0] ?? 'x').toLowerCase()
  return g in GRADE_COLOURS ? GRADE_COLOURS[g as keyof typeof GRADE_COLOURS] : GRADE_COLOURS.x
}

/** A class for a grade's text colour (inline style attributes are refused by the pages' CSP). */
export const gradeClass = (grade: string | null | undefined) => `g-${(grade?.[0] ?? 'x').toLowerCase()}`

export const REPORT_STYLE = raw(`
${Object.entries(GRADE_COLOURS)
  .map(([g, c]) => `.g-${g}{color:${c}}`)
  .join('')}
.score-card{display:flex;gap:1.5rem;align-items:center;flex-wrap:wrap}
.score{font-size:3rem;font-weight:700;line-height:1}.grade{font-size:2rem;font-weight:700}
.meta{color:#5b6673;overflow-wrap:anywhere}
.fail{color:#b42318;font-weight:600}.warn{color:#9a6700;font-weight:600}.pass{color:#1a7f37}.info,.skipped{color:#5b6673}.error{color:#8250df}
details.finding{border:1px solid #dde1e6;border-radius:6px;margin:.5rem 0;padding:.5rem .8rem;background:#fff}
details.finding summary{cursor:pointer;font-weight:600}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px;border-radius:4px}
td{vertical-align:top;overflow-wrap:anywhere}.num{text-align:right;white-space:nowrap}
.pager a,.pager span{margin-right:.6rem}.inline{display:inline}
.banner{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.6rem 1rem;margin-bottom:1rem}
.banner.bad{background:#ffebe9;border-color:#cf222e}
.replay-slot{border:1px dashed #8a94a0;border-radius:6px;padding:.8rem}
#checks summary{cursor:pointer}#checks summary h2{display:inline;margin:0}
@media (max-width:40rem){.score{font-size:2.4rem}
#checks thead{display:none}#checks tr{display:block;padding:.4rem 0;border-bottom:1px solid #eceff2}
#checks td{display:inline;border:0;padding:0 .4rem 0 0}#checks td:first-child,#checks td:last-child{display:block}}
`)

/** One finding, collapsed to its summary line: its evidence and fix open on a click. */
function findingHtml(f: ModelFinding, fix: FixView | undefined, audit: boolean, platform: string): Html {
  const pages =
    audit &&
    html`<p>Found on ${f.pageCount} page${f.pageCount === 1 ? '' : 's'}:</p><ul>${f.pages
      .slice(0, FINDING_PAGES_SHOWN)
      .map((p) => html`<li><code>${clip(p, 300)}</code></li>`)}${
      f.pageCount > FINDING_PAGES_SHOWN && html`<li class="muted">and ${f.pageCount - FINDING_PAGES_SHOWN} more</li>`
    }</ul>`
  const fixHtml =
    fix &&
    html`<h4>How to fix${platform === 'generic' ? '' : ` on ${platform}`}${fix.platformSpecific ? '' : ' (general advice)'}</h4>
<pre class="fix-change">${clip(fix.change, 4_000)}</pre>${fix.where && html`<p><strong>Where:</strong> ${clip(fix.where, 600)}</p>`}
<h4>How to verify</h4><pre class="fix-verify">${clip(fix.verify, 2_000)}</pre>`
  return html`<details class="finding" data-check="${f.checkId}" data-status="${f.status}" data-impact="${f.impact}"><summary><span class="${f.status}">${f.status}</span>
${f.severity} · <code>${f.checkId}</code> ${f.title} <span class="muted">(−${f.impact} points${audit ? `, ${f.pageCount} page${f.pageCount === 1 ? '' : 's'}` : ''})</span></summary>
<p>${clip(f.summary, 1_000)}</p>${pages}<h4>Evidence</h4><pre class="evidence">${evidenceText(f.evidence)}</pre>${fixHtml}</details>`
}

function pagesTable(pages: AuditPageSummary[], at: ListPages, linkBase: string): Html | null {
  if (pages.length === 0) return null
  const { current, count } = pageOf(pages.length, PAGES_PER_PAGE, at.pages)
  const rows = pages.slice((current - 1) * PAGES_PER_PAGE, current * PAGES_PER_PAGE).map((p) => {
    const failing = p.checks.filter((c) => c.status === 'fail').length
    const warning = p.checks.filter((c) => c.status === 'warn').length
    return html`<tr><td><code>${clip(p.url, 300)}</code>${p.error && html`<br><span class="fail">${clip(p.error, 300)}</span>`}</td>
<td class="num">${p.httpStatus ?? ''}</td><td class="num">${p.depth}</td><td class="num">${p.score !== null && html`${p.score} <span class="${gradeClass(p.grade)}">${p.grade}</span>`}</td>
<td class="num">${failing} / ${warning}</td><td class="num">${p.loadMs} ms</td></tr>`
  })
  const nav = pager(count, current, (n) => listHref(linkBase, { ...at, pages: n }, 'pages'))
  return html`<section class="card" id="pages"><h2>Pages (${pages.length})</h2>${nav}<table><thead><tr><th>Page</th><th>HTTP</th><th>Depth</th>
<th>Score</th><th>Fail / warn</th><th>Load</th></tr></thead><tbody>${rows}</tbody></table>${nav}</section>`
}

export interface OwnerExtras {
  csrf: string
  /** Where the share, withdraw and viewer forms post. */
  actionBase: string
  publicUrl: string | null
  /** A note from the last action (shared, withdrawn, an error). */
  notice?: { text: string; bad?: boolean }
}

/** The body of a report page: the owner's when `owner` is given, else the public one. */
export function reportBody(
  d: ReportPageData,
  opts: { at: ListPages; linkBase: string; owner?: OwnerExtras; replay?: Html | null; afterScore?: Html },
): Html {
  const audit = d.kind === 'audit'
  const m = d.model
  const owner = opts.owner
  const notice = owner?.notice && html`<p class="banner${owner.notice.bad ? ' bad' : ''}" id="notice">${owner.notice.text}</p>`
  return html`${notice}<h1>${audit ? 'Audit' : 'Scan'} of ${d.url}</h1>
<p class="meta">${audit ? 'Audit' : 'Scan'} <code>${d.id}</code> · started ${when(d.createdAt)}${d.finishedAt && ` · finished ${when(d.finishedAt)}`} · <span id="state">${d.status}</span></p>
${liveSection(d, owner)}${failedSection(d)}${m && scoreCard(d, m)}${opts.afterScore}${owner && shareSection(d, owner)}${
  m && findingsSection(d, m, opts.at, opts.linkBase)
}${audit && m && pagesTable(d.pages, opts.at, opts.linkBase)}${replaySection(d, opts.replay ?? null, Boolean(owner))}${m && checksTable(m)}`
}

/** Pages scanned, discovered and failed, and the page being scanned (the poller updates the first two). */
function progressText(d: ReportPageData): Html | null {
  const p = d.progress
  return (
    p &&
    html`<span class="pages-scanned">${p.pagesScanned}</span> of <span class="pages-discovered">${p.pagesDiscovered}</span> pages scanned${
      p.pagesFailed > 0 && `, ${p.pagesFailed} failed`
    }<br><span class="current-url muted">${clip(p.currentUrl ?? '', 300)}</span>`
  )
}

/** While the run is queued or running: its progress, and for the owner of an audit the live viewer's button. */
function liveSection(d: ReportPageData, owner: OwnerExtras | undefined): Html | null {
  if (d.status !== 'queued' && d.status !== 'running') return null
  const audit = d.kind === 'audit'
  return html`<section class="card" id="live" data-poll="/api/${audit ? 'audits' : 'scans'}/${d.id}"><h2>In progress</h2>
<p>Status: <span class="status">${d.status}</span>. ${progressText(d)}</p>
${
  audit &&
  owner &&
  html`<form method="post" action="${owner.actionBase}/viewer" target="_blank" class="inline"><input type="hidden" name="csrf" value="${owner.csrf}">
<button type="submit" class="primary" id="watch-live">Watch the crawl live</button></form> <span class="muted">The live viewer works while the crawl runs.</span>`
}
<p class="muted">This page updates itself and shows the report when it is done.</p></section>`
}

function failedSection(d: ReportPageData): Html | null {
  if (d.status !== 'failed' && d.status !== 'cancelled') return null
  return html`<section class="card"><h2 class="fail">${d.status === 'failed' ? 'Failed' : 'Cancelled'}</h2>${
    d.error && html`<p><code>${d.error.code}</code> ${clip(d.error.message, 1_000)}</p>`
  }${d.kind === 'audit' && d.progress && html`<p>${progressText(d)}</p>`}</section>`
}

function scoreCard(d: ReportPageData, m: ReportModel): Html {
  return html`<section class="card score-card" id="score"><div><span class="score">${m.score}</span><span class="muted">/100</span></div>
<div class="grade ${gradeClass(m.grade)}">${m.grade}</div>
<div class="meta"><div><strong>${m.url}</strong></div>
<div>${m.summary.fail} failing · ${m.summary.warn} warning · ${m.summary.pass} passing · ${m.summary.skipped} skipped</div>
<div>Fixes written for: <strong id="platform">${m.platform}</strong>${d.kind === 'audit' && d.stoppedBy && ` · crawl stopped by ${d.stoppedBy}`} · checks ${m.checksVersion}</div></div></section>`
}

/** Every check with its outcome, collapsed under its heading (the findings above are what needs doing). */
function checksTable(m: ReportModel): Html {
  return html`<section class="card" id="checks"><details><summary><h2>Every check (${m.checks.length})</h2></summary>
<table><thead><tr><th>Check</th><th>Category</th><th>Severity</th><th>Status</th><th>Summary</th></tr></thead><tbody>
${m.checks.map(
  (c) =>
    html`<tr><td><code>${c.id}</code> ${c.title}</td><td>${c.category}</td><td>${c.severity}</td><td class="${c.status}">${c.status}</td><td>${clip(c.summary, 400)}</td></tr>`,
)}</tbody></table></details></section>`
}

/** An ended audit's replay; for the owner, a note when none was recorded. */
function replaySection(d: ReportPageData, replay: Html | null, owner: boolean): Html | null {
  if (d.kind !== 'audit' || d.status === 'queued' || d.status === 'running') return null
  if (replay) return html`<section class="card" id="replay"><h2>Replay of the crawl</h2>${replay}</section>`
  // Audits recorded before replays were kept, or whose crawl reached no page.
  if (owner)
    return html`<section class="card" id="replay"><h2>Replay of the crawl</h2><p class="replay-slot muted">No replay is recorded for this audit.</p></section>`
  return null
}

/**
 * The findings, worst first (highest impact, then failures before warnings), a page of them at a time, each
 * collapsed to one line: opened all at once, an audit's page ran to thousands of pixels.
 */
function findingsSection(d: ReportPageData, m: ReportModel, at: ListPages, linkBase: string): Html {
  const head = html`<section class="card" id="findings"><h2>Findings by impact (${m.findings.length})</h2>`
  if (m.findings.length === 0) return html`${head}<p>No failing or warning checks.</p></section>`
  const { current, count } = pageOf(m.findings.length, FINDINGS_PER_PAGE, at.findings)
  const from = (current - 1) * FINDINGS_PER_PAGE
  const shown = m.findings
    .slice(from, from + FINDINGS_PER_PAGE)
    .map((f, i) => findingHtml(f, d.fixOf(from + i), d.kind === 'audit', m.platform))
  const nav = pager(count, current, (n) => listHref(linkBase, { ...at, findings: n }, 'findings'))
  return html`${head}${nav}${joinHtml(shown, '\n')}${nav}</section>`
}

function shareSection(d: ReportPageData, o: OwnerExtras): Html | null {
  if (d.status !== 'completed') return null
  const csrf = html`<input type="hidden" name="csrf" value="${o.csrf}">`
  if (!o.publicUrl) {
    return html`<section class="card" id="share"><h2>Share</h2><p>This report is private. Making it public gives it a link anyone who has it can open
(secrets stay redacted), and a score badge for a README.</p>
<form method="post" action="${o.actionBase}/share">${csrf}<button type="submit" class="primary" id="make-public">Make public</button></form></section>`
  }
  return html`<section class="card" id="share"><h2>Share</h2><p>Public at <a id="public-url" href="${o.publicUrl}">${o.publicUrl}</a></p>
${badgeHtml(o.publicUrl, d.model)}
<form method="post" action="${o.actionBase}/unshare">${csrf}<button type="submit" class="danger" id="withdraw">Withdraw the public link</button></form>
<p class="muted">Withdrawn, the link and its badge answer 404; sharing again makes a new link.</p></section>`
}

/** The badge of a shared report and the Markdown that embeds it in a README (linking to the report). */
function badgeHtml(publicUrl: string, m: ReportModel | null): Html {
  const badge = `${publicUrl}/badge`
  const alt = m ? `App Audit score: ${m.score} ${m.grade}` : 'App Audit score'
  // The image by its path: the pages' CSP allows images from their own origin only, whatever host served them.
  return html`<p><img id="badge" src="${new URL(badge).pathname}" alt="${alt}" height="20"> Badge for a README:</p>
<pre id="badge-markdown">${`[![App Audit score](${badge})](${publicUrl})`}</pre>`
}

/** The public page's badge section: the same badge and snippet the owner sees. */
export const badgeSection = (publicUrl: string, m: ReportModel | null) =>
  html`<section class="card" id="badge-section"><h2>Badge</h2>${badgeHtml(publicUrl, m)}</section>`

/** The owner's page script (live-client.ts): polls the dashboard route while the report runs and reloads when it ends. */
export const REPORT_SCRIPT = await bundleClientScript(new URL('./live-client.ts', import.meta.url))
