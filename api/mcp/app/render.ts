// Draws the report view. Everything a report carries (titles, URLs, evidence) comes from the scanned site
// and is attacker-controlled, so it only ever reaches the page through textContent: no innerHTML, no
// attribute built from report data, no links (a URL is shown as text, never navigated to).
import { SEVERITIES } from '../../../shared/report/ranking.ts'
import { evidenceText, type ViewFinding, type ViewModel, type ViewPage } from './model.ts'

/** At most this many findings and pages are drawn; the rest are counted. */
const MAX_FINDINGS = 100
const MAX_PAGES = 200
const MAX_FINDING_PAGES = 20

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

/** Class names come from a fixed list, never from the report. */
const SEVERITY_NAMES: ReadonlySet<string> = new Set(SEVERITIES)
const STATUSES = new Set(['pass', 'fail', 'warn', 'info', 'skipped', 'error'])
const severityClass = (s: string) => (SEVERITY_NAMES.has(s) ? `sev sev-${s}` : 'sev')
const statusClass = (s: string) => (STATUSES.has(s) ? `status status-${s}` : 'status')
const gradeClass = (g: string) => {
  const letter = g.charAt(0)
  return 'ABCDF'.includes(letter) && letter ? `grade grade-${letter}` : 'grade'
}

function header(m: ViewModel): HTMLElement {
  const head = el('header', 'head')
  const score = el('div', m.grade ? gradeClass(m.grade) : 'grade')
  score.dataset.testid = 'grade'
  score.append(el('span', 'grade-letter', m.grade || '–'), el('span', 'score', m.score === null ? '' : `${m.score}/100`))
  const titles = el('div', 'titles')
  titles.append(el('h1', 'kind', m.kind === 'audit' ? 'Site audit' : 'Page scan'))
  const url = el('p', 'url', m.finalUrl || m.url)
  url.dataset.testid = 'url'
  titles.append(url)
  const meta: string[] = []
  if (m.id) meta.push(m.id)
  if (m.state && m.state !== 'completed') meta.push(m.state)
  if (m.checksVersion) meta.push(`checks ${m.checksVersion}`)
  if (m.createdAt) meta.push(m.createdAt)
  if (meta.length) titles.append(el('p', 'meta', meta.join(' · ')))
  head.append(score, titles)
  return head
}

function counts(m: ViewModel): HTMLElement | null {
  const order = ['fail', 'warn', 'pass', 'info', 'skipped', 'error']
  const present = order.filter((k) => (m.summary[k] ?? 0) > 0)
  if (!present.length) return null
  const ul = el('ul', 'counts')
  ul.dataset.testid = 'counts'
  for (const k of present) {
    const li = el('li', statusClass(k))
    li.append(el('strong', undefined, String(m.summary[k])), document.createTextNode(` ${k}`))
    ul.append(li)
  }
  return ul
}

function evidenceList(evidence: Record<string, unknown>): HTMLElement | null {
  const entries = Object.entries(evidence)
  if (!entries.length) return null
  const dl = el('dl', 'evidence')
  for (const [k, v] of entries.slice(0, 30)) dl.append(el('dt', undefined, k), el('dd', undefined, evidenceText(v)))
  if (entries.length > 30) dl.append(el('dt', undefined, '…'), el('dd', undefined, `${entries.length - 30} more fields`))
  return dl
}

function finding(f: ViewFinding): HTMLElement {
  const li = el('li', 'finding')
  li.dataset.testid = 'finding'
  li.dataset.check = f.checkId
  const details = el('details')
  const summary = el('summary')
  summary.append(el('span', severityClass(f.severity), f.severity || '?'), el('span', 'finding-title', f.title))
  if (f.impact !== null && f.impact > 0) summary.append(el('span', 'impact', `−${f.impact}`))
  if (f.pageCount !== null && f.pageCount > 0)
    summary.append(el('span', 'pages-count', `${f.pageCount} page${f.pageCount === 1 ? '' : 's'}`))
  details.append(summary)
  const body = el('div', 'finding-body')
  body.append(el('p', 'check-id', `${f.checkId} · ${f.status}`))
  if (f.summary) body.append(el('p', 'finding-summary', f.summary))
  const ev = evidenceList(f.evidence)
  if (ev) {
    const box = el('section', 'evidence-box')
    box.dataset.testid = 'evidence'
    box.append(el('h3', undefined, 'Evidence'), ev)
    body.append(box)
  }
  if (f.fix) {
    const fix = el('section', 'fix')
    fix.dataset.testid = 'fix'
    fix.append(el('h3', undefined, 'Fix'), el('p', undefined, f.fix))
    body.append(fix)
  }
  if (f.pages.length) {
    const box = el('section', 'finding-pages')
    box.append(el('h3', undefined, 'Found on'))
    const ul = el('ul')
    for (const p of f.pages.slice(0, MAX_FINDING_PAGES)) ul.append(el('li', 'url', p))
    const more = (f.pageCount ?? f.pages.length) - Math.min(f.pages.length, MAX_FINDING_PAGES)
    if (more > 0) ul.append(el('li', 'more', `and ${more} more`))
    box.append(ul)
    body.append(box)
  }
  details.append(body)
  li.append(details)
  return li
}

function findings(m: ViewModel): HTMLElement {
  const section = el('section', 'findings')
  section.dataset.testid = 'findings'
  const total = m.findingsTotal !== null && m.findingsTotal > m.findings.length ? m.findingsTotal : null
  const count = total === null ? `${m.findings.length}` : `${m.findings.length} of ${total}`
  section.append(el('h2', undefined, m.findings.length ? `Findings (${count}), highest impact first` : 'Findings'))
  if (!m.findingsComplete) {
    const note = el(
      'p',
      'more',
      'A summary: the top findings without their evidence and fix. Ask for get_audit with section findings for the rest.',
    )
    note.dataset.testid = 'summary-note'
    section.append(note)
  }
  if (!m.findings.length) {
    section.append(
      el('p', 'none', m.findingsTotal ? `${m.findingsTotal} findings, not listed in this answer.` : 'Nothing failed or warned.'),
    )
    return section
  }
  const ol = el('ol')
  for (const f of m.findings.slice(0, MAX_FINDINGS)) ol.append(finding(f))
  section.append(ol)
  if (m.findings.length > MAX_FINDINGS) section.append(el('p', 'more', `${m.findings.length - MAX_FINDINGS} more not shown.`))
  return section
}

function pageRow(p: ViewPage): HTMLTableRowElement {
  const tr = el('tr')
  tr.append(
    el('td', 'url', p.url),
    el('td', p.grade ? gradeClass(p.grade) : undefined, p.grade || '–'),
    el('td', undefined, p.score === null ? '' : String(p.score)),
    el('td', undefined, p.ok ? String(p.httpStatus ?? '') : p.error || 'failed'),
  )
  return tr
}

function pages(m: ViewModel): HTMLElement | null {
  if (!m.pages.length) return null
  const section = el('section', 'pages')
  section.dataset.testid = 'pages'
  section.append(el('h2', undefined, `Pages (${m.pages.length})`))
  const table = el('table')
  const head = el('tr')
  for (const h of ['Page', 'Grade', 'Score', 'Status']) head.append(el('th', undefined, h))
  table.append(el('thead'), el('tbody'))
  table.tHead!.append(head)
  for (const p of m.pages.slice(0, MAX_PAGES)) table.tBodies[0]!.append(pageRow(p))
  section.append(table)
  if (m.pages.length > MAX_PAGES) section.append(el('p', 'more', `${m.pages.length - MAX_PAGES} more pages not shown.`))
  return section
}

function progress(m: ViewModel): HTMLElement | null {
  if (!m.progress || m.state === 'completed') return null
  const p = m.progress
  const box = el('section', 'progress')
  box.dataset.testid = 'progress'
  const parts = [`${p.pagesScanned ?? 0} of ${p.pagesDiscovered ?? '?'} pages scanned`]
  if (p.pagesFailed) parts.push(`${p.pagesFailed} failed`)
  box.append(el('p', undefined, parts.join(', ')))
  if (p.currentUrl) box.append(el('p', 'url', p.currentUrl))
  return box
}

/** Replaces root's content with the report. */
export function renderReport(root: HTMLElement, m: ViewModel): void {
  const parts: Array<HTMLElement | null> = [header(m)]
  if (m.message) {
    const msg = el('p', 'message', m.message)
    msg.dataset.testid = 'message'
    parts.push(msg)
  }
  parts.push(progress(m))
  const waiting = m.state === 'queued' || m.state === 'running'
  if (waiting && !m.findings.length)
    parts.push(el('p', 'status-line', m.kind === 'audit' ? 'The audit is still running.' : 'The scan is still running.'))
  if (m.score !== null || m.findings.length) parts.push(counts(m), findings(m), pages(m))
  root.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null))
  root.dataset.state = m.state
  root.dataset.findings = m.findingsComplete ? 'complete' : 'summary'
}

/** A one-line status (waiting for the result, cancelled, not a report). */
export function renderStatus(root: HTMLElement, text: string, state: string): void {
  const p = el('p', 'status-line', text)
  p.dataset.testid = 'status'
  root.replaceChildren(p)
  root.dataset.state = state
}
