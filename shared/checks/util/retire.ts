// The RetireJS repository's extractors and advisories (shared/checks/data/retire-repository.json, refreshed
// by scripts/update-advisories.ts) for the libraries the hand-written detectors do not cover. Content
// extractors (filecontent, filecontentreplace) run only on scripts that hold their longest literal run, so
// a scan of megabytes of bundles runs few of them. Hashes, URIs and file names (for every library RetireJS
// knows, the hand-covered ones included) speak only for a script whose content named no library.

import { createHash } from 'node:crypto'
import data from '../data/retire-repository.json' with { type: 'json' }
import type { Advisory, LibraryEntry } from '../data/vulnerable-libraries.ts'
import type { ScriptArtifact, Severity } from '../types.ts'
import { clip } from './http.ts'
import { parseVersion } from './semver.ts'

const repository = data as unknown as RepositoryShape

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
  /** filecontentreplace: the version is this with $1.. filled in from the match. */
  replace?: string
}

interface Locations {
  uri: string[]
  filename: string[]
  hashes: Record<string, string>
}

interface RepositoryShape {
  source: string
  updated: string
  commit: string | null
  libraries: Record<
    string,
    Locations & {
      filecontent: string[]
      filecontentreplace: string[]
      vulnerabilities: Array<{ atOrAbove: string | null; below: string; severity: string; summary: string; ids: string[] }>
    }
  >
  locations: Record<string, Locations>
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

const gateOf = (pattern: string) => literalRuns(pattern.replaceAll('§§version§§', '()')).sort((a, b) => b.length - a.length)[0] ?? ''

const EXTRACTORS: Extractor[] = Object.entries(repository.libraries).flatMap(([library, lib]) => [
  ...lib.filecontent.map((pattern) => ({
    library,
    re: new RegExp(bounded(pattern).replaceAll('§§version§§', VERSION)),
    gate: gateOf(pattern),
  })),
  ...lib.filecontentreplace.map((spec) => {
    // "/regex/replacement/": the regex's last slash is the one before the replacement.
    const cut = spec.lastIndexOf('/', spec.length - 2)
    const pattern = spec.slice(1, cut)
    return { library, re: new RegExp(bounded(pattern)), gate: gateOf(pattern), replace: spec.slice(cut + 1, -1) }
  }),
])

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
    const raw = m && x.replace !== undefined ? x.replace.replace(/\$(\d)/g, (_, n: string) => m[Number(n)] ?? '') : m?.[1]
    const version = raw ? normaliseVersion(raw) : null
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

export interface LocationDetection {
  /** The RetireJS library, or the hand-written table's id when `table` is 'hand'. */
  library: string
  table: 'hand' | 'repository'
  version: string
  script: string
  source: 'hash' | 'uri' | 'filename'
  excerpt: string
}

const LOCATIONS: Array<{ library: string; table: 'hand' | 'repository'; where: Locations }> = [
  ...Object.entries(repository.locations).map(([library, where]) => ({ library, table: 'hand' as const, where })),
  ...Object.entries(repository.libraries).map(([library, where]) => ({ library, table: 'repository' as const, where })),
]

const compiled = new Map<string, RegExp>()
const locationRegex = (pattern: string) => {
  let re = compiled.get(pattern)
  if (!re) compiled.set(pattern, (re = new RegExp(pattern.replaceAll('§§version§§', VERSION))))
  return re
}

/** npm and cdnjs names of the hand-covered libraries -> the hand-written table's ids. */
const HAND_PACKAGES: Record<string, string> = {
  jquery: 'jquery',
  'jquery-ui': 'jquery-ui',
  'jquery-ui-dist': 'jquery-ui',
  jqueryui: 'jquery-ui',
  lodash: 'lodash',
  'lodash.js': 'lodash',
  underscore: 'underscore',
  'underscore.js': 'underscore',
  angular: 'angularjs',
  'angular.js': 'angularjs',
  bootstrap: 'bootstrap',
  'twitter-bootstrap': 'bootstrap',
  moment: 'moment',
  'moment.js': 'moment',
  handlebars: 'handlebars',
  'handlebars.js': 'handlebars',
  dompurify: 'dompurify',
  vue: 'vue',
}

/** A package name as the CDNs spell it -> the library, for both tables. */
const PACKAGES = new Map<string, { library: string; table: 'hand' | 'repository' }>([
  ...Object.entries(repository.libraries).flatMap(([library, lib]) => {
    const entry = { library, table: 'repository' as const }
    const npm = (lib as { npm?: string | null }).npm
    return [[library.toLowerCase(), entry] as const, ...(npm ? [[npm.toLowerCase(), entry] as const] : [])]
  }),
  ...Object.entries(HAND_PACKAGES).map(([name, library]) => [name, { library, table: 'hand' as const }] as const),
])

/** jsDelivr and unpkg (/npm/pkg@1.2.3/, unpkg.com/pkg@1.2.3/) and cdnjs (/ajax/libs/name/1.2.3/) name the package and its version. */
const CDN_PATH =
  /^(?:cdn\.jsdelivr\.net\/npm\/|(?:unpkg\.com|esm\.sh|cdn\.skypack\.dev)\/)((?:@[\w.-]{1,100}\/)?[\w.-]{1,100})@(\d[\w.-]{0,40})\/|^cdnjs\.cloudflare\.com\/ajax\/libs\/([\w.-]{1,100})\/(\d[\w.-]{0,40})\//

function fromCdnPath(address: string): { library: string; table: 'hand' | 'repository'; version: string } | null {
  const m = CDN_PATH.exec(address)
  if (!m) return null
  const known = PACKAGES.get((m[1] ?? m[3] ?? '').toLowerCase())
  return known ? { ...known, version: m[2] ?? m[4] ?? '' } : null
}

/**
 * What a script's bytes (a hash RetireJS lists) or its address (a URI or file name pattern, or a CDN path
 * naming the package and version) say it is, for a script whose content named no library. Inline scripts
 * have no address.
 */
export function detectByLocation(script: ScriptArtifact): LocationDetection[] {
  if (script.inline) return []
  let url: URL
  try {
    url = new URL(script.url)
  } catch {
    return []
  }
  const hash = createHash('sha1').update(script.body, 'utf8').digest('hex')
  const file = decodeURIComponentSafe(url.pathname.slice(url.pathname.lastIndexOf('/') + 1))
  const address = `${url.host}${decodeURIComponentSafe(url.pathname)}`
  const found: LocationDetection[] = []
  for (const { library, table, where } of LOCATIONS) {
    const byHash = where.hashes[hash]
    const byUri = byHash ? null : firstVersion(where.uri, address)
    const byName = byHash || byUri ? null : firstVersion(where.filename, file)
    // A greedy version pattern takes the build's suffix too: jquery-3.4.1.min.js -> "3.4.1.min".
    const raw = (byHash ?? byUri ?? byName)?.replace(/(?:[.-](?:min|slim|pack|prod|production|umd|esm|bundle|full))+$/i, '')
    const version = raw ? normaliseVersion(raw) : null
    if (!version) continue
    const source = byHash ? 'hash' : byUri ? 'uri' : 'filename'
    found.push({
      library,
      table,
      version,
      script: script.url,
      source,
      excerpt: clip(source === 'hash' ? `sha1 ${hash}` : source === 'uri' ? address : file, 120),
    })
  }
  const cdn = found.length === 0 ? fromCdnPath(address) : null
  const cdnVersion = cdn ? normaliseVersion(cdn.version) : null
  if (cdn && cdnVersion)
    found.push({
      library: cdn.library,
      table: cdn.table,
      version: cdnVersion,
      script: script.url,
      source: 'uri',
      excerpt: clip(address, 120),
    })
  return found
}

function firstVersion(patterns: string[], text: string): string | null {
  for (const p of patterns) {
    const m = locationRegex(p).exec(text)
    if (m?.[1]) return m[1]
  }
  return null
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}
