// One shape for a finished scan or audit, so that the comparison and every export writer read the same
// thing whichever they were given: each check once with its outcome, and the findings (fail and warn) keyed
// by fingerprint, highest impact first. Pure: the service loads the rows, this only reshapes them.
import type { AuditResult } from '../audit-report.ts'
import { fingerprintOf } from '../audit-report.ts'
import { byImpact } from '../ranking.ts'
import { shownTitle } from '../../checks/runner.ts'
import type { Category, CheckStatus, Severity } from '../../checks/types.ts'
import { asPlatformSignals, detectFromSignals, signalsFromReport, type Platform } from '../platform.ts'
import type { Report } from '../schema.ts'
import { penaltyOf, type Grade } from '../scoring.ts'

export type ReportKind = 'scan' | 'audit'

export interface ModelCheck {
  id: string
  title: string
  category: Category
  severity: Severity
  status: CheckStatus
  summary: string
}

export interface ModelFinding {
  /** checkId:hash of the evidence with what varies per page and per run taken out (shared/report/audit-report.ts). */
  fingerprint: string
  checkId: string
  title: string
  category: Category
  severity: Severity
  status: 'fail' | 'warn'
  summary: string
  evidence: Record<string, unknown>
  /** Score points it costs. */
  impact: number
  pageCount: number
  /** Pages it was found on (a scan: its one page; an audit: at most 100). */
  pages: string[]
}

export interface ReportModel {
  kind: ReportKind
  id: string
  url: string
  finalUrl: string
  score: number
  grade: Grade
  checksVersion: string
  /** ISO 8601: when the scan or audit was started. */
  createdAt: string
  summary: Record<CheckStatus, number>
  /** Every check once (an audit: at its worst across the site), in report order. */
  checks: ModelCheck[]
  /** Fail and warn only, highest impact first. */
  findings: ModelFinding[]
  /** The hosting platform the fixes are written for (generic when none was recognised). */
  platform: Platform
}

const isFinding = (status: CheckStatus): status is 'fail' | 'warn' => status === 'fail' || status === 'warn'

/** Impact order, then failures before warnings, more pages first, then the fingerprint so the order is stable. */
const findingOrder = (a: ModelFinding, b: ModelFinding) =>
  byImpact(a, b) ||
  (a.status === b.status ? 0 : a.status === 'fail' ? -1 : 1) ||
  b.pageCount - a.pageCount ||
  a.fingerprint.localeCompare(b.fingerprint)

export function modelOfScan(scan: { id: string; url: string; createdAt: Date; platformSignals: unknown }, report: Report): ReportModel {
  const page = { url: report.url || scan.url, finalUrl: report.finalUrl || report.url || scan.url }
  const findings: ModelFinding[] = []
  for (const c of report.checks) {
    if (!isFinding(c.status)) continue
    findings.push({
      fingerprint: fingerprintOf(c, page),
      checkId: c.id,
      title: shownTitle(c.id, c.status, c.title, c.evidence),
      category: c.category,
      severity: c.severity,
      status: c.status,
      summary: c.summary,
      evidence: c.evidence ?? {},
      impact: penaltyOf(c),
      pageCount: 1,
      pages: [page.finalUrl],
    })
  }
  return {
    kind: 'scan',
    id: scan.id,
    url: page.url,
    finalUrl: page.finalUrl,
    score: report.score,
    grade: report.grade,
    checksVersion: report.checksVersion,
    createdAt: report.createdAt || scan.createdAt.toISOString(),
    summary: { ...report.summary },
    checks: report.checks.map((c) => ({
      id: c.id,
      title: shownTitle(c.id, c.status, c.title, c.evidence),
      category: c.category,
      severity: c.severity,
      status: c.status,
      summary: c.summary,
    })),
    findings: findings.sort(findingOrder),
    platform: detectFromSignals(asPlatformSignals(scan.platformSignals) ?? signalsFromReport(report)).platform,
  }
}

export function modelOfAudit(audit: { id: string; url: string; createdAt: Date }, result: AuditResult): ReportModel {
  // The result keeps one summary per finding and per page check; a check's line is the first one found.
  const summaries = new Map<string, string>()
  for (const f of result.findings) if (!summaries.has(f.checkId)) summaries.set(f.checkId, f.summary)
  for (const c of result.siteChecks) if (!summaries.has(c.id)) summaries.set(c.id, c.summary)
  for (const p of result.pages) for (const c of p.checks) if (!summaries.has(c.id)) summaries.set(c.id, c.summary)
  const evidenceOf = [
    ...result.findings.map((f) => ({ id: f.checkId, evidence: f.evidence })),
    ...result.siteChecks.map((c) => ({ id: c.id, evidence: c.evidence })),
  ]
  return {
    kind: 'audit',
    id: audit.id,
    url: result.url || audit.url,
    finalUrl: result.pages.find((p) => p.ok)?.finalUrl ?? result.url ?? audit.url,
    score: result.score,
    grade: result.grade,
    checksVersion: result.checksVersion,
    createdAt: audit.createdAt.toISOString(),
    summary: { ...result.summary },
    checks: result.checks.map((c) => ({
      id: c.id,
      title: shownTitle(c.id, c.status, c.title, evidenceOf.find((e) => e.id === c.id)?.evidence),
      category: c.category,
      severity: c.severity,
      status: c.status,
      summary: summaries.get(c.id) ?? '',
    })),
    findings: result.findings
      .map((f) => ({
        fingerprint: f.fingerprint,
        checkId: f.checkId,
        title: shownTitle(f.checkId, f.status, f.title, f.evidence),
        category: f.category,
        severity: f.severity,
        status: f.status,
        summary: f.summary,
        evidence: f.evidence ?? {},
        impact: f.impact,
        // A site-wide finding lists no page: it is about the origin, which the audit's URL names, and counts it.
        pageCount: f.pages.length > 0 ? f.pageCount : 1,
        pages: f.pages.length > 0 ? f.pages : [result.url || audit.url],
      }))
      .sort(findingOrder),
    platform: detectFromSignals(signalsFromReport({ checks: evidenceOf })).platform,
  }
}
