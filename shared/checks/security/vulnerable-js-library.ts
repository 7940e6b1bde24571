// Known-vulnerable JavaScript libraries in the scripts the page loaded. The library and its version are read
// from the script's content only (license banners and the library's own version constants), never from
// the file name: jquery-3.4.1.min.js may well hold 3.7.1. The readers are in util/library-detectors.ts and util/retire.ts;
// this check matches what they find against advisories and end-of-life dates.

import { ADVISORY_DATA, libraryEntry, type Advisory, type LibraryEntry } from '../data/vulnerable-libraries.ts'
import { defineCheck, type ScriptArtifact, type Severity } from '../types.ts'
import { detectLibraries } from '../util/library-detectors.ts'
import { libraryAdvice } from '../util/library-advice.ts'
import { compareVersions, parseVersion, satisfies } from '../util/semver.ts'
import { worseSeverity } from '../../report/ranking.ts'
import { detectByLocation, detectRepositoryLibraries, REPOSITORY_DATA, repositoryEntry } from '../util/retire.ts'

const MAX_SCRIPTS_LISTED = 5
const MAX_FINDINGS = 20

interface Instance {
  entry: LibraryEntry
  version: string
  scripts: string[]
  source: 'banner' | 'content' | 'hash' | 'uri' | 'filename'
  excerpt: string
  fixable: Advisory[]
  unfixed: Advisory[]
  endOfLife: string[]
}

/** The first release of the advisory's fixes that is newer than the version found. */
function fixedFor(advisory: Advisory, version: string): string | null {
  const v = parseVersion(version)!
  const newer = advisory.fixed
    .map((f) => ({ f, p: parseVersion(f)! }))
    .filter(({ p }) => compareVersions(p, v) > 0)
    .sort((a, b) => compareVersions(a.p, b.p))
  return newer[0]?.f ?? null
}

function highestFix(instance: Instance): string | null {
  let best: string | null = null
  for (const a of instance.fixable) {
    const f = fixedFor(a, instance.version)
    if (f && (!best || compareVersions(parseVersion(f)!, parseVersion(best)!) > 0)) best = f
  }
  return best
}

function worstSeverity(advisories: Advisory[]): Severity {
  const worst = advisories.reduce<Severity>((w, a) => worseSeverity(w, a.severity), 'low')
  return worst === 'critical' ? 'high' : worst // a library in the browser is scored at most high
}

function instanceEvidence(i: Instance) {
  return {
    library: i.entry.name,
    id: i.entry.id,
    version: i.version,
    scripts: i.scripts.slice(0, MAX_SCRIPTS_LISTED),
    scriptCount: i.scripts.length,
    detectedBy: i.source,
    excerpt: i.excerpt,
    advisories: [...i.fixable, ...i.unfixed].map((a) => ({
      ids: a.ids,
      severity: a.severity,
      summary: a.summary,
      fixedIn: fixedFor(a, i.version),
    })),
    fixedVersion: highestFix(i),
    ...(i.unfixed.length > 0 ? { noFixInThisLine: true } : {}),
    ...(i.endOfLife.length > 0 ? { endOfLife: i.endOfLife } : {}),
    upgrade: i.entry.upgrade,
  }
}

function label(i: Instance): string {
  const where = i.scripts[0] ?? ''
  return `${i.entry.name} ${i.version} in ${where}${i.scripts.length > 1 ? ` (+${i.scripts.length - 1} more)` : ''}`
}

export const vulnerableJsLibrary = defineCheck({
  id: 'vulnerable-js-library',
  category: 'security',
  title: 'No JavaScript libraries with known vulnerabilities',
  failTitle: 'JavaScript libraries with known vulnerabilities',
  description:
    'Reads library names and versions from the license banners and version constants inside the scripts the page loaded (jQuery, ' +
    'jQuery UI, Lodash, Underscore, AngularJS, Bootstrap, Moment, Handlebars, DOMPurify, Vue 2 by hand-written detectors; about 55 ' +
    'more, such as React, Angular, Knockout, Backbone, Chart.js, CKEditor, TinyMCE, Select2, Axios, PDF.js, Ember and YUI, by the ' +
    'RetireJS repository\u2019s content extractors) and matches them against published advisories and end-of-life dates. Advisory ' +
    `data: ${ADVISORY_DATA}; ${REPOSITORY_DATA}.`,
  why:
    'Known XSS, prototype-pollution and code-injection flaws in front-end libraries have public exploits; an old jQuery or DOMPurify ' +
    "turns any place that handles untrusted HTML into a way to run script in your users' sessions.",
  confirmation:
    'Versions come from script content only: official banners (/*! jQuery v3.4.1 |, @license AngularJS v1.7.9, Bootstrap v3.3.7 (https://getbootstrap.com), //! version : 2.29.1, @license DOMPurify 2.0.7) and the libraries\' own version constants in their minified form (jQuery\'s "3.4.1",k=function(e,t){return new k.fn.init(e,t)}, Lodash\'s VERSION next to its internal markers, AngularJS\'s {full:"1.7.9",major:1,...,codeName}, Bootstrap\'s VERSION beside its bs.* data keys, DOMPurify.version, Handlebars VERSION beside COMPILER_REVISION). The content decides: jquery-3.4.1.min.js holding 3.7.1 is 3.7.1. Only a script whose content names no library is read by its address: a CDN path naming the package and version (jsDelivr, unpkg, cdnjs) or a RetireJS URI pattern counts as the content would; a RetireJS hash of the whole file too; a file name alone warns and says so. A script that mentions a library without a readable version, a plugin named after one ("jQuery UI Touch Punch 0.2.3"), and a banner crediting another project ("Based on Underscore.js 1.8.3") are not findings. Fails when an advisory with a fixed release applies; warns when the only advisories have no fixed release in that line (end-of-life Bootstrap 3/4, AngularJS 1.8.x); reports info for end-of-life versions without open advisories (Vue 2, jQuery 1.x and 2.x, discontinued libraries such as YUI, MooTools and Prototype). For the RetireJS libraries, every extractor but func and ast is used (filecontent and filecontentreplace, hashes, uri, filename; the hand-covered libraries\u2019 uri, filename and hash extractors too), each content extractor only when its literal text is in the script. Severity follows the worst advisory, at most high. Advisory ranges are semver ranges from the GitHub Advisory Database, table reviewed ' +
    ADVISORY_DATA +
    '.',
  severity: 'high',
  fix: {
    generic:
      'Upgrade the library to the fixed version shown (npm install <library>@<fixed version>, then rebuild), or replace it; for files served from' +
      ' a CDN or a vendor folder, update the URL or file and its integrity hash. Check npm ls <library> for copies pulled in by other' +
      ' packages.',
    vercel:
      'Update the dependency (npm install <library>@<fixed version>, or an "overrides" entry in package.json for a transitive copy), ' +
      'commit the lockfile and redeploy; Vercel rebuilds the bundle from the lockfile. Replace any copy committed under public/.',
    netlify:
      'Update the dependency (npm install <library>@<fixed version>, or "overrides" in package.json for a transitive copy), commit ' +
      'the lockfile and trigger a deploy; if the old file persists, use "Clear cache and deploy site". Replace any copy committed in ' +
      'the publish directory.',
    nextjs:
      'Run npm ls <library> to find who pulls it in, upgrade it (or add "overrides": { "<library>": "<fixed version>" } in ' +
      'package.json), then next build. Libraries loaded with next/script from a CDN need their src URL and integrity updated.',
    nginx:
      'Replace the old file under the server root with the fixed release (prefer a versioned file name such as jquery-3.7.1.min.js so' +
      ' caches pick it up), update the <script src> in your templates, and reload: nginx -s reload.',
    cloudflare:
      'Update the library in your build (Pages) or in the origin, redeploy, then purge the old file from the cache (Caching > ' +
      'Configuration > Purge Cache > Custom Purge with the script URL). For cdnjs URLs, change the version in the URL and its ' +
      'integrity hash.',
  },
  // Each library by its own name and fixed version, changed where its copy comes from (a CDN URL or package.json).
  advise: (result, platform) => libraryAdvice(result.evidence, platform),
  fixTarget: { kind: 'dependencies' },
  requires: ['scripts'],
  run: ({ scripts }) => {
    const instances = instancesIn(scripts)
    // A file's name alone does not prove its content: such a finding warns and says so.
    const byName = (i: Instance) => i.source === 'filename'
    const failing = instances.filter((i) => i.fixable.length > 0 && !byName(i))
    const named = instances.filter((i) => i.fixable.length + i.unfixed.length > 0 && byName(i))
    const warning = instances.filter((i) => i.fixable.length === 0 && i.unfixed.length > 0 && !byName(i))
    const eolOnly = instances.filter((i) => i.fixable.length === 0 && i.unfixed.length === 0 && i.endOfLife.length > 0)
    const evidence = evidenceOf(scripts, instances, [...failing, ...warning, ...named, ...eolOnly])
    if (failing.length > 0) return failVerdict(failing, evidence)
    if (named.length > 0 && warning.length === 0) {
      const first = named[0]!
      const fix = highestFix(first)
      return {
        status: 'warn',
        severity: worstSeverity([...first.fixable, ...first.unfixed]),
        evidence,
        summary: `${label(first)}, by its file name only (its content shows no version): if it is that release, it has known vulnerabilities (${[...first.fixable, ...first.unfixed][0]!.ids[0]})${fix ? `, fixed in ${fix}` : ''}.`,
      }
    }
    if (warning.length > 0) {
      const first = warning[0]!
      return {
        status: 'warn',
        severity: worstSeverity(warning.flatMap((i) => i.unfixed)),
        evidence,
        summary: `${label(first)} has advisories no ${first.entry.name} release in that line fixes (${first.unfixed[0]!.ids[0]}): it is end of life; move to ${first.entry.upgrade}.`,
      }
    }
    if (eolOnly.length > 0) {
      const first = eolOnly[0]!
      return { status: 'info', severity: 'info', evidence, summary: `${label(first)} is end of life: ${first.endOfLife[0]}` }
    }
    const names = instances.map((i) => `${i.entry.name} ${i.version}`)
    return {
      status: 'pass',
      evidence,
      summary:
        names.length > 0
          ? `No known vulnerabilities in the libraries found: ${names.join(', ')}.`
          : `No library with a readable version in ${scripts.length} script(s).`,
    }
  },
})

/** Each library version found (by the hand-written detectors, then RetireJS's extractors) with the scripts that
 * hold it and the advisories and end-of-life notes its version falls under. */
function instancesIn(scripts: ScriptArtifact[]): Instance[] {
  const byKey = new Map<string, Instance>()
  for (const script of scripts) {
    const byContent = [
      ...detectLibraries(script).map((d) => ({ ...d, entry: libraryEntry(d.library) })),
      ...detectRepositoryLibraries(script).map((d) => ({ ...d, source: 'content' as const, entry: repositoryEntry(d.library) })),
    ]
    // The content decides; a file's hash, URI or name speaks only when the content named no library.
    const detections =
      byContent.length > 0
        ? byContent
        : detectByLocation(script).map((d) => ({
            ...d,
            entry: d.table === 'hand' ? libraryEntry(d.library) : repositoryEntry(d.library),
          }))
    for (const d of detections) {
      const key = `${d.library}@${d.version}`
      const existing = byKey.get(key)
      if (existing) {
        if (!existing.scripts.includes(d.script)) existing.scripts.push(d.script)
        continue
      }
      const entry = d.entry
      if (!entry) continue
      const advisories = entry.advisories.filter((a) => satisfies(d.version, a.range))
      byKey.set(key, {
        entry,
        version: d.version,
        scripts: [d.script],
        source: d.source,
        excerpt: d.excerpt,
        fixable: advisories.filter((a) => a.fixed.length > 0),
        unfixed: advisories.filter((a) => a.fixed.length === 0),
        endOfLife: entry.endOfLife.filter((e) => satisfies(d.version, e.range)).map((e) => e.note),
      })
    }
  }
  return [...byKey.values()]
}

function evidenceOf(scripts: ScriptArtifact[], instances: Instance[], findings: Instance[]) {
  return {
    scripts: scripts.length,
    detected: instances.map((i) => ({
      library: i.entry.name,
      version: i.version,
      scripts: i.scripts.slice(0, MAX_SCRIPTS_LISTED),
      detectedBy: i.source,
    })),
    findings: findings.slice(0, MAX_FINDINGS).map(instanceEvidence),
    truncated: findings.length > MAX_FINDINGS,
    advisoryData: { curated: ADVISORY_DATA, repository: REPOSITORY_DATA },
  }
}

/** Fails on the first library with a fixed release, naming its advisories and the fix, and counts the rest. */
function failVerdict(failing: Instance[], evidence: ReturnType<typeof evidenceOf>) {
  const all = failing.flatMap((i) => [...i.fixable, ...i.unfixed])
  const first = failing[0]!
  const fix = highestFix(first)
  const ids = first.fixable.map((a) => a.ids[0]!).slice(0, 3)
  const more = failing.length > 1 ? `; ${failing.length - 1} more vulnerable librar${failing.length === 2 ? 'y' : 'ies'}` : ''
  return {
    status: 'fail' as const,
    severity: worstSeverity(all),
    evidence,
    summary: `${label(first)} has known vulnerabilities (${ids.join(', ')}${first.fixable.length > 3 ? ', ...' : ''})${fix ? `, fixed in ${fix}` : ''}${more}.`,
  }
}
