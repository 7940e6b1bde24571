// The check catalogue as the api tells it: a check's explanation (what it looks at, why, how it is
// confirmed, its penalty, its fix per platform) and the answer for an id no check has, with close ids.
import { CHECKS, CHECKS_VERSION, getCheck, type AnyCheck } from '../../shared/checks/registry.ts'
import { PLATFORMS } from '../../shared/checks/types.ts'
import { AppError } from '../../shared/errors.ts'
import { penaltyRow } from '../../shared/report/scoring.ts'

/** Edit distance between two short strings (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = row
  }
  return prev[b.length]!
}

const normalise = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s_.]+/g, '-')

/** Registered check ids close to an unknown one: a small edit distance, or one is a prefix or part of the other. */
export function suggestCheckIds(unknown: string, max = 5): string[] {
  const q = normalise(unknown)
  if (q === '') return []
  return CHECKS.map((c) => {
    const id = c.id
    const distance = editDistance(q, id)
    const close = distance <= Math.max(2, Math.floor(id.length / 3))
    const overlaps = q.length >= 3 && (id.startsWith(q) || q.startsWith(id) || id.includes(q))
    return { id, distance: overlaps ? Math.min(distance, 1) : distance, match: close || overlaps }
  })
    .filter((s) => s.match)
    .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))
    .slice(0, max)
    .map((s) => s.id)
}

/** not_found for an id no check has, with close ids and the whole list. */
export function unknownCheck(checkId: string): AppError {
  const suggestions = suggestCheckIds(checkId)
  return new AppError(
    'not_found',
    `No check "${checkId}"${suggestions.length ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?` : '.'} Check ids are the id field of a report's checks.`,
    { suggestions, checkIds: CHECKS.map((c) => c.id) },
  )
}

export function explanation(check: AnyCheck) {
  const penalty = penaltyRow(check.id) ?? { fail: 0, warn: 0 }
  const fix = Object.fromEntries(PLATFORMS.map((p) => [p, check.fix[p] ?? check.fix.generic]))
  return {
    id: check.id,
    title: check.title,
    failTitle: check.failTitle ?? check.title,
    category: check.category,
    severity: check.severity,
    description: check.description,
    why: check.why,
    confirmation: check.confirmation,
    fix,
    scoring: {
      failPenalty: penalty.fail,
      warnPenalty: penalty.warn,
      note: `A report starts at 100: a fail of this check takes ${penalty.fail} points off, a warn ${penalty.warn}; pass, info, skipped and error take nothing.`,
    },
    checksVersion: CHECKS_VERSION,
  }
}

/** The catalogue for tools: plain values in and out. */
export class CheckCatalog {
  /** A check's explanation; not_found with suggestions for an unknown id. */
  explain(checkId: string) {
    const check = getCheck(checkId)
    if (!check) throw unknownCheck(checkId)
    return explanation(check)
  }

  isKnown(checkId: string): boolean {
    return getCheck(checkId) !== undefined
  }

  unknownCheck(checkId: string): AppError {
    return unknownCheck(checkId)
  }
}
