// The RetireJS repository's content extractors and advisories (shared/checks/data/retire-repository.json,
// refreshed by scripts/update-advisories.ts) for the libraries the hand-written detectors do not cover.
// Each extractor runs only on scripts that hold its longest literal run, so a scan of megabytes of bundles
// runs few of them.

import repository from '../data/retire-repository.json' with { type: 'json' }
import type { Advisory, LibraryEntry } from '../data/vulnerable-libraries.ts'
import type { ScriptArtifact, Severity } from '../types.ts'
import { clip } from './http.ts'
import { parseVersion } from './semver.ts'

/** What §§version§§ stands for, as RetireJS reads it. */
const VERSION = '[0-9][0-9.a-z_\\-]+'
/** Characters of a script an extractor reads at most: bounds the work of patterns with .* on minified lines. */
const MAX_SCAN = 4 * 1024 * 1024

export const REPOSITORY_DATA = `${repository.source}, as of ${repository.updated}${repository.commit ? ` (commit ${repository.commit.slice(0, 7)})` : ''}`
export const REPOSITORY_UPDATED = repository.updated

/** Libraries no longer maintained at all: reported as end of life whatever their version. */
const DISCONTINUED: Record<string, string> = {
  YUI: 'YUI was discontinued by Yahoo in 2014 and gets no fixes.',
  mootools: 'MooTools has had no release since 2016 and gets no fixes.',
  prototypejs: 'Prototype has had no release since 2015 and gets no fixes.',
  'jquery-mobile': 'jQuery Mobile was deprecated in 2021 and gets no fixes.',
  swfobject: 'SWFObject embeds Flash, which browsers removed in 2021.',
  sessvars: 'sessvars.js has been unmaintained since 2008.',
  easyXDM: 'easyXDM has been unmaintained since 2016.',
}

interface Extractor {
  library: string
  re: RegExp
  gate: string
}

/** Literal runs of a regex source: escaped punctuation counts as literal; classes, groups and quantified characters end a run. */
export function literalRuns(source: string): string[] {
  const runs: string[] = []
  let cur = ''
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (inClass) {
      if (c === '\\') i++
      else if (c === ']') inClass = false
      continue
    }
    if (c === '\\') {
      const next = source[i + 1] ?? ''
      i++
      if (/[^A-Za-z0-9]/.test(next)) cur += next
      else {
        runs.push(cur)
        cur = ''
      }
      continue
    }
    if (c === '*' || c === '?' || c === '{') {
      // The quantified character may be absent or repeated: it belongs to no literal run.
      runs.push(cur.slice(0, -1))
      cur = ''
      if (c === '{') while (i < source.length && source[i] !== '}') i++
      continue
    }
    if ('[()|+.^$'.includes(c)) {
      runs.push(cur)
      cur = ''
      if (c === '[') inClass = true
      continue
    }
    cur += c
  }
  runs.push(cur)
  return runs.filter(Boolean)
}

/**
 * The pattern with its unbounded "anything" runs bounded: RetireJS writes them for files of a few hundred
 * kilobytes, and on megabytes of one minified line `(?:.|\r|\n)+` or `.*` backtracks for seconds. A match
 * whose parts lie farther apart than the bound is lost; the libraries' banners and constants are close.
 */
export function bounded(pattern: string): string {
  return pattern
    .replaceAll('(?:.|\r|\n)+', '[\\s\\S]{1,5000}?')
    .replaceAll('(?:.|\n|\r)+', '[\\s\\S]{1,5000}?')
    .replace(/(?<!\\)\.\*(\??)/g, '.{0,2000}$1')
    .replace(/(?<!\\)\.\+(\??)/g, '.{1,2000}$1')
    .replace(/\[\\s\\S\]\*(\??)/g, '[\\s\\S]{0,5000}$1')
    .replace(/\[\\s\\S\]\+(\??)/g, '[\\s\\S]{1,5000}$1')
}

const EXTRACTORS: Extractor[] = Object.entries(repository.libraries).flatMap(([library, lib]) =>
  lib.filecontent.map((pattern) => {
    const source = bounded(pattern).replaceAll('§§version§§', VERSION)
    const gate = literalRuns(pattern.replaceAll('§§version§§', '()')).sort((a, b) => b.length - a.length)[0] ?? ''
    return { library, re: new RegExp(source), gate }
  }),
)

/** "1.2.3", "1.2", "4.0.0-rc.1" as semver; RetireJS versions such as "1.2.3.4" or "1.0.0rc1" keep their leading release. */
export function normaliseVersion(raw: string): string | null {
  const cleaned = raw.replace(/[._-]+$/, '')
  if (parseVersion(cleaned)) return cleaned
  const m = /^(\d{1,9}(?:\.\d{1,9}){0,2})(?:[-.]?([a-z]+[0-9]*))?/i.exec(cleaned)
  if (!m) return null
  const v = m[2] ? `${m[1]}-${m[2]}` : m[1]!
  return parseVersion(v) ? v : null
}

export interface RepositoryDetection {
  library: string
  version: string
  script: string
  excerpt: string
}

/** The library versions one script reveals to the RetireJS extractors. */
export function detectRepositoryLibraries(script: ScriptArtifact): RepositoryDetection[] {
  const body = script.body.length > MAX_SCAN ? script.body.slice(0, MAX_SCAN) : script.body
  const found: RepositoryDetection[] = []
  const seen = new Set<string>()
  for (const x of EXTRACTORS) {
    if (x.gate !== '' && !body.includes(x.gate)) continue
    const m = x.re.exec(body)
    const version = m?.[1] ? normaliseVersion(m[1]) : null
    if (!m || !version) continue
    const key = `${x.library}@${version}`
    if (seen.has(key)) continue
    seen.add(key)
    found.push({ library: x.library, version, script: script.url, excerpt: clip(m[0].replace(/\s+/g, ' ').trim(), 120) })
  }
  return found
}

const ENTRIES = new Map<string, LibraryEntry>()

/** The RetireJS library as an advisory table entry, in the shape of the hand-written ones. */
export function repositoryEntry(library: string): LibraryEntry | undefined {
  const cached = ENTRIES.get(library)
  if (cached) return cached
  const lib = (repository.libraries as Record<string, (typeof repository.libraries)[keyof typeof repository.libraries]>)[library]
  if (!lib) return undefined
  const advisories: Advisory[] = lib.vulnerabilities.flatMap((v) => {
    const below = normaliseVersion(v.below)
    const from = v.atOrAbove ? normaliseVersion(v.atOrAbove) : null
    if (!below || (v.atOrAbove && !from)) return []
    const open = /^999\./.test(below)
    return [
      {
        ids: v.ids,
        severity: v.severity as Severity,
        summary: v.summary || 'See the advisory.',
        range: open ? (from ? `>=${from}` : '>=0.0.0-0') : `${from ? `>=${from} ` : ''}<${below}`,
        fixed: open ? [] : [below],
      },
    ]
  })
  const fixes = advisories.flatMap((a) => a.fixed)
  const newest = fixes.sort((a, b) => Bun.semver.order(b, a))[0]
  const entry: LibraryEntry = {
    id: library,
    name: library,
    upgrade: newest
      ? `${library} ${newest} or later (the newest release is best)`
      : `the newest ${library} release, or a maintained replacement`,
    advisories,
    endOfLife: DISCONTINUED[library] ? [{ range: '>=0.0.0-0', note: DISCONTINUED[library]! }] : [],
  }
  ENTRIES.set(library, entry)
  return entry
}
