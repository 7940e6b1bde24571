// Refreshes shared/checks/data/retire-repository.json from the RetireJS repository (Apache-2.0), the
// advisory source of the front-end libraries the hand-written detectors of vulnerable-js-library do not cover.
//
//   bun scripts/update-advisories.ts                         # from GitHub (needs network)
//   bun scripts/update-advisories.ts --from jsrepository-v4.json [--date 2026-08-22] [--commit fd8df0d]
//
// Each library's extractors are kept as RetireJS writes them except `func` and `ast` (they need the page's
// globals or a parser): file content (and filecontentreplace), hashes of whole files, URIs and file names,
// with its vulnerabilities. Versions come from content first; hashes, URIs and file names speak only for a
// script whose content named none. Libraries the hand-written table covers keep only their URI, file-name
// and hash extractors (under `locations`, by the hand-written id), so one library is never judged twice. Review the diff (new extractors run on every scan) and
// run bun test test/shared/checks/vulnerable-js-library.test.ts before committing.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const SOURCE_URL = 'https://raw.githubusercontent.com/RetireJS/retire.js/master/repository/jsrepository-v4.json'
const OUT = join(import.meta.dir, '..', 'shared', 'checks', 'data', 'retire-repository.json')

/** RetireJS names of the libraries shared/checks/data/vulnerable-libraries.ts covers by hand, and non-libraries. */
export const COVERED_BY_HAND = new Set([
  'jquery',
  'jquery-ui',
  'jquery-ui-dialog',
  'jquery-ui-autocomplete',
  'jquery-ui-tooltip',
  'lodash',
  'underscore.js',
  'angularjs',
  'bootstrap',
  'moment.js',
  'handlebars',
  'DOMPurify',
  'vue',
  'retire-example',
  'dont check',
])

interface RetireVulnerability {
  atOrAbove?: string
  below?: string
  severity?: string
  identifiers?: { summary?: string; CVE?: string[]; githubID?: string; issue?: string; bug?: string; retid?: string }
}

interface RetireLibrary {
  npmname?: string
  extractors?: {
    filecontent?: string[]
    filecontentreplace?: string[]
    uri?: string[]
    filename?: string[]
    hashes?: Record<string, string>
  }
  vulnerabilities?: RetireVulnerability[]
}

/** Where a script's location or bytes name a library: RetireJS's uri, filename and hashes extractors. */
export interface LocationExtractors {
  uri: string[]
  filename: string[]
  /** SHA-1 of a whole file -> its version. */
  hashes: Record<string, string>
}

export interface RepositoryLibrary extends LocationExtractors {
  npm: string | null
  filecontent: string[]
  /** "/regex/replacement/": the version is the replacement with $1.. filled in. */
  filecontentreplace: string[]
  vulnerabilities: Array<{ atOrAbove: string | null; below: string; severity: string; summary: string; ids: string[] }>
}

/** RetireJS names of the hand-covered libraries -> the hand-written table's ids. */
export const HAND_IDS: Record<string, string> = {
  jquery: 'jquery',
  'jquery-ui': 'jquery-ui',
  lodash: 'lodash',
  'underscore.js': 'underscore',
  angularjs: 'angularjs',
  bootstrap: 'bootstrap',
  'moment.js': 'moment',
  handlebars: 'handlebars',
  DOMPurify: 'dompurify',
  vue: 'vue',
}

export interface Repository {
  source: string
  license: string
  /** The date of the RetireJS repository this was made from. */
  updated: string
  commit: string | null
  libraries: Record<string, RepositoryLibrary>
  /** Location extractors of the libraries the hand-written table covers, by its ids. */
  locations: Record<string, LocationExtractors>
}

const SEVERITIES = new Set(['low', 'medium', 'high', 'critical'])

/** CVE and GHSA ids first; an advisory with neither is named by its issue or bug in the library's tracker. */
function idsOf(library: string, v: RetireVulnerability): string[] {
  const ids = [...(v.identifiers?.CVE ?? []), ...(v.identifiers?.githubID ? [v.identifiers.githubID] : [])]
  if (ids.length > 0) return ids
  const ref = v.identifiers?.issue ?? v.identifiers?.bug ?? v.identifiers?.retid
  return ref ? [`${library} ${v.identifiers?.retid && !v.identifiers.issue && !v.identifiers.bug ? 'retid' : 'issue'} ${ref}`] : []
}

const VERSIONED = (p: string) => p.includes('§§version§§')

/** Throws on a pattern JavaScript cannot run. */
function compiles(pattern: string): string {
  new RegExp(pattern.replaceAll('§§version§§', '[0-9][0-9.a-z_\\-]+'))
  return pattern
}

function locationsOf(lib: RetireLibrary): LocationExtractors {
  const x = lib.extractors ?? {}
  const hashes: Record<string, string> = {}
  for (const [hash, version] of Object.entries(x.hashes ?? {})) if (/^[0-9a-f]{40}$/.test(hash)) hashes[hash] = version
  return { uri: (x.uri ?? []).filter(VERSIONED).map(compiles), filename: (x.filename ?? []).filter(VERSIONED).map(compiles), hashes }
}

export function convert(raw: Record<string, RetireLibrary>, updated: string, commit: string | null): Repository {
  const libraries: Record<string, RepositoryLibrary> = {}
  const locations: Record<string, LocationExtractors> = {}
  for (const name of Object.keys(raw).sort()) {
    const lib = raw[name]!
    const handId = HAND_IDS[name]
    if (handId) locations[handId] = locationsOf(lib)
    if (COVERED_BY_HAND.has(name)) continue
    const filecontent = (lib.extractors?.filecontent ?? []).filter(VERSIONED).map(compiles)
    const filecontentreplace = (lib.extractors?.filecontentreplace ?? []).filter((p) => /^\/.+\/.*\/$/s.test(p))
    for (const p of filecontentreplace) new RegExp(p.slice(1, p.lastIndexOf('/', p.length - 2)))
    const where = locationsOf(lib)
    if (filecontent.length + filecontentreplace.length + where.uri.length + where.filename.length + Object.keys(where.hashes).length === 0)
      continue
    const vulnerabilities = (lib.vulnerabilities ?? [])
      .filter((v) => v.below)
      .map((v) => ({
        atOrAbove: v.atOrAbove ?? null,
        below: v.below!,
        severity: SEVERITIES.has(v.severity ?? '') ? v.severity! : 'medium',
        summary: (v.identifiers?.summary ?? '').replace(/\s+/g, ' ').trim().slice(0, 240),
        ids: idsOf(name, v),
      }))
      .filter((v) => v.ids.length > 0)
    libraries[name] = { npm: lib.npmname ?? null, filecontent, filecontentreplace, ...where, vulnerabilities }
  }
  return { source: 'RetireJS repository (jsrepository-v4.json)', license: 'Apache-2.0', updated, commit, libraries, locations }
}

async function main() {
  const args = process.argv.slice(2)
  const opt = (name: string) => {
    const i = args.indexOf(name)
    return i === -1 ? null : (args[i + 1] ?? null)
  }
  const from = opt('--from')
  let text: string
  if (from) text = readFileSync(from, 'utf8')
  else {
    const res = await fetch(SOURCE_URL, { signal: AbortSignal.timeout(30_000) })
    if (!res.ok) throw new Error(`${SOURCE_URL}: HTTP ${res.status}`)
    text = await res.text()
  }
  const updated = opt('--date') ?? new Date().toISOString().slice(0, 10)
  const repo = convert(JSON.parse(text) as Record<string, RetireLibrary>, updated, opt('--commit'))
  writeFileSync(OUT, `${JSON.stringify(repo, null, 1)}\n`)
  const count = Object.values(repo.libraries).reduce((n, l) => n + l.vulnerabilities.length, 0)
  console.log(`${OUT}: ${Object.keys(repo.libraries).length} libraries, ${count} advisories, as of ${updated}`)
}

if (import.meta.main) await main()
