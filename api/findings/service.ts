// Findings of a completed scan, as the tools read them: the scan and its report (any other state is an
// error that names it), and the report's checks in impact order; and the merged findings of a completed
// audit, with a fix brief for them.
import { ATTENTION_RANK, bySeverity } from '../../shared/report/ranking.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import type { Database } from '../../shared/db/index.ts'
import { getScan, type ScanRow } from '../../shared/db/scans.ts'
import { AppError } from '../../shared/errors.ts'
import {
  asPlatformSignals,
  detectFromSignals,
  signalsFromReport,
  type Platform,
  type PlatformDetection,
} from '../../shared/report/platform.ts'
import type { Report, ReportCheck } from '../../shared/report/schema.ts'
import type { CheckCatalog } from '../checks/service.ts'
import { completedAuditFindings } from '../audits/service.ts'
import { brief, findingAsCheck } from './fix-brief.ts'

/** A completed scan of this account and its report; any other state is an error that names the state. */
export async function completedScan(db: Database, principal: Principal, scanId: string): Promise<{ scan: ScanRow; report: Report }> {
  const scan = await getScan(db.sql, principal.account.id, scanId)
  if (!scan) throw new AppError('not_found', `No scan ${scanId} in this account`)
  if (scan.status === 'failed') {
    throw new AppError(
      'scan_failed',
      `Scan ${scanId} failed, so it has no findings${scan.error ? `: ${scan.error.message}` : ''}. Run scan_app again.`,
      {
        scanId,
        status: scan.status,
        ...(scan.error ? { reason: scan.error } : {}),
      },
    )
  }
  if (scan.status !== 'completed' || !scan.report) {
    // Not finished yet: the same answer scan_app gives when it stops waiting, with the scanId to poll.
    throw new AppError(
      'scanner_unavailable',
      `Scan ${scanId} is ${scan.status}, not completed yet: poll get_scan until its status is completed, then call again.`,
      {
        scanId,
        status: scan.status,
      },
    )
  }
  return { scan, report: scan.report as Report }
}

/**
 * The report's checks, highest impact first: the report's advice order (score points lost, then severity),
 * then the checks that cost nothing by severity and status, then report order.
 */
export function byImpact(report: Report): ReportCheck[] {
  const adviceRank = new Map(report.advice.map((a, i) => [a.checkId, i]))
  const position = new Map(report.checks.map((c, i) => [c, i]))
  const rank = (c: ReportCheck) => adviceRank.get(c.id) ?? Number.MAX_SAFE_INTEGER
  return [...report.checks].sort(
    (a, b) =>
      rank(a) - rank(b) || bySeverity(a, b) || ATTENTION_RANK[b.status] - ATTENTION_RANK[a.status] || position.get(a)! - position.get(b)!,
  )
}

export interface FixBriefInput {
  scanId: string
  checkId?: string
  platform?: Platform
}

export interface AuditFixBriefInput {
  auditId: string
  checkId?: string
  platform?: Platform
}

/** How many pages of a check's findings an audit's brief names as examples. */
const EXAMPLE_PAGES = 3

export class FindingsService {
  constructor(private deps: { db: Database; checks: CheckCatalog }) {}

  /** A completed scan of this account and its report; not_found, scan_failed or scanner_unavailable otherwise. */
  completedScan(principal: Principal, scanId: string): Promise<{ scan: ScanRow; report: Report }> {
    return completedScan(this.deps.db, principal, scanId)
  }

  /** The report's checks, highest impact first. */
  byImpact(report: Report): ReportCheck[] {
    return byImpact(report)
  }

  /** A completed audit of this account with its merged findings (highest impact first) and site checks. */
  auditFindings(principal: Principal, auditId: string) {
    return completedAuditFindings(this.deps.db, principal, auditId)
  }

  /**
   * The brief for a completed audit: one item per check with findings, written from its highest-impact
   * finding, with how many pages and findings it covers and a few of those pages. The platform is detected
   * from the evidence of the findings and the site checks (Server, X-Powered-By, script URLs), as exports do.
   */
  async auditFixBrief(principal: Principal, input: AuditFixBriefInput) {
    const { audit, head, findings, siteChecks } = await this.auditFindings(principal, input.auditId)
    const evidence = [
      ...findings.map((f) => ({ id: String(f.checkId), evidence: (f.evidence ?? {}) as Record<string, unknown> })),
      ...siteChecks.map((c) => ({ id: String(c.id), evidence: (c.evidence ?? {}) as Record<string, unknown> })),
    ]
    const detection: PlatformDetection & { source: string } = {
      ...detectFromSignals(signalsFromReport({ checks: evidence })),
      source: "the audit's evidence (Server, X-Powered-By, script URLs)",
    }
    const platform = input.platform ?? detection.platform
    const ran = (id: string) => findings.some((f) => f.checkId === id) || siteChecks.some((c) => c.id === id)
    if (input.checkId !== undefined && !ran(input.checkId) && !this.deps.checks.isKnown(input.checkId)) {
      throw this.deps.checks.unknownCheck(input.checkId)
    }
    // Findings come highest impact first, so a check's first finding is its worst.
    const byCheck = new Map<string, Array<Record<string, unknown>>>()
    for (const f of findings) {
      const id = String(f.checkId)
      if (input.checkId !== undefined && id !== input.checkId) continue
      byCheck.set(id, [...(byCheck.get(id) ?? []), f])
    }
    const url = typeof head.url === 'string' ? head.url : audit.url
    const reportLike = { finalUrl: url } as Report
    const items = [...byCheck.values()].map((group) => {
      const pages = [...new Set(group.flatMap((f) => (Array.isArray(f.pages) ? (f.pages as string[]) : [])))]
      return {
        ...brief(findingAsCheck(group[0]! as Parameters<typeof findingAsCheck>[0]), platform, reportLike, url),
        findings: group.length,
        pageCount: group.reduce((n, f) => n + (typeof f.pageCount === 'number' ? f.pageCount : 0), 0),
        examplePages: pages.slice(0, EXAMPLE_PAGES),
      }
    })
    const note =
      items.length > 0
        ? undefined
        : input.checkId === undefined
          ? 'No failing or warning findings in this audit: nothing to fix.'
          : `${input.checkId} has no failing or warning finding in this audit: nothing to fix.`
    return {
      auditId: audit.id,
      url,
      score: head.score,
      grade: head.grade,
      platform,
      detectedFrom: input.platform !== undefined ? ['platform argument'] : detection.detectedFrom,
      detected: detection,
      ...(note ? { note } : {}),
      items,
    }
  }

  /** What to change, where and how to verify it, for each failing or warning check of a completed scan. */
  async fixBrief(principal: Principal, input: FixBriefInput) {
    const { scan, report } = await this.completedScan(principal, input.scanId)
    const recorded = asPlatformSignals(scan.platformSignals)
    const detection: PlatformDetection & { source: string } = {
      ...detectFromSignals(recorded ?? signalsFromReport(report)),
      source: recorded ? "the scanned response's headers and page" : "the report's evidence (Server, X-Powered-By, script URLs)",
    }
    const platform = input.platform ?? detection.platform

    if (input.checkId !== undefined && !report.checks.some((c) => c.id === input.checkId) && !this.deps.checks.isKnown(input.checkId)) {
      throw this.deps.checks.unknownCheck(input.checkId)
    }
    const findings = this.byImpact(report).filter(
      (c) => (c.status === 'fail' || c.status === 'warn') && (input.checkId === undefined || c.id === input.checkId),
    )
    const only = input.checkId === undefined ? undefined : report.checks.find((c) => c.id === input.checkId)
    const note =
      input.checkId === undefined
        ? findings.length === 0
          ? 'No failing or warning checks in this scan: nothing to fix.'
          : undefined
        : !only
          ? `${input.checkId} was not part of this scan (checks version ${report.checksVersion}): scan again to run it.`
          : findings.length === 0
            ? `${input.checkId} is ${only.status} in this scan: nothing to fix.`
            : undefined

    return {
      scanId: scan.id,
      url: report.url,
      finalUrl: report.finalUrl,
      score: report.score,
      grade: report.grade,
      platform,
      detectedFrom: input.platform !== undefined ? ['platform argument'] : detection.detectedFrom,
      detected: detection,
      ...(note ? { note } : {}),
      items: findings.map((c) => brief(c, platform, report, scan.url)),
    }
  }
}
