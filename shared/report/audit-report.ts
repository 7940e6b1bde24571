// Turns an audit's crawled pages into its result: one site-wide score from the worst outcome of each
// check across the pages, and findings merged by fingerprint, so a header missing on 200 pages is one
// finding listing 200 pages, not 200 findings. Checks that report several things at once merge by the
// thing instead (shared/report/audit-subjects.ts): one finding per axe rule, per cookie (on the pages that set
// it) and per third-party host. Pure: no I/O.
import { createHash } from 'node:crypto'
import { CHECKS_VERSION, getCheck } from '../checks/registry.ts'
import type { CheckStatus, Severity } from '../checks/types.ts'
import type { CrawledPage } from './crawled-page.ts'
import { adviceText, type CheckResult } from './scan-report.ts'
import { gradeOf, penaltyOf, scoreOf, type Grade } from './scoring.ts'
import { byImpact, OUTCOME_RANK, SEVERITY_RANK, worseSeverity } from './ranking.ts'
import { mergePageSources } from '../checks/util/csp-builder.ts'
import { attributable, mergeSubjectEvidence, subjectsOf, subjectSummary, type SubjectKind, type SubjectPart } from './audit-subjects.ts'

/** A page as the result reads it: its links are the crawl's business, not the result's. */
export type AuditPageInput = Omit<CrawledPage, 'links'>

export interface AuditFinding {
  /** checkId:hash of the normalised evidence: equal on every page where the same thing is wrong. */
  fingerprint: string
  checkId: string
  title: string
  category: CheckResult['category']
  severity: Severity
  status: 'fail' | 'warn'
  summary: string
  /** The evidence as seen on the first page it was found on. */
  evidence: Record<string, unknown>
  advice: string
  /** Score points this finding costs the site. */
  impact: number
  pageCount: number
  /** The pages it was found on, at most MAX_FINDING_PAGES. */
  pages: string[]
  /**
   * What the finding is about when its check reports several things per page: an axe rule, a cookie (its
   * pages are those whose own responses or scripts set it) or a third-party host. Absent: merged by fingerprint.
   */
  subject?: { kind: SubjectKind; key: string }
  /** Accessibility: elements breaking the rule, per page (at most MAX_TARGET_PAGES pages, MAX_PAGE_TARGETS each). */
  targets?: Array<{ page: string; nodes: number; targets: string[] }>
  /** Accessibility: elements breaking the rule over all the pages it was found on. */
  elements?: number
}

/**
 * A third-party host the pages contacted before any interaction (third-party-requests), merged like a
 * finding: one per host with its pages. Informational, never scored, so kept apart from `findings`, which
 * hold only what fails or warns.
 */
export type AuditNotice = Omit<AuditFinding, 'status'> & { status: 'info' }

export interface AuditPageSummary {
  url: string
  finalUrl: string
  depth: number
  httpStatus: number | null
  ok: boolean
  error?: string
  loadMs: number
  score: number | null
  grade: Grade | null
  checks: Array<{ id: string; status: CheckStatus; severity: Severity; summary: string }>
  /** Names of the cookies the page set itself (its own Set-Cookie or scripts); absent when not recorded. */
  cookiesSet?: string[]
}

export type StoppedBy = 'done' | 'maxPages' | 'maxDuration' | 'aborted' | 'sessionLost'

export interface AuditResult {
  auditId: string
  url: string
  score: number
  grade: Grade
  checksVersion: string
  stoppedBy: StoppedBy
  /** An audit behind a login: whether the session held, and where it was lost. */
  session?: { authenticated: true; lost: boolean; lostAt: string | null }
  pagesDiscovered: number
  pagesScanned: number
  pagesFailed: number
  /** Count of site-wide check outcomes by status. */
  summary: Record<CheckStatus, number>
  /** Each check once, at its worst across the pages and the site-wide checks, with how many pages failed it. */
  checks: Array<{
    id: string
    title: string
    category: CheckResult['category']
    severity: Severity
    status: CheckStatus
    pagesAffected: number
  }>
  findings: AuditFinding[]
  /** Third-party hosts contacted, one per host with the pages that contacted it, most pages first. */
  thirdParties: AuditNotice[]
  /** Checks about the site as a whole (robots.txt, sitemap, ...), from the crawl. */
  siteChecks: CheckResult[]
  pages: AuditPageSummary[]
  finishedAt: string
}

export const MAX_FINDING_PAGES = 100
/** Pages whose element targets an accessibility finding lists, and targets per page. */
export const MAX_TARGET_PAGES = 20
export const MAX_PAGE_TARGETS = 3

const isFinding = (r: CheckResult): r is CheckResult & { status: 'fail' | 'warn' } => r.status === 'fail' || r.status === 'warn'

/** Evidence fields that describe the page or the moment rather than the problem. */
// pageSources (the csp check's inputs for its computed policy) holds each page's own inline-script hashes.
const VOLATILE_KEYS = new Set(['url', 'pageUrl', 'finalUrl', 'page', 'loadMs', 'ms', 'durationMs', 'timings', 'timestamp', 'pageSources'])

/**
 * The evidence with what differs from page to page taken out: the page's own address, timings and other
 * numbers (a page weight of 812 KB and one of 790 KB are the same finding), and key order.
 */
export function normaliseEvidence(value: unknown, page: { url: string; finalUrl: string }): unknown {
  const own = [page.finalUrl, page.url].filter(Boolean).sort((a, b) => b.length - a.length)
  const walk = (v: unknown): unknown => {
    if (typeof v === 'number') return '#'
    if (typeof v === 'string') {
      let s = v
      for (const u of own) s = s.split(u).join('<page>')
      return s
    }
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {}
      for (const k of Object.keys(v).sort()) if (!VOLATILE_KEYS.has(k)) out[k] = walk((v as Record<string, unknown>)[k])
      return out
    }
    return v
  }
  return walk(value)
}

export function fingerprintOf(r: Pick<CheckResult, 'id' | 'evidence'>, page: { url: string; finalUrl: string }): string {
  const key = JSON.stringify(normaliseEvidence(r.evidence ?? {}, page))
  return `${r.id}:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`
}

/** checkId:hash of what the finding is about (a rule, cookie or host): the same on every page and every run. */
export function subjectFingerprint(checkId: string, kind: SubjectKind, key: string): string {
  return `${checkId}:${createHash('sha256').update(`${kind}\u0000${key}`).digest('hex').slice(0, 16)}`
}

export function buildAuditResult(
  meta: {
    auditId: string
    url: string
    stoppedBy: StoppedBy
    pagesDiscovered: number
    finishedAt: string
    session?: { lostAt: string | null }
  },
  pages: AuditPageInput[],
  siteChecks: CheckResult[],
): AuditResult {
  const merged = new Merge()
  for (const page of pages) for (const r of page.checks) merged.addPageResult(r, page)
  for (const r of siteChecks) merged.addSiteCheck(r, meta.url)
  merged.finish()
  const siteWide = [...merged.worst.values()]
  const score = scoreOf(siteWide)
  const summary: Record<CheckStatus, number> = { pass: 0, fail: 0, warn: 0, info: 0, skipped: 0, error: 0 }
  for (const r of siteWide) summary[r.status]++
  const all = [...merged.findings.values()]
  return {
    auditId: meta.auditId,
    url: meta.url,
    score,
    grade: gradeOf(score),
    checksVersion: CHECKS_VERSION,
    stoppedBy: meta.stoppedBy,
    ...(meta.session ? { session: { authenticated: true, lost: meta.session.lostAt !== null, lostAt: meta.session.lostAt } } : {}),
    pagesDiscovered: Math.max(meta.pagesDiscovered, pages.length),
    pagesScanned: pages.filter((p) => p.ok).length,
    pagesFailed: pages.filter((p) => !p.ok).length,
    summary,
    checks: siteWide.map((r) => ({
      id: r.id,
      title: r.title,
      category: r.category,
      severity: r.severity,
      status: r.status,
      pagesAffected: merged.affected.get(r.id) ?? 0,
    })),
    findings: all
      .filter((f): f is AuditFinding => f.status !== 'info')
      .sort((a, b) => byImpact(a, b) || b.pageCount - a.pageCount || a.fingerprint.localeCompare(b.fingerprint)),
    thirdParties: all
      .filter((f): f is AuditNotice => f.status === 'info')
      .sort((a, b) => b.pageCount - a.pageCount || a.fingerprint.localeCompare(b.fingerprint)),
    siteChecks,
    pages: pages.map(pageSummary),
    finishedAt: meta.finishedAt,
  }
}

/** Internally a finding may be info (a third-party host): those go to thirdParties at the end. */
type Merging = Omit<AuditFinding, 'status'> & { status: AuditFinding['status'] | 'info' }

/** The results of every page and the site-wide checks as they merge: each check at its worst, how many pages
 * each fails on, and the findings by fingerprint. */
class Merge {
  readonly worst = new Map<string, CheckResult>()
  readonly affected = new Map<string, number>()
  readonly findings = new Map<string, Merging>()
  /** Subject findings, to write their summaries once every page is in. */
  private readonly subjects = new Set<Merging>()

  addPageResult(r: CheckResult, page: AuditPageInput): void {
    this.consider(r)
    // A result that names nothing to split by (an unexpected evidence shape) merges by fingerprint.
    const parts = subjectsOf(r)
    if (parts && parts.length > 0) {
      const here = parts.filter((p) => attributable(p, page))
      if (isFinding(r) && here.length > 0) this.affected.set(r.id, (this.affected.get(r.id) ?? 0) + 1)
      for (const part of here) this.addSubject(r, part, page)
      return
    }
    if (!isFinding(r)) return
    this.affected.set(r.id, (this.affected.get(r.id) ?? 0) + 1)
    const fp = fingerprintOf(r, page)
    const f = this.findings.get(fp)
    if (!f) return void this.findings.set(fp, findingOf(r, fp, [page.url]))
    f.pageCount++
    if (f.pages.length < MAX_FINDING_PAGES) f.pages.push(page.url)
    // The policy an audit's CSP finding computes allows what every page it covers loads and calls.
    if (r.id === 'csp') mergePageSources(f.evidence.pageSources, r.evidence?.pageSources)
    // A finding that fails anywhere is a failure.
    if (r.status === 'fail') f.status = 'fail'
  }

  addSiteCheck(r: CheckResult, url: string): void {
    this.consider(r)
    if (!isFinding(r)) return
    this.affected.set(r.id, this.affected.get(r.id) ?? 0)
    const fp = fingerprintOf(r, { url, finalUrl: url })
    if (!this.findings.has(fp)) this.findings.set(fp, findingOf(r, fp, []))
  }

  /** Once every result is in: each finding's cost, and the subject findings' summaries over all their pages. */
  finish(): void {
    for (const f of this.findings.values()) {
      f.impact = penaltyOf({ id: f.checkId, status: f.status })
      // Advice computed from the evidence speaks for every page merged into it.
      if (f.checkId === 'csp' && f.pageCount > 1) f.advice = getCheck(f.checkId)?.advise?.(f, 'generic') ?? f.advice
    }
    for (const f of this.subjects)
      f.summary = subjectSummary(f.subject!.kind, f.subject!.key, f.evidence, f.pageCount, f.status, f.elements ?? 0)
  }

  private consider(r: CheckResult): void {
    const w = this.worst.get(r.id)
    if (
      !w ||
      OUTCOME_RANK[r.status] > OUTCOME_RANK[w.status] ||
      (r.status === w.status && SEVERITY_RANK[r.severity] > SEVERITY_RANK[w.severity])
    )
      this.worst.set(r.id, r)
  }

  private addSubject(r: CheckResult, part: SubjectPart, page: AuditPageInput): void {
    const fp = subjectFingerprint(r.id, part.kind, part.key)
    let f = this.findings.get(fp)
    if (!f) {
      f = {
        fingerprint: fp,
        checkId: r.id,
        title: r.title,
        category: r.category,
        severity: part.severity,
        status: part.status,
        summary: '',
        evidence: structuredClone(part.evidence),
        advice:
          getCheck(r.id)?.advise?.({ status: part.status, evidence: part.evidence }, 'generic') ?? getCheck(r.id)?.fix.generic ?? r.summary,
        impact: 0,
        pageCount: 0,
        pages: [],
        subject: { kind: part.kind, key: part.key },
        ...(part.kind === 'axe-rule' ? { targets: [], elements: 0 } : {}),
      }
      this.findings.set(fp, f)
      this.subjects.add(f)
    } else {
      mergeSubjectEvidence(part.kind, f.evidence, part)
      if (OUTCOME_RANK[part.status] > OUTCOME_RANK[f.status]) f.status = part.status
      f.severity = worseSeverity(f.severity, part.severity)
    }
    f.pageCount++
    if (f.pages.length < MAX_FINDING_PAGES) f.pages.push(page.url)
    if (part.kind === 'axe-rule') {
      f.elements = (f.elements ?? 0) + (part.nodes ?? 0)
      if (f.targets!.length < MAX_TARGET_PAGES)
        f.targets!.push({ page: page.url, nodes: part.nodes ?? 0, targets: (part.targets ?? []).slice(0, MAX_PAGE_TARGETS) })
    }
  }
}

/** A finding merged by fingerprint, first seen on `pages` (none for a site-wide check). */
function findingOf(r: CheckResult & { status: 'fail' | 'warn' }, fingerprint: string, pages: string[]): Merging {
  return {
    fingerprint,
    checkId: r.id,
    title: r.title,
    category: r.category,
    severity: r.severity,
    status: r.status,
    summary: r.summary,
    // The csp finding's sources grow with each page it is found on: its own copy, not the first page's.
    evidence: r.id === 'csp' ? structuredClone(r.evidence) : r.evidence,
    advice: adviceText(r) ?? r.summary,
    impact: 0,
    pageCount: pages.length,
    pages,
  }
}

function pageSummary(p: AuditPageInput): AuditPageSummary {
  const pageScore = p.ok && p.checks.length ? scoreOf(p.checks) : null
  return {
    url: p.url,
    finalUrl: p.finalUrl,
    depth: p.depth,
    httpStatus: p.httpStatus,
    ok: p.ok,
    ...(p.error ? { error: p.error } : {}),
    loadMs: p.loadMs,
    score: pageScore,
    grade: pageScore === null ? null : gradeOf(pageScore),
    checks: p.checks.map((c) => ({ id: c.id, status: c.status, severity: c.severity, summary: c.summary })),
    ...(p.cookiesSet ? { cookiesSet: p.cookiesSet } : {}),
  }
}
