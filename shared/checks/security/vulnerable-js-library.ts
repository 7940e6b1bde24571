// Known-vulnerable JavaScript libraries in the scripts the page loaded. The library and its version are read
// from the script's content only (license banners and the library's own version constants), never from
// the file name: jquery-3.4.1.min.js may well hold 3.7.1.

import { ADVISORY_DATA, libraryEntry, type Advisory, type LibraryEntry } from '../data/vulnerable-libraries.ts'
import { defineCheck, type ScriptArtifact, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { compareVersions, parseVersion, satisfies } from '../util/semver.ts'
import { worseSeverity } from '../../report/ranking.ts'
import { detectRepositoryLibraries, REPOSITORY_DATA, repositoryEntry } from '../util/retire.ts'

/** A semantic version as written in a banner or constant; not followed by more version digits. */
const VER = String.raw`\d{1,4}\.\d{1,4}\.\d{1,4}(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\.?\d)`
/** Same, with a fixed major version. */
const verOf = (major: number) => String.raw`${major}\.\d{1,4}\.\d{1,4}(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\.?\d)`
/**
 * Whitespace, line comments and block comments between two tokens, at most 30 runs of them (the gaps in
 * the libraries' sources hold a few). Only used through gap(): its lookahead is atomic and nothing follows
 * GAP_BODY inside it, so the nested \s+ never backtracks.
 */
const GAP_BODY = String.raw`(?:\s+|\/\/[^\n]*\n|\/\*[^*]*\*+(?:[^/*][^*]*\*+)*\/){0,30}`
let gaps = 0
/** GAP_BODY matched atomically (lookahead + backreference), so a failed match never backtracks through a long gap. */
function gap(): string {
  const name = `gap${gaps++}`
  return String.raw`(?=(?<${name}>${GAP_BODY}))\k<${name}>`
}
const IDENT = String.raw`[\w$]{1,40}`

interface Signature {
  source: 'banner' | 'content'
  /** Global, with a named group `v` for the version. Must not start with an unbounded identifier run. */
  pattern: RegExp
  /** The pattern only runs when one of these substrings is in the script. */
  gate: string[]
  /** The match only counts when one of these markers lies from `before` characters ahead of it to `after` past it. */
  near?: { markers: string[]; before: number; after: number }
}

interface Detector {
  library: string
  signatures: Signature[]
}

const re = (source: string) => new RegExp(source, 'g')

/** How each library announces its version, in its official builds and once bundled and minified. */
const DETECTORS: Detector[] = [
  {
    library: 'jquery',
    signatures: [
      { source: 'banner', gate: ['jQuery v'], pattern: re(String.raw`\/\*!?\s*jQuery v(?<v>${VER})`) },
      { source: 'banner', gate: ['jQuery JavaScript Library v'], pattern: re(String.raw`jQuery JavaScript Library v(?<v>${VER})`) },
      {
        // var version = "3.4.1", [rhtmlSuffix = /HTML$/i,] jQuery = function(selector, context) { return new jQuery.fn.init(...) }
        // minified: var E="3.4.1",k=function(e,t){return new k.fn.init(e,t)}
        source: 'content',
        gate: ['.fn.init('],
        pattern: re(
          String.raw`["'](?<v>${VER})["']\s*,${gap()}(?:${IDENT}\s*=\s*\/HTML\$\/i\s*,${gap()})?(?<f>${IDENT})\s*=\s*function\s*\(\s*${IDENT}\s*,\s*${IDENT}\s*\)\s*\{${gap()}return\s+new\s+\k<f>\.fn\.init\(`,
        ),
      },
      {
        // jQuery.fn = jQuery.prototype = { jquery: "1.4.2", length: 0, ... } (or constructor first)
        source: 'content',
        gate: ['jquery'],
        pattern: re(String.raw`(?<![\w$])jquery\s*:\s*["'](?<v>${VER})["']\s*,${gap()}(?:constructor|length)\s*:`),
      },
    ],
  },
  {
    library: 'jquery-ui',
    signatures: [
      {
        // /*! jQuery UI - v1.12.1 - 2016-09-14\n* http://jqueryui.com ; /*!\n * jQuery UI Widget 1.12.1\n * http://jqueryui.com
        // The site line keeps plugins such as "jQuery UI Touch Punch 0.2.3" out.
        source: 'banner',
        gate: ['jQuery UI'],
        pattern: re(
          String.raw`jQuery UI(?: [A-Z][A-Za-z ]{0,30}?)? (?:- )?v?(?<v>${VER})(?: - [\d-]{10})?\s*\n\s*\*?\s*https?:\/\/(?:jqueryui\.com|github\.com\/jquery\/jquery-ui)`,
        ),
      },
      { source: 'content', gate: ['.ui.version'], pattern: re(String.raw`\.ui\.version\s*=\s*["'](?<v>${VER})["']`) },
      { source: 'content', gate: ['.ui'], pattern: re(String.raw`\.ui\s*,\s*\{\s*version\s*:\s*["'](?<v>${VER})["']`) },
    ],
  },
  {
    library: 'lodash',
    signatures: [
      {
        source: 'banner',
        gate: ['odash '],
        pattern: re(String.raw`[Ll]odash (?<v>${VER}) (?:\((?:Custom|Modern) [Bb]uild\) )?<?https?:\/\/lodash\.com`),
      },
      {
        // var VERSION = '4.17.15'; var LARGE_ARRAY_SIZE = 200; var CORE_ERROR_TEXT = 'Unsupported core-js use...', FUNC_ERROR_TEXT = 'Expected a function'
        // minified: var n,t="4.17.15",r=200,e="Unsupported core-js use. Try https://npms.io/search?q=ponyfill.",u="Expected a function"
        source: 'content',
        gate: ['Expected a function', 'Unsupported core-js use'],
        pattern: re(
          String.raw`["'](?<v>${VER})["']\s*[,;]${gap()}(?:var\s+)?(?:${IDENT}\s*=\s*200\s*[,;]${gap()}(?:var\s+)?)?${IDENT}\s*=\s*["'](?:Unsupported core-js use|Expected a function)`,
        ),
      },
      {
        // VERSION = '4.17.15' near lodash's own markers (a bare VERSION constant belongs to many libraries).
        source: 'content',
        gate: ['VERSION'],
        pattern: re(String.raw`(?<![\w$])VERSION\s*=\s*["'](?<v>${VER})["']`),
        near: {
          markers: ['__lodash_hash_undefined__', '__lodash_placeholder__', 'Lodash <https://lodash.com/>', 'lodash.com/license'],
          before: 2_000,
          after: 4_000,
        },
      },
    ],
  },
  {
    library: 'underscore',
    signatures: [
      {
        // Lodash's own banner says "Based on Underscore.js 1.8.3": only Underscore's banner layout counts.
        source: 'banner',
        gate: ['Underscore.js'],
        pattern: re(
          String.raw`\/\/[ \t]+Underscore\.js (?<v>${VER})[ \t]*\n[ \t]*\/\/[ \t]+https?:\/\/(?:underscorejs\.org|documentcloud\.github\.com\/underscore)`,
        ),
      },
      {
        // var VERSION = '1.13.6'; var root = typeof self == 'object' && self.self === self && self || ...
        source: 'content',
        gate: ['self.self'],
        pattern: re(
          String.raw`["'](?<v>${verOf(1)})["']\s*[,;]${gap()}(?:var\s+)?${IDENT}\s*=\s*\(?\s*(?:typeof\s+self\s*==\s*["']object["']|["']object["']\s*==\s*typeof\s+self)\s*&&\s*self\.self\s*===\s*self`,
        ),
      },
      {
        source: 'content',
        gate: ['_.VERSION'],
        pattern: re(String.raw`(?<![\w$.])_\.VERSION\s*=\s*["'](?<v>${VER})["']`),
        near: { markers: ['Underscore', "'underscore'", '"underscore"'], before: 100_000, after: 100_000 },
      },
    ],
  },
  {
    library: 'angularjs',
    signatures: [
      { source: 'banner', gate: ['AngularJS v'], pattern: re(String.raw`@license AngularJS v(?<v>${VER})`) },
      {
        // angular.version = { full: '1.7.9', major: 1, minor: 7, dot: 9, codeName: 'pattern-lug' }
        source: 'content',
        gate: ['codeName'],
        pattern: re(
          String.raw`(?<![\w$])full\s*:\s*["'](?<v>${verOf(1)})["']\s*,\s*major\s*:\s*1\s*,\s*minor\s*:\s*\d+\s*,\s*dot\s*:\s*\d+\s*,\s*codeName\s*:`,
        ),
      },
    ],
  },
  {
    library: 'bootstrap',
    signatures: [
      {
        // "Bootstrap v3.3.7 (http://getbootstrap.com)", "Bootstrap alert.js v4.3.1 (https://getbootstrap.com/)",
        // "Bootstrap: alert.js v3.3.7\n * http://getbootstrap.com/..." at the start of a comment line. Plugins
        // named "Bootstrap-select v1.13.14" or "Datepicker for Bootstrap v1.9.0" do not match.
        source: 'banner',
        gate: ['Bootstrap'],
        pattern: re(
          String.raw`(?:\/\*!?|\n)[ \t]*\*?[ \t]*Bootstrap(?::?[ \t]+[\w-]{1,30}\.js)?[ \t]+v(?<v>${VER})[^\n]{0,60}\n?[^\n]{0,20}getbootstrap\.com`,
        ),
      },
      {
        // Bootstrap 4: var NAME = 'alert'; var VERSION = '4.3.1'; var DATA_KEY = 'bs.alert'  (minified: p="4.3.1",m="bs.alert")
        source: 'content',
        gate: ['"bs.', "'bs."],
        pattern: re(
          String.raw`["'](?<v>${VER})["']\s*[,;]${gap()}(?:(?:var|const|let)\s+)?${IDENT}\s*=\s*["']bs\.(?:alert|button|carousel|collapse|dropdown|modal|popover|scrollspy|tab|toast|tooltip)["']`,
        ),
      },
      {
        // Bootstrap 3: Alert.VERSION = '3.3.7'; Alert.TRANSITION_DURATION = 150
        source: 'content',
        gate: ['TRANSITION_DURATION'],
        pattern: re(String.raw`\.VERSION\s*=\s*["'](?<v>${verOf(3)})["']\s*[,;]?${gap()}${IDENT}\.TRANSITION_DURATION\s*=`),
      },
    ],
  },
  {
    library: 'moment',
    signatures: [
      { source: 'banner', gate: ['//! moment.js'], pattern: re(String.raw`\/\/! moment\.js\s*\/\/! version : (?<v>${VER})`) },
      {
        // hooks.version = '2.29.1'; setHookCallback(createLocal); hooks.fn = proto;  (minified: f.version="2.29.1",e=k,f.fn=lt)
        source: 'content',
        gate: ['_isAMomentObject'],
        pattern: re(
          String.raw`(?<![\w$])(?<o>${IDENT})\.version\s*=\s*["'](?<v>${verOf(2)})["']\s*[;,]${gap()}(?:setHookCallback\s*\(\s*${IDENT}\s*\)\s*;?${gap()}|${IDENT}\s*=\s*${IDENT}\s*[,;]\s*)?\k<o>\.fn\s*=`,
        ),
      },
    ],
  },
  {
    library: 'handlebars',
    signatures: [
      { source: 'banner', gate: ['handlebars v'], pattern: re(String.raw`@license\s+handlebars v(?<v>${VER})`) },
      {
        source: 'content',
        gate: ['Handlebars.VERSION'],
        pattern: re(String.raw`(?<![\w$])Handlebars\.VERSION\s*=\s*["'](?<v>${VER})["']`),
      },
      {
        // var VERSION = '4.7.7'; exports.VERSION = VERSION; var COMPILER_REVISION = 8;
        source: 'content',
        gate: ['COMPILER_REVISION'],
        pattern: re(String.raw`(?<![\w$])VERSION\s*=\s*["'](?<v>${VER})["'][\s\S]{0,300}?\bCOMPILER_REVISION\b`),
      },
    ],
  },
  {
    library: 'dompurify',
    signatures: [
      { source: 'banner', gate: ['DOMPurify'], pattern: re(String.raw`@license DOMPurify (?<v>${VER})`) },
      {
        source: 'banner',
        gate: ['cure53/DOMPurify'],
        pattern: re(String.raw`github\.com\/cure53\/DOMPurify\/blob\/(?<v>${VER})\/LICENSE`),
      },
      { source: 'content', gate: ['DOMPurify.version'], pattern: re(String.raw`(?<![\w$])DOMPurify\.version\s*=\s*["'](?<v>${VER})["']`) },
      {
        // DOMPurify.version = '2.0.7'; DOMPurify.removed = [];  (minified: a.version="2.5.6",a.removed=[])
        source: 'content',
        gate: ['.removed'],
        pattern: re(String.raw`\.version\s*=\s*["'](?<v>${VER})["']\s*[,;]${gap()}${IDENT}\.removed\s*=\s*\[\s*\]`),
      },
    ],
  },
  {
    library: 'vue',
    signatures: [
      { source: 'banner', gate: ['Vue.js v'], pattern: re(String.raw`(?:\/\*!?|\n)[ \t]*\*?[ \t]*Vue\.js v(?<v>${VER})`) },
      {
        // Object.defineProperty(Vue, 'FunctionalRenderContext', {...}); Vue.version = '2.6.14';
        source: 'content',
        gate: ['FunctionalRenderContext'],
        pattern: re(String.raw`["']FunctionalRenderContext["'][\s\S]{0,200}?\.version\s*=\s*["'](?<v>${verOf(2)})["']`),
      },
    ],
  },
]

const MAX_MATCHES_PER_SIGNATURE = 5
/** Version-shaped matches examined per signature and script: bounds the work on pathological input. */
const MAX_CANDIDATES_PER_SIGNATURE = 1_000
const MAX_SCRIPTS_LISTED = 5
const MAX_FINDINGS = 20

export interface LibraryDetection {
  library: string
  version: string
  script: string
  source: 'banner' | 'content'
  /** The text that gave the version away, whitespace collapsed and clipped. */
  excerpt: string
}

function excerptOf(text: string): string {
  return clip(text.replace(/\s+/g, ' ').trim(), 120)
}

function nearMarker(body: string, index: number, near: NonNullable<Signature['near']>): boolean {
  const window = body.slice(Math.max(0, index - near.before), index + near.after)
  return near.markers.some((m) => window.includes(m))
}

/** Every library version one script's content reveals. */
export function detectLibraries(script: ScriptArtifact): LibraryDetection[] {
  const body = script.body
  const found: LibraryDetection[] = []
  const seen = new Set<string>()
  for (const detector of DETECTORS) {
    for (const sig of detector.signatures) {
      if (!sig.gate.some((g) => body.includes(g))) continue
      if (sig.near && !sig.near.markers.some((marker) => body.includes(marker))) continue
      let matches = 0
      let candidates = 0
      for (const m of body.matchAll(sig.pattern)) {
        if (++candidates > MAX_CANDIDATES_PER_SIGNATURE) break
        const version = m.groups?.v
        if (!version || !parseVersion(version)) continue
        if (sig.near && !nearMarker(body, m.index ?? 0, sig.near)) continue
        const key = `${detector.library}@${version}`
        if (!seen.has(key)) {
          seen.add(key)
          found.push({ library: detector.library, version, script: script.url, source: sig.source, excerpt: excerptOf(m[0]) })
        }
        if (++matches >= MAX_MATCHES_PER_SIGNATURE) break
      }
    }
  }
  return found
}

interface Instance {
  entry: LibraryEntry
  version: string
  scripts: string[]
  source: 'banner' | 'content'
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
    'Versions come from script content only: official banners (/*! jQuery v3.4.1 |, @license AngularJS v1.7.9, Bootstrap v3.3.7 (https://getbootstrap.com), //! version : 2.29.1, @license DOMPurify 2.0.7) and the libraries\' own version constants in their minified form (jQuery\'s "3.4.1",k=function(e,t){return new k.fn.init(e,t)}, Lodash\'s VERSION next to its internal markers, AngularJS\'s {full:"1.7.9",major:1,...,codeName}, Bootstrap\'s VERSION beside its bs.* data keys, DOMPurify.version, Handlebars VERSION beside COMPILER_REVISION). File names are never used: jquery-3.4.1.min.js holding 3.7.1 is 3.7.1. A script that mentions a library without a readable version, a plugin named after one ("jQuery UI Touch Punch 0.2.3"), and a banner crediting another project ("Based on Underscore.js 1.8.3") are not findings. Fails when an advisory with a fixed release applies; warns when the only advisories have no fixed release in that line (end-of-life Bootstrap 3/4, AngularJS 1.8.x); reports info for end-of-life versions without open advisories (Vue 2, jQuery 1.x and 2.x, discontinued libraries such as YUI, MooTools and Prototype). For the RetireJS libraries, only their content extractors are used (never file names or URLs) and each runs only when its literal text is in the script. Severity follows the worst advisory, at most high. Advisory ranges are semver ranges from the GitHub Advisory Database, table reviewed ' +
    ADVISORY_DATA +
    '.',
  severity: 'high',
  fix: {
    generic:
      'Upgrade the library to the fixed version shown (npm install jquery@^3.7.1, then rebuild), or replace it; for files served from' +
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
  requires: ['scripts'],
  run: ({ scripts }) => {
    const byKey = new Map<string, Instance>()
    for (const script of scripts) {
      const detections = [
        ...detectLibraries(script).map((d) => ({ ...d, entry: libraryEntry(d.library) })),
        ...detectRepositoryLibraries(script).map((d) => ({ ...d, source: 'content' as const, entry: repositoryEntry(d.library) })),
      ]
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
    const instances = [...byKey.values()]
    const failing = instances.filter((i) => i.fixable.length > 0)
    const warning = instances.filter((i) => i.fixable.length === 0 && i.unfixed.length > 0)
    const eolOnly = instances.filter((i) => i.fixable.length === 0 && i.unfixed.length === 0 && i.endOfLife.length > 0)
    const findings = [...failing, ...warning, ...eolOnly]
    const evidence = {
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

    if (failing.length > 0) {
      const all = failing.flatMap((i) => [...i.fixable, ...i.unfixed])
      const first = failing[0]!
      const fix = highestFix(first)
      const ids = first.fixable.map((a) => a.ids[0]!).slice(0, 3)
      const more = failing.length > 1 ? `; ${failing.length - 1} more vulnerable librar${failing.length === 2 ? 'y' : 'ies'}` : ''
      return {
        status: 'fail',
        severity: worstSeverity(all),
        evidence,
        summary: `${label(first)} has known vulnerabilities (${ids.join(', ')}${first.fixable.length > 3 ? ', ...' : ''})${fix ? `, fixed in ${fix}` : ''}${more}.`,
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
