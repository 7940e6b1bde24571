// The difference between two finished scans or audits of one app: findings keyed by fingerprint (new in
// head, fixed since base, in both), the checks whose outcome changed, the score and grade moves, and one
// sentence an agent can quote. Pure: both sides arrive as report models.
import { byImpact } from '../../shared/report/ranking.ts'
import type { CheckStatus, Severity } from '../../shared/checks/types.ts'
import { penaltyOf } from '../../shared/report/scoring.ts'
import type { ModelFinding, ReportModel } from '../../shared/report/export/model.ts'

/** Findings listed per list; `counts` has the totals. */
export const COMPARE_LIST_LIMIT = 50
/** New findings named in the summary sentence. */
const NAMED_IN_SUMMARY = 3

export interface ComparedFinding {
  fingerprint: string
  checkId: string
  title: string
  severity: Severity
  status: 'fail' | 'warn'
  impact: number
}

export interface CheckChange {
  checkId: string
  title: string
  /** null when the check was not part of that side (another checks version). */
  from: CheckStatus | null
  to: CheckStatus | null
}

const side = (m: ReportModel) => ({ id: m.id, kind: m.kind, score: m.score, grade: m.grade, createdAt: m.createdAt })

const item = (f: ModelFinding): ComparedFinding => ({
  fingerprint: f.fingerprint,
  checkId: f.checkId,
  title: f.title,
  severity: f.severity,
  status: f.status,
  impact: f.impact,
})

/** Impact order (the one in shared/report/ranking.ts), the fingerprint last so the lists never reorder between calls. */
const impactOrder = (a: ModelFinding, b: ModelFinding) => byImpact(a, b) || a.fingerprint.localeCompare(b.fingerprint)

const signed = (n: number) => (n > 0 ? `+${n}` : n < 0 ? `${n}` : '±0')

export function compareReports(base: ReportModel, head: ReportModel, limit = COMPARE_LIST_LIMIT) {
  const inBase = new Set(base.findings.map((f) => f.fingerprint))
  const inHead = new Set(head.findings.map((f) => f.fingerprint))
  const added = head.findings.filter((f) => !inBase.has(f.fingerprint)).sort(impactOrder)
  const fixed = base.findings.filter((f) => !inHead.has(f.fingerprint)).sort(impactOrder)
  const unchanged = head.findings.filter((f) => inBase.has(f.fingerprint)).sort(impactOrder)

  const baseChecks = new Map(base.checks.map((c) => [c.id, c]))
  const headChecks = new Map(head.checks.map((c) => [c.id, c]))
  const ids = [...new Set([...head.checks.map((c) => c.id), ...base.checks.map((c) => c.id)])]
  const checksChanged = ids
    .map((id) => {
      const b = baseChecks.get(id)
      const h = headChecks.get(id)
      const from = b?.status ?? null
      const to = h?.status ?? null
      const impact = Math.max(from ? penaltyOf({ id, status: from }) : 0, to ? penaltyOf({ id, status: to }) : 0)
      return { checkId: id, title: (h ?? b)!.title, from, to, impact, severity: (h ?? b)!.severity }
    })
    .filter((c) => c.from !== c.to)
    .sort((a, b) => byImpact(a, b) || a.checkId.localeCompare(b.checkId))
    .map(({ checkId, title, from, to }): CheckChange => ({ checkId, title, from, to }))

  const scoreDelta = head.score - base.score
  const grades = base.grade === head.grade ? head.grade : `${base.grade} -> ${head.grade}`
  const named = added.slice(0, NAMED_IN_SUMMARY).map((f) => `${f.checkId}: ${f.title}`)
  const more = added.length > NAMED_IN_SUMMARY ? `, and ${added.length - NAMED_IN_SUMMARY} more` : ''
  const newPart = added.length > 0 ? `${added.length} new (${named.join('; ')}${more})` : '0 new'
  let summary = `Score ${base.score} -> ${head.score} (${signed(scoreDelta)}, ${grades}): ${fixed.length} fixed, ${newPart}, ${unchanged.length} unchanged.`
  if (base.checksVersion !== head.checksVersion) {
    summary += ` The checks changed between them (${base.checksVersion} -> ${head.checksVersion}), so some differences may come from the checks, not the app.`
  }

  return {
    base: side(base),
    head: side(head),
    scoreDelta,
    gradeChange: { from: base.grade, to: head.grade },
    findings: {
      new: added.slice(0, limit).map(item),
      fixed: fixed.slice(0, limit).map(item),
      unchanged: unchanged.slice(0, limit).map(item),
    },
    counts: { new: added.length, fixed: fixed.length, unchanged: unchanged.length },
    checksChanged,
    summary,
  }
}
