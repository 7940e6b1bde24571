// The advisory table's version matcher: enough of npm's range grammar for "<3.5.0", ">=1.2.0 <3.5.0" and
// "<3.4.1 || >=4.0.0 <4.3.1" (no caret, tilde or x-ranges), with precedence from Bun.semver.order.
// Bun.semver.satisfies is not used for the ranges: it follows npm in leaving a pre-release out of a range
// unless a bound names a pre-release of the same version, so 3.5.0-rc.1 would not match "<3.5.0", while a
// pre-release of a vulnerable release is vulnerable too; and it refuses the partial versions ("2.0") that
// libraries' banners carry. Both cases are pinned in test/shared/checks/util/semver.test.ts.

export interface Version {
  major: number
  minor: number
  patch: number
  /** Dot-separated pre-release identifiers ("rc.1" -> ["rc", "1"]); empty for a release. */
  prerelease: string[]
}

const VERSION = /^v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$/

/** Reads "3.4.1", "v1.13.0-2", "2.0" (missing parts are 0). Null when it is not a version. */
export function parseVersion(text: string): Version | null {
  const m = VERSION.exec(text.trim())
  if (!m) return null
  return {
    major: Number(m[1]),
    minor: m[2] === undefined ? 0 : Number(m[2]),
    patch: m[3] === undefined ? 0 : Number(m[3]),
    prerelease: m[4] ? m[4].split('.') : [],
  }
}

/** The canonical text of a version (partial versions filled in, no "v", no build tag), as Bun.semver reads it. */
const canonical = (v: Version) => `${v.major}.${v.minor}.${v.patch}${v.prerelease.length ? `-${v.prerelease.join('.')}` : ''}`

/** Semver precedence (Bun.semver.order): -1, 0 or 1. A pre-release sorts before its release (3.5.0-rc.1 < 3.5.0). */
export function compareVersions(a: Version, b: Version): number {
  return Bun.semver.order(canonical(a), canonical(b))
}

type Operator = '<' | '<=' | '>' | '>=' | '='

interface Comparator {
  op: Operator
  version: Version
}

const COMPARATOR = /^(<=|>=|<|>|=)?\s*(\S+)$/
const parsedRanges = new Map<string, Comparator[][]>()

/** Parses a range; throws on anything it does not understand, so a typo in the table fails loudly. */
export function parseRange(range: string): Comparator[][] {
  const cached = parsedRanges.get(range)
  if (cached) return cached
  const sets = range.split('||').map((set) => {
    const parts = set
      .trim()
      .replace(/(<=|>=|<|>|=)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean)
    if (parts.length === 0) throw new Error(`empty range in "${range}"`)
    return parts.map((part): Comparator => {
      const m = COMPARATOR.exec(part)
      const version = m ? parseVersion(m[2]!) : null
      if (!m || !version) throw new Error(`bad comparator "${part}" in "${range}"`)
      return { op: (m[1] ?? '=') as Operator, version }
    })
  })
  parsedRanges.set(range, sets)
  return sets
}

function test(version: Version, { op, version: bound }: Comparator): boolean {
  const c = compareVersions(version, bound)
  switch (op) {
    case '<':
      return c < 0
    case '<=':
      return c <= 0
    case '>':
      return c > 0
    case '>=':
      return c >= 0
    case '=':
      return c === 0
  }
}

/** Whether a version falls in a range (any `||` alternative whose comparators all hold). */
export function satisfies(version: string | Version, range: string): boolean {
  const v = typeof version === 'string' ? parseVersion(version) : version
  if (!v) return false
  return parseRange(range).some((set) => set.every((c) => test(v, c)))
}
