// Turns one scan's check results into the report: summary counts, score, grade and advice by impact.

import { CHECKS_VERSION, getCheck } from '../checks/registry.ts'
import type { Advice, CheckResult, Report, ReportSummary } from './schema.ts'
import { gradeOf, penaltyOf, scoreOf } from './scoring.ts'
import { byImpact } from './ranking.ts'

export type { Advice, CheckResult, Report } from './schema.ts'

export interface ReportMeta {
  id: string
  url: string
  finalUrl: string
  /** ISO 8601. */
  createdAt: string
  /** Milliseconds per phase (gather, browser, checks, ...). */
  timings: Record<string, number>
  /** The probe requests the scan made against its budget. */
  probes?: Report['probes']
}

const isFinding = <T extends Pick<CheckResult, 'status'>>(r: T): r is T & { status: 'fail' | 'warn' } =>
  r.status === 'fail' || r.status === 'warn'

/** How to fix a finding: computed from its evidence when the check can (e.g. the csp check's policy), else the check's fix. */
export function adviceText(r: Pick<CheckResult, 'id' | 'status' | 'evidence'>): string | null {
  if (!isFinding(r)) return null
  const check = getCheck(r.id)
  return check?.advise?.(r, 'generic') ?? check?.fix.generic ?? null
}

export function buildReport(meta: ReportMeta, results: CheckResult[]): Report {
  const summary: ReportSummary = { pass: 0, fail: 0, warn: 0, info: 0, skipped: 0, error: 0 }
  for (const r of results) summary[r.status]++
  const score = scoreOf(results)

  const advice: Advice[] = results
    .filter(isFinding)
    .map((r) => ({
      checkId: r.id,
      title: r.title,
      severity: r.severity,
      status: r.status,
      impact: penaltyOf(r),
      advice: adviceText(r) ?? r.summary,
    }))
    .sort((a, b) => byImpact(a, b) || (a.status === b.status ? 0 : a.status === 'fail' ? -1 : 1) || a.checkId.localeCompare(b.checkId))

  return {
    id: meta.id,
    url: meta.url,
    finalUrl: meta.finalUrl,
    score,
    grade: gradeOf(score),
    checksVersion: CHECKS_VERSION,
    summary,
    checks: results.map((r) => ({ ...r, advice: adviceText(r) })),
    advice,
    timings: meta.timings,
    ...(meta.probes ? { probes: meta.probes } : {}),
    createdAt: meta.createdAt,
  }
}
