// Runs every registered check over one scan's artifacts and turns the results into the report.

import { CHECKS, CHECKS_VERSION, getCheck, type AnyCheck } from './checks/registry.ts'
import type { ArtifactName, Artifacts, Severity } from './checks/types.ts'
import type { Advice, CheckResult, Report, ReportSummary } from './report-schema.ts'
import { gradeOf, penaltyOf, scoreOf } from './scoring.ts'

export type { Advice, CheckResult, Report } from './report-schema.ts'

const SEVERITY_RANK: Record<Severity, number> = { critical: 4, high: 3, medium: 2, low: 1, info: 0 }

/** Runs one check on only the artifacts it declares. Never throws: a crash becomes status 'error'. */
export function runCheck(check: AnyCheck, artifacts: Artifacts): CheckResult {
  const base = { id: check.id, title: check.title, category: check.category }
  const missing = check.requires.filter((name) => artifacts[name] === null || artifacts[name] === undefined)
  if (missing.length > 0) {
    return {
      ...base,
      severity: check.severity,
      status: 'skipped',
      summary: `Not applicable: ${missing.join(', ')} could not be collected.`,
      evidence: { missing },
    }
  }
  const names: ArtifactName[] = [...check.requires, ...(check.optional ?? [])]
  const input = Object.fromEntries(names.map((name) => [name, artifacts[name] ?? null])) as unknown as Artifacts
  try {
    const outcome = check.run(input)
    return {
      ...base,
      severity: outcome.severity ?? check.severity,
      status: outcome.status,
      summary: outcome.summary,
      evidence: outcome.evidence,
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return {
      ...base,
      severity: check.severity,
      status: 'error',
      summary: `The check could not run: ${message}`,
      evidence: { error: message },
    }
  }
}

/** Every registered check, in registry order. */
export function runChecks(artifacts: Artifacts): CheckResult[] {
  return CHECKS.map((check) => runCheck(check, artifacts))
}

export interface ReportMeta {
  id: string
  url: string
  finalUrl: string
  /** ISO 8601. */
  createdAt: string
  /** Milliseconds per phase (gather, browser, checks, ...). */
  timings: Record<string, number>
}

const isFinding = (r: CheckResult): r is CheckResult & { status: 'fail' | 'warn' } => r.status === 'fail' || r.status === 'warn'

function adviceText(r: CheckResult): string | null {
  return isFinding(r) ? (getCheck(r.id)?.fix.generic ?? null) : null
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
    .sort(
      (a, b) =>
        b.impact - a.impact ||
        SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
        (a.status === b.status ? 0 : a.status === 'fail' ? -1 : 1) ||
        a.checkId.localeCompare(b.checkId),
    )

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
    createdAt: meta.createdAt,
  }
}
