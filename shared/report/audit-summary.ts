// What get_audit's default answer reads of a completed audit, stored beside the result (migration 016) so
// the answer never loads the whole result: the head, the severities and statuses present, the top findings
// and third parties, and the totals. Computed by the worker that completes the audit; pure, no I/O.
import type { Severity } from '../checks/types.ts'
import type { AuditResult } from './audit-report.ts'

/** How many findings and third parties an audit's stored summary keeps whole (get_audit shows fewer). */
export const SUMMARY_TOP = 10

/** What get_audit's default answer needs of a completed result, small enough to read at once (migration 016). */
export interface StoredAuditSummary {
  head: Record<string, unknown>
  severities: string[]
  statuses: string[]
  top: Array<Record<string, unknown>>
  topThird: Array<Record<string, unknown>>
  totals: { findings: number; pages: number; checks: number; thirdParties: number }
}

/** How many of a top finding's pages a summary keeps (get_audit shows two as examples). */
const SUMMARY_PAGES = 2

/** A top finding as a summary keeps it: what get_audit shows of it, its pages cut to a few examples. */
export function summaryFinding(f: Record<string, unknown>): Record<string, unknown> {
  const pick = ['fingerprint', 'checkId', 'title', 'category', 'severity', 'status', 'impact', 'summary', 'pageCount', 'subject']
  const out: Record<string, unknown> = {}
  for (const k of pick) if (k in f) out[k] = f[k]
  if (Array.isArray(f.pages)) out.pages = f.pages.slice(0, SUMMARY_PAGES)
  return out
}

/** A third-party host as a summary keeps it: the host and how many pages used it. */
export const summaryThirdParty = (t: Record<string, unknown>) => ({ subject: t.subject, pageCount: t.pageCount })

/** What get_audit's summary shows of an audit's result. */
export interface SummaryParts {
  /** The result without its lists; null until the audit has a result. */
  head: Record<string, unknown> | null
  /** Severity and status of every finding, in the result's order (highest impact first). */
  findingSeverities: string[]
  findingStatuses: string[]
  /** The first `top` findings, as a summary keeps them (summaryFinding: what get_audit shows, a few example pages). */
  topFindings: Array<Record<string, unknown>>
  /** The first `top` third-party hosts (most pages first): host and page count. */
  topThirdParties: Array<Record<string, unknown>>
  /** How many items each list holds. */
  totals: StoredAuditSummary['totals']
}

/**
 * The parts of a summary read back, with its first `top` findings and third parties as a summary keeps them:
 * a stored one (`stored`, from summaryOf) has its lists cut already, one read out of the result is cut here.
 */
export function summaryParts(
  read: Omit<StoredAuditSummary, 'head'> & { head: Record<string, unknown> | null; stored: boolean },
  top: number,
): SummaryParts {
  const first = (items: Array<Record<string, unknown>>, cut: (x: Record<string, unknown>) => Record<string, unknown>) =>
    top > 0 ? (read.stored ? items : items.map(cut)).slice(0, top) : []
  return {
    head: read.head,
    findingSeverities: read.severities,
    findingStatuses: read.statuses,
    topFindings: first(read.top, summaryFinding),
    topThirdParties: first(read.topThird, summaryThirdParty),
    totals: read.totals,
  }
}

/** The summary stored with a completed audit (completeAudit), computed once rather than cut out of the result at every read. */
export function summaryOf(result: AuditResult | Record<string, unknown>): StoredAuditSummary {
  const { pages, findings, checks, siteChecks: _siteChecks, thirdParties, ...head } = result as Record<string, unknown>
  const list = (v: unknown) => (Array.isArray(v) ? (v as Array<Record<string, unknown>>) : [])
  return {
    head,
    severities: list(findings).map((f) => String(f.severity)),
    statuses: list(findings).map((f) => String(f.status)),
    top: list(findings).slice(0, SUMMARY_TOP).map(summaryFinding),
    topThird: list(thirdParties).slice(0, SUMMARY_TOP).map(summaryThirdParty),
    totals: {
      findings: list(findings).length,
      pages: list(pages).length,
      checks: list(checks).length,
      thirdParties: list(thirdParties).length,
    },
  }
}
