// What the report view shows, read from a tool result of scan_app, get_scan or get_audit. Pure and
// defensive: the payload comes from the host over postMessage, so every field is checked for its type
// and anything unexpected is dropped rather than trusted. Runs in the browser (bundled into the view)
// and in tests.

export type Kind = 'scan' | 'audit'

export interface ViewFinding {
  checkId: string
  title: string
  severity: string
  status: string
  /** Score points it costs, when known. */
  impact: number | null
  summary: string
  evidence: Record<string, unknown>
  fix: string
  /** Audits: how many pages it was found on, and (some of) those pages. */
  pageCount: number | null
  pages: string[]
}

export interface ViewPage {
  url: string
  score: number | null
  grade: string
  ok: boolean
  httpStatus: number | null
  error: string
}

export interface ViewModel {
  kind: Kind
  /** completed, queued, running, failed, cancelled; or 'error' for a tool error. */
  state: string
  id: string
  url: string
  finalUrl: string
  score: number | null
  grade: string
  checksVersion: string
  /** Count of check outcomes by status (pass, fail, warn, ...). */
  summary: Record<string, number>
  findings: ViewFinding[]
  /** How many findings the whole result has, when the answer lists only some (a summary, one page). */
  findingsTotal: number | null
  /** False while the findings are a summary without evidence and fix (get_audit's default answer). */
  findingsComplete: boolean
  pages: ViewPage[]
  progress: { pagesDiscovered: number | null; pagesScanned: number | null; pagesFailed: number | null; currentUrl: string } | null
  /** A tool error's or a failed run's message. */
  message: string
  createdAt: string
}

type Obj = Record<string, unknown>

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback)
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const objOr = (v: unknown): Obj => (isObj(v) ? v : {})

/** The JSON payload of a CallToolResult: structuredContent when present, else the JSON text of content[0]. */
export function payloadOf(result: unknown): { payload: Obj | null; isError: boolean } {
  const r = objOr(result)
  const isError = r.isError === true
  if (isObj(r.structuredContent)) return { payload: r.structuredContent, isError }
  for (const block of arr(r.content)) {
    if (!isObj(block) || block.type !== 'text' || typeof block.text !== 'string') continue
    try {
      const parsed: unknown = JSON.parse(block.text)
      if (isObj(parsed)) return { payload: parsed, isError }
    } catch {
      // Not JSON: try the next block.
    }
  }
  return { payload: null, isError }
}

function summaryOf(v: unknown): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [k, n] of Object.entries(objOr(v))) if (num(n) !== null) out[k] = n as number
  return out
}

function empty(kind: Kind, state: string): ViewModel {
  return {
    kind,
    state,
    id: '',
    url: '',
    finalUrl: '',
    score: null,
    grade: '',
    checksVersion: '',
    summary: {},
    findings: [],
    findingsTotal: null,
    findingsComplete: true,
    pages: [],
    progress: null,
    message: '',
    createdAt: '',
  }
}

/** A scan report: advice is the ordered list of findings; each check carries the evidence. */
function fromScanReport(report: Obj, model: ViewModel): ViewModel {
  const checks = new Map<string, Obj>()
  for (const c of arr(report.checks)) if (isObj(c) && typeof c.id === 'string') checks.set(c.id, c)
  const findings: ViewFinding[] = []
  const seen = new Set<string>()
  for (const a of arr(report.advice)) {
    if (!isObj(a)) continue
    const id = str(a.checkId)
    const check = checks.get(id) ?? {}
    seen.add(id)
    findings.push({
      checkId: id,
      title: str(a.title, str(check.title, id)),
      severity: str(a.severity, str(check.severity)),
      status: str(a.status, str(check.status)),
      impact: num(a.impact),
      summary: str(check.summary),
      evidence: objOr(check.evidence),
      fix: str(a.advice, str(check.advice)),
      pageCount: null,
      pages: [],
    })
  }
  // A report without advice (or a shortened one) still shows its failing checks.
  for (const [id, c] of checks) {
    if (seen.has(id) || (c.status !== 'fail' && c.status !== 'warn')) continue
    findings.push({
      checkId: id,
      title: str(c.title, id),
      severity: str(c.severity),
      status: str(c.status),
      impact: null,
      summary: str(c.summary),
      evidence: objOr(c.evidence),
      fix: str(c.advice),
      pageCount: null,
      pages: [],
    })
  }
  return {
    ...model,
    state: model.state || 'completed',
    id: model.id || str(report.id),
    url: str(report.url, model.url),
    finalUrl: str(report.finalUrl, str(report.url, model.url)),
    score: num(report.score),
    grade: str(report.grade),
    checksVersion: str(report.checksVersion),
    summary: summaryOf(report.summary),
    findings,
    createdAt: str(report.createdAt, model.createdAt),
  }
}

/** Findings of an audit: the whole ones of a findings section, or the summary's top findings (no evidence, no fix). */
export function auditFindingsOf(items: unknown): ViewFinding[] {
  return arr(items)
    .filter(isObj)
    .map((f) => ({
      checkId: str(f.checkId),
      title: str(f.title, str(f.checkId)),
      severity: str(f.severity),
      status: str(f.status),
      impact: num(f.impact),
      summary: str(f.summary),
      evidence: objOr(f.evidence),
      fix: str(f.advice),
      pageCount: num(f.pageCount),
      pages: arr(Array.isArray(f.pages) ? f.pages : f.examplePages).filter((p): p is string => typeof p === 'string'),
    }))
}

/** Pages of an audit, from a pages section (or an older whole result). */
export function auditPagesOf(items: unknown): ViewPage[] {
  return arr(items)
    .filter(isObj)
    .map((p) => ({
      url: str(p.url),
      score: num(p.score),
      grade: str(p.grade),
      ok: p.ok !== false,
      httpStatus: num(p.httpStatus),
      error: str(p.error),
    }))
}

/** get_audit's result: the summary (topFindings, findingCounts) or, from older servers, the whole result. */
function fromAuditResult(result: Obj, model: ViewModel): ViewModel {
  const whole = Array.isArray(result.findings)
  const counts = objOr(result.findingCounts)
  return {
    ...model,
    url: str(result.url, model.url),
    finalUrl: str(result.url, model.url),
    score: num(result.score),
    grade: str(result.grade),
    checksVersion: str(result.checksVersion),
    summary: summaryOf(result.summary),
    findings: auditFindingsOf(whole ? result.findings : result.topFindings),
    findingsTotal: num(counts.total),
    findingsComplete: whole,
    pages: auditPagesOf(result.pages),
  }
}

/** One page of a section of get_audit (section, total, items, nextCursor). */
function fromAuditSection(p: Obj, model: ViewModel): ViewModel {
  const m = { ...model, score: num(p.score), grade: str(p.grade) }
  if (p.section === 'findings') return { ...m, findings: auditFindingsOf(p.items), findingsTotal: num(p.total) }
  if (p.section === 'pages') return { ...m, pages: auditPagesOf(p.items) }
  // The checks section: the checks that did not pass are what a reader looks for.
  const failing = arr(p.items).filter((c) => isObj(c) && (c.status === 'fail' || c.status === 'warn'))
  return {
    ...m,
    findings: auditFindingsOf(failing.map((c) => ({ ...(c as Obj), checkId: (c as Obj).id }))),
    findingsComplete: false,
  }
}

/** The view model of one tool result; null when it is not something this view shows. */
export function modelOf(result: unknown): ViewModel | null {
  const { payload, isError } = payloadOf(result)
  if (!payload) return null
  if (isError || isObj(payload.error)) {
    const e = objOr(payload.error)
    const kind: Kind = typeof payload.auditId === 'string' ? 'audit' : 'scan'
    const failed = { ...empty(kind, isError ? 'error' : str(payload.status, 'failed')), message: str(e.message, 'The tool failed.') }
    failed.id = str(payload.auditId, str(payload.scanId, str(e.scanId)))
    failed.url = str(payload.url)
    if (!isError && isObj(payload.progress)) failed.progress = progressOf(payload.progress)
    return failed
  }
  // get_audit: { auditId, status, progress, result? }
  if (typeof payload.auditId === 'string') {
    const m = { ...empty('audit', str(payload.status)), id: payload.auditId, url: str(payload.url), createdAt: str(payload.createdAt) }
    m.finalUrl = m.url
    if (isObj(payload.progress)) m.progress = progressOf(payload.progress)
    if (typeof payload.section === 'string') return fromAuditSection(payload, m)
    return isObj(payload.result) ? fromAuditResult(payload.result, m) : m
  }
  // get_scan: { scanId, status, report? }
  if (typeof payload.scanId === 'string') {
    const m = { ...empty('scan', str(payload.status)), id: payload.scanId, url: str(payload.url), createdAt: str(payload.createdAt) }
    m.finalUrl = m.url
    return isObj(payload.report) ? fromScanReport(payload.report, m) : m
  }
  // scan_app: the report itself.
  if (num(payload.score) !== null || Array.isArray(payload.checks)) return fromScanReport(payload, empty('scan', 'completed'))
  return null
}

function progressOf(p: Obj): ViewModel['progress'] {
  return {
    pagesDiscovered: num(p.pagesDiscovered),
    pagesScanned: num(p.pagesScanned),
    pagesFailed: num(p.pagesFailed),
    currentUrl: str(p.currentUrl),
  }
}

/** Evidence values as one line of text each: strings as they are, anything else as compact JSON, capped. */
export function evidenceText(value: unknown, max = 2000): string {
  let s: string
  if (typeof value === 'string') s = value
  else {
    try {
      s = JSON.stringify(value) ?? String(value)
    } catch {
      s = String(value)
    }
  }
  return s.length > max ? `${s.slice(0, max)}… (${s.length - max} more characters)` : s
}
