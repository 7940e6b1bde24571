// Turns an audit's crawled pages into its result: one site-wide score from the worst outcome of each
// check across the pages, and findings merged by fingerprint, so a header missing on 200 pages is one
// finding listing 200 pages, not 200 findings. Pure: no I/O.
import { createHash } from 'node:crypto'
import { CHECKS_VERSION, getCheck } from './checks/registry.ts'
import type { CheckStatus, Severity } from './checks/types.ts'
import type { CrawledPage } from './audit-page.ts'
import type { CheckResult } from './report.ts'
import { gradeOf, penaltyOf, scoreOf, type Grade } from './scoring.ts'
import { byImpact, OUTCOME_RANK, SEVERITY_RANK } from './checks/ranking.ts'

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
}

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
}

export type StoppedBy = 'done' | 'maxPages' | 'maxDuration' | 'aborted'

export interface AuditResult {
  auditId: string
  url: string
  score: number
  grade: Grade
  checksVersion: string
  stoppedBy: StoppedBy
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
  /** Checks about the site as a whole (robots.txt, sitemap, ...), from the crawl. */
  siteChecks: CheckResult[]
  pages: AuditPageSummary[]
  finishedAt: string
}

export const MAX_FINDING_PAGES = 100

const isFinding = (r: CheckResult): r is CheckResult & { status: 'fail' | 'warn' } => r.status === 'fail' || r.status === 'warn'

/** Evidence fields that describe the page or the moment rather than the problem. */
const VOLATILE_KEYS = new Set(['url', 'pageUrl', 'finalUrl', 'page', 'loadMs', 'ms', 'durationMs', 'timings', 'timestamp'])

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

export function buildAuditResult(
  meta: { auditId: string; url: string; stoppedBy: StoppedBy; pagesDiscovered: number; finishedAt: string },
  pages: AuditPageInput[],
  siteChecks: CheckResult[],
): AuditResult {
  const worst = new Map<string, CheckResult>()
  const affected = new Map<string, number>()
  const consider = (r: CheckResult) => {
    const w = worst.get(r.id)
    if (
      !w ||
      OUTCOME_RANK[r.status] > OUTCOME_RANK[w.status] ||
      (r.status === w.status && SEVERITY_RANK[r.severity] > SEVERITY_RANK[w.severity])
    )
      worst.set(r.id, r)
  }
  const findings = new Map<string, AuditFinding>()
  for (const page of pages) {
    for (const r of page.checks) {
      consider(r)
      if (!isFinding(r)) continue
      affected.set(r.id, (affected.get(r.id) ?? 0) + 1)
      const fp = fingerprintOf(r, page)
      const f = findings.get(fp)
      if (f) {
        f.pageCount++
        if (f.pages.length < MAX_FINDING_PAGES) f.pages.push(page.url)
        // A finding that fails anywhere is a failure.
        if (r.status === 'fail') f.status = 'fail'
        continue
      }
      findings.set(fp, {
        fingerprint: fp,
        checkId: r.id,
        title: r.title,
        category: r.category,
        severity: r.severity,
        status: r.status,
        summary: r.summary,
        evidence: r.evidence,
        advice: getCheck(r.id)?.fix.generic ?? r.summary,
        impact: 0,
        pageCount: 1,
        pages: [page.url],
      })
    }
  }
  for (const r of siteChecks) {
    consider(r)
    if (!isFinding(r)) continue
    affected.set(r.id, affected.get(r.id) ?? 0)
    const fp = fingerprintOf(r, { url: meta.url, finalUrl: meta.url })
    if (!findings.has(fp)) {
      findings.set(fp, {
        fingerprint: fp,
        checkId: r.id,
        title: r.title,
        category: r.category,
        severity: r.severity,
        status: r.status,
        summary: r.summary,
        evidence: r.evidence,
        advice: getCheck(r.id)?.fix.generic ?? r.summary,
        impact: 0,
        pageCount: 0,
        pages: [],
      })
    }
  }
  const siteWide = [...worst.values()]
  const score = scoreOf(siteWide)
  for (const f of findings.values()) f.impact = penaltyOf({ id: f.checkId, status: f.status })
  const summary: Record<CheckStatus, number> = { pass: 0, fail: 0, warn: 0, info: 0, skipped: 0, error: 0 }
  for (const r of siteWide) summary[r.status]++

  return {
    auditId: meta.auditId,
    url: meta.url,
    score,
    grade: gradeOf(score),
    checksVersion: CHECKS_VERSION,
    stoppedBy: meta.stoppedBy,
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
      pagesAffected: affected.get(r.id) ?? 0,
    })),
    findings: [...findings.values()].sort(
      (a, b) => byImpact(a, b) || b.pageCount - a.pageCount || a.fingerprint.localeCompare(b.fingerprint),
    ),
    siteChecks,
    pages: pages.map((p) => {
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
      }
    }),
    finishedAt: meta.finishedAt,
  }
}
