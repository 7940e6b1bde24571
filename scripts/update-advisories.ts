// Refreshes shared/checks/data/retire-repository.json from the RetireJS repository (Apache-2.0), the
// advisory source of the front-end libraries the hand-written detectors of vulnerable-js-library do not cover.
//
//   bun scripts/update-advisories.ts                         # from GitHub (needs network)
//   bun scripts/update-advisories.ts --from jsrepository-v4.json [--date 2026-08-22] [--commit fd8df0d]
//
// Only what the check uses is kept: each library's content extractors (versions come from script content,
// never from file names or URLs) and its vulnerabilities. Libraries the hand-written table covers are
// left out, so one library is never judged twice. Review the diff (new extractors run on every scan) and
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
  extractors?: { filecontent?: string[] }
  vulnerabilities?: RetireVulnerability[]
}

export interface RepositoryLibrary {
  npm: string | null
  filecontent: string[]
  vulnerabilities: Array<{ atOrAbove: string | null; below: string; severity: string; summary: string; ids: string[] }>
}

export interface Repository {
  source: string
  license: string
  /** The date of the RetireJS repository this was made from. */
  updated: string
  commit: string | null
  libraries: Record<string, RepositoryLibrary>
}

const SEVERITIES = new Set(['low', 'medium', 'high', 'critical'])

/** CVE and GHSA ids first; an advisory with neither is named by its issue or bug in the library's tracker. */
function idsOf(library: string, v: RetireVulnerability): string[] {
  const ids = [...(v.identifiers?.CVE ?? []), ...(v.identifiers?.githubID ? [v.identifiers.githubID] : [])]
  if (ids.length > 0) return ids
  const ref = v.identifiers?.issue ?? v.identifiers?.bug ?? v.identifiers?.retid
  return ref ? [`${library} ${v.identifiers?.retid && !v.identifiers.issue && !v.identifiers.bug ? 'retid' : 'issue'} ${ref}`] : []
}

export function convert(raw: Record<string, RetireLibrary>, updated: string, commit: string | null): Repository {
  const libraries: Record<string, RepositoryLibrary> = {}
  for (const name of Object.keys(raw).sort()) {
    if (COVERED_BY_HAND.has(name)) continue
    const lib = raw[name]!
    const filecontent = (lib.extractors?.filecontent ?? []).filter((p) => p.includes('§§version§§'))
    if (filecontent.length === 0) continue
    for (const p of filecontent) new RegExp(p.replaceAll('§§version§§', '[0-9][0-9.a-z_\\-]+')) // throws on a pattern JS cannot run
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
    libraries[name] = { npm: lib.npmname ?? null, filecontent, vulnerabilities }
  }
  return { source: 'RetireJS repository (jsrepository-v4.json)', license: 'Apache-2.0', updated, commit, libraries }
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
