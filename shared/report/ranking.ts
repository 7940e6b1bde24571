// The orders findings are put in, once for the whole tree: how severe a severity is, how bad an outcome
// is, what a reader looks at first, and the impact order advice and findings are sorted by.
import type { CheckStatus, Severity } from '../checks/types.ts'

/** Every severity, most severe first. */
export const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info']

/** Higher is more severe. */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { critical: 4, high: 3, medium: 2, low: 1, info: 0 }

/** Most severe first. */
export const bySeverity = (a: { severity: Severity }, b: { severity: Severity }): number =>
  SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]

/** The more severe of two severities. */
export const worseSeverity = (a: Severity, b: Severity): Severity => (SEVERITY_RANK[b] > SEVERITY_RANK[a] ? b : a)

/**
 * How bad an outcome is, to take a check's worst outcome across the pages of a site: a check that passed on
 * one page and was skipped on another passed (a pass says something, a skip nothing).
 */
export const OUTCOME_RANK: Readonly<Record<CheckStatus, number>> = { fail: 5, warn: 4, error: 3, info: 2, pass: 1, skipped: 0 }

/**
 * What a reader looks at first among checks that cost no points: a check that could not run (skipped)
 * before one that passed.
 */
export const ATTENTION_RANK: Readonly<Record<CheckStatus, number>> = { fail: 5, warn: 4, error: 3, info: 2, skipped: 1, pass: 0 }

/** Impact order: most score points lost first, then the more severe. Callers add their own last tie-breaks. */
export const byImpact = (a: { impact: number; severity: Severity }, b: { impact: number; severity: Severity }): number =>
  b.impact - a.impact || bySeverity(a, b)
