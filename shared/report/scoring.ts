// The one scoring table. Observatory-like: a report starts at 100 and each failed or warned check takes
// its penalty off; grades go in 5-point steps. Checks never carry weights themselves.

import type { CheckId } from '../checks/registry.ts'
import type { CheckStatus } from '../checks/types.ts'

export interface Penalty {
  fail: number
  warn: number
}

/** Penalty per check id. Every registered check has a row: a check without one does not compile. */
export const SCORING: Readonly<Record<CheckId, Penalty>> = {
  'https-redirect': { fail: 20, warn: 5 },
  hsts: { fail: 20, warn: 10 },
  csp: { fail: 25, warn: 5 },
  'frame-protection': { fail: 20, warn: 5 },
  'x-content-type-options': { fail: 5, warn: 2 },
  'referrer-policy': { fail: 5, warn: 2 },
  'cookie-secure': { fail: 40, warn: 10 },
  'cookie-httponly': { fail: 30, warn: 10 },
  'cookie-samesite': { fail: 10, warn: 5 },
  'mixed-content': { fail: 25, warn: 10 },
  'version-disclosure': { fail: 5, warn: 2 },
  'exposed-env-file': { fail: 50, warn: 20 },
  'exposed-git-config': { fail: 40, warn: 15 },
  'js-secrets': { fail: 50, warn: 10 },
  'tls-certificate': { fail: 50, warn: 10 },
  'tls-protocol': { fail: 20, warn: 0 },
  'permissions-policy': { fail: 2, warn: 2 },
  'cross-origin-isolation': { fail: 0, warn: 0 },
  'cors-credentialed-reflection': { fail: 50, warn: 10 },
  'cors-wildcard-api': { fail: 5, warn: 2 },
  'subresource-integrity': { fail: 10, warn: 5 },
  'exposed-source-maps': { fail: 10, warn: 5 },
  'exposed-agent-instructions': { fail: 10, warn: 5 },
  'exposed-package-manifest': { fail: 10, warn: 5 },
  'exposed-framework-config': { fail: 10, warn: 5 },
  'exposed-backup-files': { fail: 40, warn: 10 },
  'exposed-log-files': { fail: 20, warn: 10 },
  'exposed-metadata-files': { fail: 10, warn: 5 },
  'exposed-infra-files': { fail: 30, warn: 10 },
  'server-info-page': { fail: 15, warn: 5 },
  'web-app-exposure': { fail: 15, warn: 5 },
  'directory-listing': { fail: 10, warn: 5 },
  'debug-error-page': { fail: 20, warn: 10 },
  'api-data-exposure': { fail: 40, warn: 10 },
  'exposed-api-docs': { fail: 10, warn: 5 },
  'password-form': { fail: 30, warn: 10 },
  'page-secrets': { fail: 40, warn: 10 },
  'vulnerable-js-library': { fail: 20, warn: 10 },
  'end-of-life-software': { fail: 10, warn: 5 },
  'seo-title': { fail: 3, warn: 1 },
  'seo-meta-description': { fail: 2, warn: 2 },
  'seo-lang': { fail: 2, warn: 2 },
  'seo-viewport': { fail: 3, warn: 3 },
  'seo-indexable': { fail: 3, warn: 3 },
  'seo-canonical': { fail: 2, warn: 2 },
  'perf-page-weight': { fail: 5, warn: 2 },
  'perf-request-count': { fail: 5, warn: 2 },
  'perf-compression': { fail: 3, warn: 3 },
  'perf-caching': { fail: 2, warn: 2 },
  'perf-timing': { fail: 2, warn: 2 },
  accessibility: { fail: 10, warn: 3 },
  'third-party-requests': { fail: 0, warn: 0 },
  'third-party-cookies': { fail: 5, warn: 5 },
}

export type Grade = 'A+' | 'A' | 'A-' | 'B+' | 'B' | 'B-' | 'C+' | 'C' | 'C-' | 'D+' | 'D' | 'D-' | 'F'

/** Lowest score for each grade, best first (the Observatory's steps). */
export const GRADES: ReadonlyArray<readonly [number, Grade]> = [
  [100, 'A+'],
  [90, 'A'],
  [85, 'A-'],
  [80, 'B+'],
  [70, 'B'],
  [65, 'B-'],
  [60, 'C+'],
  [50, 'C'],
  [45, 'C-'],
  [40, 'D+'],
  [30, 'D'],
  [25, 'D-'],
  [0, 'F'],
]

/** The row of a check id read from outside (a stored report, a tool's input); undefined for an unknown id. */
export function penaltyRow(id: string): Penalty | undefined {
  return Object.hasOwn(SCORING, id) ? SCORING[id as CheckId] : undefined
}

/** What a result costs: its fail or warn penalty; nothing for pass, info, skipped, error or an unknown id. */
export function penaltyOf(result: { id: string; status: CheckStatus }): number {
  const row = penaltyRow(result.id)
  if (!row) return 0
  if (result.status === 'fail') return row.fail
  if (result.status === 'warn') return row.warn
  return 0
}

/** 100 minus every penalty, never below 0. */
export function scoreOf(results: ReadonlyArray<{ id: string; status: CheckStatus }>): number {
  const total = results.reduce((sum, r) => sum + penaltyOf(r), 0)
  return Math.max(0, 100 - total)
}

export function gradeOf(score: number): Grade {
  return GRADES.find(([min]) => score >= min)?.[1] ?? 'F'
}
