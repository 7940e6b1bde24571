// The build gate, pure: findings taken from a scan report or an audit result, the thresholds judged on
// them, and the comparison with a baseline file. No I/O, so every rule here is tested without a service.
import { createHash } from 'node:crypto'
import type { AuditResult } from '../shared/report/audit-report.ts'
import type { Report } from '../shared/report/schema.ts'

import type { Severity } from '../shared/checks/types.ts'
import { SEVERITY_RANK } from '../shared/report/ranking.ts'

export type { Severity }
/** The levels --fail-on accepts: an info finding never fails a build. */
export const FAIL_ON_LEVELS = ['critical', 'high', 'medium', 'low'] as const
export type FailOn = (typeof FAIL_ON_LEVELS)[number]

export const atOrAbove = (s: Severity, level: FailOn) => SEVERITY_RANK[s] >= SEVERITY_RANK[level]

/** A finding as the gate sees it: a failed or warned check (the service's `advice`), one per fingerprint. */
export interface Finding {
  fingerprint: string
  checkId: string
  title: string
  severity: Severity
  status: 'fail' | 'warn'
}

/**
 * checkId + a hash of the finding's one-line summary, with the target's own origin and every number taken
 * out: a scan on another port, or a cookie count that went from 3 to 4, is the same finding; another leaked
 * secret or another exposed file changes the summary and so is a new one. Computed here, never by the
 * service, so a baseline file works on every plan and across scans and audits alike.
 */
export function fingerprintOf(checkId: string, summary: string, targetUrl: string): string {
  let text = summary
  const origin = safeOrigin(targetUrl)
  if (origin) text = text.split(origin).join('<origin>')
  text = text.replace(/\d+/g, '#').replace(/\s+/g, ' ').trim()
  return `${checkId}:${createHash('sha256').update(text).digest('hex').slice(0, 16)}`
}

const safeOrigin = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

const isFinding = (status: string): status is 'fail' | 'warn' => status === 'fail' || status === 'warn'

/** A scan's findings: its checks that failed or warned. */
export function findingsOfReport(report: Pick<Report, 'url' | 'checks'>): Finding[] {
  return dedupe(
    report.checks
      .filter((c) => isFinding(c.status))
      .map((c) => ({
        fingerprint: fingerprintOf(c.id, c.summary, report.url),
        checkId: c.id,
        title: c.title,
        severity: c.severity,
        status: c.status as 'fail' | 'warn',
      })),
  )
}

/** An audit's findings, already merged across pages by the service; fingerprinted the same way as a scan's. */
export function findingsOfAudit(result: Pick<AuditResult, 'url' | 'findings'>): Finding[] {
  return dedupe(
    result.findings.map((f) => ({
      fingerprint: fingerprintOf(f.checkId, f.summary, result.url),
      checkId: f.checkId,
      title: f.title,
      severity: f.severity,
      status: f.status,
    })),
  )
}

function dedupe(list: Finding[]): Finding[] {
  const seen = new Map<string, Finding>()
  for (const f of list) if (!seen.has(f.fingerprint)) seen.set(f.fingerprint, f)
  return [...seen.values()].sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.checkId.localeCompare(b.checkId))
}

export interface Thresholds {
  minScore?: number
  failOn?: FailOn
}

export interface Verdict {
  passed: boolean
  /** One sentence per threshold that failed. */
  failures: string[]
  /** The findings --fail-on counted (only new ones when there is a baseline). */
  counted: Finding[]
}

/**
 * Judges the thresholds. The score is always absolute; findings are all of them, or with a baseline only
 * the new ones. A baseline without --fail-on fails on any new finding of low severity or above: comparing
 * with a baseline is asking "did this change add a problem?".
 */
export function judge(score: number, findings: Finding[], thresholds: Thresholds, newFindings?: Finding[]): Verdict {
  const failures: string[] = []
  if (thresholds.minScore !== undefined && score < thresholds.minScore) {
    failures.push(`score ${score} is below --min-score ${thresholds.minScore}`)
  }
  const failOn = thresholds.failOn ?? (newFindings ? 'low' : undefined)
  let counted: Finding[] = []
  if (failOn) {
    counted = (newFindings ?? findings).filter((f) => atOrAbove(f.severity, failOn))
    if (counted.length > 0) {
      const what = newFindings ? 'new finding' : 'finding'
      const list = counted.map((f) => `${f.checkId} (${f.severity})`).join(', ')
      failures.push(`${counted.length} ${what}${counted.length === 1 ? '' : 's'} at or above ${failOn}: ${list}`)
    }
  }
  return { passed: failures.length === 0, failures, counted }
}

/**
 * Said when no threshold could fail the build and critical findings were found: a job that runs without
 * --min-score, --fail-on or a baseline passes whatever it finds, and its log should say so.
 */
export function unguardedNotice(findings: Finding[], thresholds: Thresholds, baseline: boolean): string | undefined {
  if (thresholds.minScore !== undefined || thresholds.failOn || baseline) return undefined
  const criticals = findings.filter((f) => f.severity === 'critical')
  if (criticals.length === 0) return undefined
  const list = criticals.map((f) => f.checkId).join(', ')
  return (
    `no threshold was set, so ${criticals.length} critical finding${criticals.length === 1 ? '' : 's'} (${list}) ` +
    'did not fail the build: add --fail-on critical (the action: fail-on: critical) or --min-score N to gate on them'
  )
}

/** What --save-baseline writes and --baseline FILE reads. */
export interface BaselineFile {
  appaudit: 'baseline'
  version: 1
  kind: 'scan' | 'audit'
  id: string
  url: string
  score: number
  createdAt: string
  findings: Array<Pick<Finding, 'fingerprint' | 'checkId' | 'severity' | 'status' | 'title'>>
}

export function baselineOf(kind: 'scan' | 'audit', id: string, url: string, score: number, findings: Finding[], now: Date): BaselineFile {
  return {
    appaudit: 'baseline',
    version: 1,
    kind,
    id,
    url,
    score,
    createdAt: now.toISOString(),
    findings: findings.map(({ fingerprint, checkId, severity, status, title }) => ({ fingerprint, checkId, severity, status, title })),
  }
}

/** Reads a baseline file's text; a string says what is wrong with it. */
export function parseBaseline(text: string): BaselineFile | string {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return 'it is not JSON'
  }
  const b = v as Partial<BaselineFile>
  if (!b || typeof b !== 'object' || b.appaudit !== 'baseline') return 'it is not a baseline written by appaudit --save-baseline'
  if (b.version !== 1) return `its version ${String(b.version)} is not one this appaudit reads (1)`
  if (typeof b.id !== 'string' || typeof b.url !== 'string' || !Array.isArray(b.findings)) return 'it lacks id, url or findings'
  for (const f of b.findings) {
    if (!f || typeof f.fingerprint !== 'string' || typeof f.checkId !== 'string' || !(f.severity in SEVERITY_RANK)) {
      return 'a finding lacks its fingerprint, checkId or severity'
    }
  }
  return b as BaselineFile
}

export interface Comparison {
  new: Finding[]
  fixed: BaselineFile['findings']
  unchanged: Finding[]
}

/** New, fixed and unchanged findings by fingerprint, as compare_scans answers for two stored scans. */
export function compareWithBaseline(base: BaselineFile, head: Finding[]): Comparison {
  const before = new Set(base.findings.map((f) => f.fingerprint))
  const after = new Set(head.map((f) => f.fingerprint))
  return {
    new: head.filter((f) => !before.has(f.fingerprint)),
    fixed: base.findings.filter((f) => !after.has(f.fingerprint)),
    unchanged: head.filter((f) => before.has(f.fingerprint)),
  }
}
