// The agent-sized answers of scan_app, get_scan and get_fix_brief. A whole report of one careless page is
// about 40 KB of JSON, and an MCP client hands the model every byte of it (Claude Code saves an answer over
// 50,000 characters to a file and refuses one over 25,000 tokens). The compact report keeps what an agent
// acts on: every failing and warning check, highest impact first, with its impact, its advice and its evidence
// cut to what proves it; every other check with its status and a one-line evidence. `detail: "full"` returns
// the whole report.
import { type Static, Type } from '@sinclair/typebox'
import type { Report, ReportCheck } from '../../../shared/report/schema.ts'
import { REPORT_HEAD, SeveritySchema } from '../../../shared/report/schema.ts'

export const Detail = Type.Optional(
  Type.Union([Type.Literal('compact'), Type.Literal('full')], {
    description: 'Default compact.',
  }),
)

/** Bounds of a cut value: longest string, most items of a list, most fields of an object, deepest nesting. */
interface Cut {
  chars: number
  items: number
  fields: number
  depth: number
}

const CUTS: Cut[] = [
  { chars: 100, items: 3, fields: 8, depth: 3 },
  { chars: 60, items: 1, fields: 6, depth: 3 },
  { chars: 40, items: 1, fields: 3, depth: 3 },
  { chars: 32, items: 1, fields: 2, depth: 2 },
]

/** Fields that say where something was found. */
const WHERE = /url|path|file|script|source/i

/** A string cut to `n` characters, with a marker saying how much was cut. */
export function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}… [+${s.length - n} chars]`
}

function cutValue(v: unknown, cut: Cut, depth: number): unknown {
  if (typeof v === 'string') return clip(v, cut.chars)
  if (Array.isArray(v)) {
    if (depth >= cut.depth) return `[${v.length} items]`
    const kept = v.slice(0, cut.items).map((x) => cutValue(x, cut, depth + 1))
    return v.length > cut.items ? [...kept, `… +${v.length - cut.items} more`] : kept
  }
  if (typeof v === 'object' && v !== null) {
    const all = Object.entries(v)
    if (depth >= cut.depth) return `{${all.length} fields}`
    // Where the finding is (a URL, a path, a file) is kept first when fields must go.
    const entries = all.length > cut.fields ? [...all.filter(([k]) => WHERE.test(k)), ...all.filter(([k]) => !WHERE.test(k))] : all
    const out: Record<string, unknown> = {}
    for (const [k, x] of entries.slice(0, cut.fields)) out[k] = cutValue(x, cut, depth + 1)
    if (entries.length > cut.fields) out['…'] = `+${entries.length - cut.fields} more fields`
    return out
  }
  return v
}

/**
 * A check's evidence cut to fit `bytes` of JSON: top-level fields that name the scanned page (`page`) left
 * out, strings shortened, lists and objects trimmed to their first
 * entries, each cut marked with how much it left out; tighter cuts until it fits.
 */
export function cutEvidence(evidence: Record<string, unknown>, bytes: number, page: readonly string[] = []): Record<string, unknown> {
  if (JSON.stringify(evidence).length <= bytes) return evidence
  // A top-level field that only names the scanned page itself says nothing the report does not: it goes first.
  const kept = Object.fromEntries(Object.entries(evidence).filter(([, v]) => !(typeof v === 'string' && page.includes(v))))
  let out: Record<string, unknown> = kept
  if (JSON.stringify(kept).length <= bytes) return kept
  for (const cut of CUTS) {
    out = cutValue(kept, cut, 0) as Record<string, unknown>
    if (JSON.stringify(out).length <= bytes) return out
  }
  return out
}

/**
 * Evidence of a failing or warning check, in bytes of JSON at most (the tightest cut may stay a little over):
 * the findings that cost the most get room for their whole proof, the rest a shorter cut.
 */
const FINDING_EVIDENCE_BYTES = { top: 360, rest: 150 }
/** How many findings, highest impact first, get the larger room. */
const TOP_FINDINGS = 3
/** A passing (or info, skipped, error) check's one line. */
const LINE_CHARS = 42
/** The line cut with a bare ellipsis: a count of what was cut costs more bytes than it tells, 50 times over. */
const oneLine = (s: string) => (s.length <= LINE_CHARS ? s : `${s.slice(0, LINE_CHARS - 1)}…`)
const ADVICE_CHARS = 64

const FINDING = ['fail', 'warn'] as const
const isFinding = (c: ReportCheck) => (FINDING as readonly string[]).includes(c.status)

export const CompactFindingSchema = Type.Object(
  {
    id: Type.String(),
    severity: SeveritySchema,
    status: Type.Union([Type.Literal('fail'), Type.Literal('warn')]),
    impact: Type.Number({ description: 'Score points this finding costs' }),
    summary: Type.String({ description: 'One sentence on what was found' }),
    evidence: Type.Record(Type.String(), Type.Unknown(), { description: 'What proves it, cut (each cut says how much it left out)' }),
    advice: Type.String({ description: 'How to fix, cut; get_fix_brief has the whole fix for the platform' }),
  },
  { additionalProperties: false },
)

export const CompactOtherSchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Union([Type.Literal('pass'), Type.Literal('info'), Type.Literal('skipped'), Type.Literal('error')]),
    evidence: Type.Object({ line: Type.String({ description: 'What the check found, in one line' }) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
)

export const CompactReportSchema = Type.Object(
  {
    detail: Type.Literal('compact'),
    full: Type.String({ description: 'How to get the whole report' }),
    ...REPORT_HEAD,
    checks: Type.Array(Type.Union([CompactFindingSchema, CompactOtherSchema]), {
      description: 'Failing and warning checks first, highest impact first (the advice by impact), then the others',
    }),
    createdAt: Type.String({ description: 'ISO 8601 date-time' }),
  },
  { additionalProperties: false },
)

export type CompactReport = Static<typeof CompactReportSchema>

/** Statuses beside fail and warn, as the compact schema names them. */
type OtherStatus = Static<typeof CompactOtherSchema>['status']

/** The compact form of a report; `full` names the call that returns the whole one. */
export function compactReport(report: Report, full: string): CompactReport {
  const advice = new Map(report.advice.map((a, i) => [a.checkId, { rank: i, impact: a.impact, text: a.advice }]))
  const findings = report.checks
    .filter(isFinding)
    .sort((a, b) => (advice.get(a.id)?.rank ?? Number.MAX_SAFE_INTEGER) - (advice.get(b.id)?.rank ?? Number.MAX_SAFE_INTEGER))
  const pages = [report.url, report.finalUrl]
  return {
    detail: 'compact',
    full,
    id: report.id,
    url: report.url,
    finalUrl: report.finalUrl,
    score: report.score,
    grade: report.grade,
    checksVersion: report.checksVersion,
    summary: report.summary,
    checks: [
      ...findings.map((c, i) => ({
        id: c.id,
        severity: c.severity,
        status: c.status as 'fail' | 'warn',
        impact: advice.get(c.id)?.impact ?? 0,
        summary: c.summary,
        evidence: cutEvidence(c.evidence, i < TOP_FINDINGS ? FINDING_EVIDENCE_BYTES.top : FINDING_EVIDENCE_BYTES.rest, pages),
        advice: clip(advice.get(c.id)?.text ?? c.advice ?? '', ADVICE_CHARS),
      })),
      // The check's one sentence on what it found stands as its evidence line.
      ...report.checks
        .filter((c) => !isFinding(c))
        .map((c) => ({ id: c.id, status: c.status as OtherStatus, evidence: { line: oneLine(c.summary) } })),
    ],
    createdAt: report.createdAt,
  }
}

/** A fix brief's items beyond this many bytes are listed by id, impact and problem only. */
const FIX_BRIEF_ITEMS_BYTES = 11 * 1024
const BRIEF_EVIDENCE_BYTES = 320

/**
 * A fix brief cut to an agent's size: each item's evidence cut, and once the items pass 11 KB the rest
 * listed as {checkId, title, severity, status, impact, problem, more} (more: the call for its whole item; for an
 * audit also findings and pageCount).
 */
export function compactFixBrief<T extends { items: Array<Record<string, unknown>> }>(brief: T, call: (checkId: string) => string) {
  let used = 0
  const items = brief.items.map((item) => {
    const evidence = item.evidence
    const cut =
      typeof evidence === 'object' && evidence !== null && !Array.isArray(evidence)
        ? { ...item, evidence: cutEvidence(evidence as Record<string, unknown>, BRIEF_EVIDENCE_BYTES) }
        : item
    const size = JSON.stringify(cut).length
    if (used + size <= FIX_BRIEF_ITEMS_BYTES) {
      used += size
      return cut
    }
    const { checkId, title, severity, status, impact, problem, findings, pageCount } = item
    const audit = findings === undefined ? {} : { findings, pageCount }
    return { checkId, title, severity, status, impact, problem, ...audit, more: call(String(checkId)) }
  })
  return { ...brief, detail: 'compact' as const, items }
}

/**
 * A report as tools/list describes it: the fields an agent reads first, the rest open. The answer is the
 * compact report (CompactReportSchema, exact, tested against real answers) or with detail "full" the whole
 * one (ReportSchema); every connected client carries tools/list in its context, so it names only the head.
 */
export const ListedReport = (description: string) =>
  Type.Object(
    {
      id: Type.String(),
      url: Type.String(),
      score: Type.Integer(),
      grade: Type.String(),
      summary: Type.Unknown(),
      checks: Type.Array(Type.Unknown()),
    },
    { description },
  )
