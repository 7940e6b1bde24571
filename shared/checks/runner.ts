// Runs the registered checks over one page's artifacts. Each check sees only the artifacts it declares, and
// a crash in one check becomes its own 'error' result, never the whole report's.
import type { CheckResult } from '../report/schema.ts'
import { CHECKS, getCheck, type AnyCheck } from './registry.ts'
import type { ArtifactName, Artifacts, CheckInput, CheckMeta, CheckStatus } from './types.ts'

/**
 * The check's title for an outcome: the problem when it fails or warns (as its evidence shows it, when the
 * check says more than its fixed failTitle), else what it checks.
 */
export function titleFor(check: Pick<CheckMeta, 'title' | 'failTitle' | 'failTitleOf'>, status: CheckStatus, evidence?: unknown): string {
  if (status !== 'fail' && status !== 'warn') return check.title
  const fromEvidence = evidence && typeof evidence === 'object' ? check.failTitleOf?.(evidence as Record<string, unknown>) : null
  return fromEvidence ?? check.failTitle ?? check.title
}

/** The title to show for a stored result: its check's title for that status, or the stored one for a check no longer registered. */
export function shownTitle(id: string, status: CheckStatus, stored: string, evidence?: unknown): string {
  const check = getCheck(id)
  return check ? titleFor(check, status, evidence) : stored
}

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
  // Checked above: every required artifact is present, which is what run's input type promises.
  const input = Object.fromEntries(names.map((name) => [name, artifacts[name] ?? null])) as CheckInput<ArtifactName, ArtifactName>
  try {
    const outcome = check.run(input)
    return {
      ...base,
      title: titleFor(check, outcome.status, outcome.evidence),
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
