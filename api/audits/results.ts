// get_audit's answers, summary first. A completed audit of hundreds of pages is megabytes of JSON, and a
// coding agent's model sees only a few thousand tokens of a tool result, so the default answer is the state,
// the score, counts and the top findings by impact, and says how to ask for the rest: the result's
// findings, pages and checks one page at a time (section, limit, cursor). Pure: the service reads the rows.
import { SEVERITY_RANK } from '../../shared/report/ranking.ts'
import type { Severity } from '../../shared/checks/types.ts'
import type { AuditSlice, AuditSummaryParts, ResultList } from '../../shared/db/audit-results.ts'
import { fitting, nextCursor } from '../pagination.ts'

export const SECTIONS = ['findings', 'pages', 'checks', 'thirdParties'] as const satisfies readonly ResultList[]
export type Section = (typeof SECTIONS)[number]

/** Items per section page unless the caller says otherwise, and the most a caller may ask for. */
export const SECTION_LIMIT = { default: 20, max: 100 } as const
/** No answer of get_audit is larger than this (DESIGN.md: results for agents). */
export const ANSWER_BYTES = 16 * 1024
/** Of which the items of a section page may take this much; the rest is the envelope. */
const ITEMS_BYTES = 12 * 1024
/** Top findings in the summary: at most this many, in at most this many bytes. */
const TOP_FINDINGS = 10
const TOP_FINDINGS_BYTES = 8 * 1024
const EXAMPLE_PAGES = 2
/** Third-party hosts named in the summary. */
const TOP_THIRD_PARTIES = 5

/** Most severe first. */
const SEVERITIES = (Object.keys(SEVERITY_RANK) as Severity[]).sort((a, b) => SEVERITY_RANK[b] - SEVERITY_RANK[a])

/** The opaque cursor of a section page: it names the audit and the section, so it fits nowhere else. */
export const sectionScope = (auditId: string, section: Section) => `get_audit:${auditId}:${section}`

const count = (values: readonly string[], keys: readonly string[]) => {
  const out: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]))
  for (const v of values) out[v] = (out[v] ?? 0) + 1
  return out
}

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** A finding as the summary lists it: what is wrong, how much it costs, and where (two example pages). */
function topFinding(f: Record<string, unknown>) {
  const pages = Array.isArray(f.pages) ? (f.pages as unknown[]).filter((p): p is string => typeof p === 'string') : []
  return {
    fingerprint: f.fingerprint,
    checkId: f.checkId,
    title: f.title,
    category: f.category,
    severity: f.severity,
    status: f.status,
    impact: f.impact,
    summary: str(f.summary).length > 300 ? `${str(f.summary).slice(0, 297)}...` : f.summary,
    pageCount: f.pageCount,
    examplePages: pages.slice(0, EXAMPLE_PAGES),
  }
}

/** How to ask for each section, for an audit whose lists hold `totals` items. */
function howToGetMore(auditId: string, totals: Record<Section, number>) {
  const next = (section: Section) => ({ total: totals[section], arguments: { auditId, section } })
  return {
    hint:
      'This is a summary. Call get_audit with these arguments (add limit, at most 100) for the findings (merged across pages, ' +
      'highest impact first), the pages (each with its failing checks), the checks (each once, at its worst) or the third-party ' +
      'hosts the pages load from (each with its pages); then pass ' +
      'nextCursor back as cursor until it is null. get_fix_brief {auditId} says what to change for each finding; ' +
      'get_findings {auditId} filters the findings by severity, category or status.',
    findings: next('findings'),
    pages: next('pages'),
    checks: next('checks'),
    thirdParties: next('thirdParties'),
  }
}

/** The audit's state, then (when completed) the summary of its result and how to get the rest. */
export function summaryAnswer(view: Record<string, unknown>, parts: AuditSummaryParts) {
  const { row, head } = parts
  if (row.status !== 'completed' || !head) return view
  const { auditId: _id, url: _url, ...rest } = head
  const top = fitting(parts.topFindings.slice(0, TOP_FINDINGS).map(topFinding), TOP_FINDINGS_BYTES)
  return {
    ...view,
    result: {
      ...rest,
      findingCounts: {
        total: parts.totals.findings,
        bySeverity: count(parts.findingSeverities, SEVERITIES),
        byStatus: count(parts.findingStatuses, ['fail', 'warn']),
      },
      topFindings: top,
      // Hosts only, most pages first: the full entries (evidence, pages) are the thirdParties section.
      thirdParties: {
        total: parts.totals.thirdParties,
        top: parts.topThirdParties.slice(0, TOP_THIRD_PARTIES).map((t) => ({
          host: (t.subject as { key?: unknown } | undefined)?.key ?? null,
          pageCount: t.pageCount,
        })),
      },
    },
    more: howToGetMore(row.id, parts.totals),
  }
}

/** A page as the pages section lists it: its outcome, its checks counted by status, and the ones that did not pass. */
function pageItem(p: Record<string, unknown>) {
  const { checks, ...rest } = p
  const list = Array.isArray(checks) ? (checks as Array<Record<string, unknown>>) : []
  return {
    ...rest,
    checkCounts: count(
      list.map((c) => str(c.status)),
      ['pass', 'fail', 'warn', 'info', 'skipped', 'error'],
    ),
    issues: list
      .filter((c) => c.status === 'fail' || c.status === 'warn' || c.status === 'error')
      .map((c) => ({ id: c.id, status: c.status, severity: c.severity, summary: c.summary })),
  }
}

/** A check as the checks section lists it; a site-wide check also with its summary and evidence. */
function checkItem(c: Record<string, unknown>, site: Map<unknown, Record<string, unknown>>) {
  const s = site.get(c.id)
  return s ? { ...c, siteWide: true, summary: s.summary, evidence: s.evidence } : c
}

/** One page of a section of a completed audit's result, starting at `offset`. */
export function sectionAnswer(slice: AuditSlice, section: Section, offset: number) {
  const { row } = slice
  const site = new Map((slice.siteChecks ?? []).map((c) => [c.id, c]))
  const shaped = slice.items.map((item) => (section === 'pages' ? pageItem(item) : section === 'checks' ? checkItem(item, site) : item))
  const items = fitting(shaped, ITEMS_BYTES)
  return {
    auditId: row.id,
    url: row.url,
    status: row.status,
    score: slice.score,
    grade: slice.grade,
    section,
    total: slice.total,
    offset,
    items,
    nextCursor: nextCursor(sectionScope(row.id, section), offset, items.length, slice.total),
  }
}
