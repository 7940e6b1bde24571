// What changed between two scans of a monitored page: what got worse (regressions), what got better
// (improvements), and whether a regression recorded earlier is still there in a later scan. Pure: no I/O.
//
// A finding is identified as in an audit (shared/report/audit-report.ts): its check id and a hash of its evidence
// with the page's own address, numbers and timings taken out, so a page weight of 812 KB and one of 790 KB
// are the same finding, while a second leaked key is a new one.
import { fingerprintOf } from './audit-report.ts'
import { OUTCOME_RANK } from './ranking.ts'
import type { CheckStatus, Severity } from '../checks/types.ts'

/** The part of a scan report (shared/report/scan-report.ts) a comparison reads. */
export interface ComparableReport {
  url: string
  finalUrl: string
  score: number
  checks: ReadonlyArray<{
    id: string
    title: string
    severity: Severity
    status: CheckStatus
    summary: string
    evidence?: Record<string, unknown>
  }>
}

export type ChangeItem =
  | { kind: 'score'; from: number; to: number }
  | { kind: 'check'; checkId: string; title: string; severity: Severity; from: CheckStatus; to: CheckStatus }
  | {
      kind: 'finding'
      fingerprint: string
      checkId: string
      title: string
      severity: Severity
      status: 'fail' | 'warn'
      summary: string
      /** 'new': it was not there before; 'fixed': it is gone. */
      change: 'new' | 'fixed'
    }

/** A regression as a run keeps it: open until a later scan of the same page no longer shows it. */
export type Regression = ChangeItem & { resolvedAt: string | null; resolvedByScanId: string | null }

export interface ScanDiff {
  regressions: ChangeItem[]
  improvements: ChangeItem[]
}

type Finding = Extract<ChangeItem, { kind: 'finding' }>

/** Worse: a pass that now warns or fails, or a warning that now fails. */
const worsened = (from: CheckStatus, to: CheckStatus) =>
  (from === 'pass' && (to === 'warn' || to === 'fail')) || (from === 'warn' && to === 'fail')

/** The report's findings (checks that warn or fail) by fingerprint. */
function findings(report: ComparableReport, change: Finding['change']): Map<string, Finding> {
  const page = { url: report.url, finalUrl: report.finalUrl }
  const out = new Map<string, Finding>()
  for (const c of report.checks) {
    if (c.status !== 'fail' && c.status !== 'warn') continue
    const fingerprint = fingerprintOf({ id: c.id, evidence: c.evidence ?? {} }, page)
    out.set(fingerprint, {
      kind: 'finding',
      fingerprint,
      checkId: c.id,
      title: c.title,
      severity: c.severity,
      status: c.status,
      summary: c.summary,
      change,
    })
  }
  return out
}

const findingPrints = (report: ComparableReport): ReadonlySet<string> => new Set(findings(report, 'new').keys())

/**
 * The changes from `previous` to `current`. A check that went from pass to fail is reported once, as a
 * check, not again as a new finding; a finding of a check that was already failing (new evidence: another
 * leaked key, another exposed file) or that could not run before is a new finding.
 */
export function diffReports(previous: ComparableReport, current: ComparableReport): ScanDiff {
  const regressions: ChangeItem[] = []
  const improvements: ChangeItem[] = []
  if (current.score < previous.score) regressions.push({ kind: 'score', from: previous.score, to: current.score })
  if (current.score > previous.score) improvements.push({ kind: 'score', from: previous.score, to: current.score })

  const before = new Map(previous.checks.map((c) => [c.id, c]))
  const after = new Map(current.checks.map((c) => [c.id, c]))
  const worse = new Set<string>()
  const better = new Set<string>()
  for (const c of current.checks) {
    const was = before.get(c.id)
    if (!was || was.status === c.status) continue
    const item = { kind: 'check' as const, checkId: c.id, title: c.title, severity: c.severity, from: was.status, to: c.status }
    if (worsened(was.status, c.status)) {
      worse.add(c.id)
      regressions.push(item)
    } else if (worsened(c.status, was.status)) {
      better.add(c.id)
      improvements.push(item)
    }
  }

  const oldFindings = findings(previous, 'fixed')
  const newFindings = findings(current, 'new')
  for (const [fp, f] of newFindings) if (!oldFindings.has(fp) && !worse.has(f.checkId)) regressions.push(f)
  for (const [fp, f] of oldFindings) {
    // A finding whose check is gone from the report (renamed, removed) is not "fixed": nothing judged it.
    if (!newFindings.has(fp) && !better.has(f.checkId) && after.has(f.checkId)) improvements.push(f)
  }
  return { regressions, improvements }
}

/** Whether `current` still shows the regression: the score is still lower, the check still worse, the finding still there. */
export function stillRegressed(item: ChangeItem, current: ComparableReport, currentFindings = findingPrints(current)): boolean {
  switch (item.kind) {
    case 'score':
      return current.score < item.from
    case 'check': {
      const now = current.checks.find((c) => c.id === item.checkId)?.status ?? 'skipped'
      return OUTCOME_RANK[now] > OUTCOME_RANK[item.from]
    }
    case 'finding':
      return currentFindings.has(item.fingerprint)
  }
}

/** Marks the items of an earlier run that `current` no longer shows as resolved by its scan. */
export function resolveRegressions(
  items: readonly Regression[],
  current: ComparableReport,
  by: { scanId: string; at: string },
): { items: Regression[]; open: number; changed: boolean } {
  let changed = false
  const prints = findingPrints(current)
  const out = items.map((r) => {
    if (r.resolvedAt !== null || stillRegressed(r, current, prints)) return r
    changed = true
    return { ...r, resolvedAt: by.at, resolvedByScanId: by.scanId }
  })
  return { items: out, open: out.filter((r) => r.resolvedAt === null).length, changed }
}

/** A stored report, when it has what a comparison reads; null for anything else. */
export function asComparable(report: unknown): ComparableReport | null {
  const r = report as Partial<ComparableReport> | null
  if (!r || typeof r !== 'object' || typeof r.score !== 'number' || !Array.isArray(r.checks)) return null
  return { url: String(r.url ?? ''), finalUrl: String(r.finalUrl ?? r.url ?? ''), score: r.score, checks: r.checks }
}
