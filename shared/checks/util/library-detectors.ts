// Reads the library names and versions one script's content reveals: license banners and the libraries' own
// version constants, matched by hand-written signatures that stay linear on hostile input. File names are
// never used. The check (security/vulnerable-js-library.ts) matches what is found against advisories.
import type { ScriptArtifact } from '../types.ts'
import { clip } from './http.ts'
import { parseVersion } from './semver.ts'

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
        // lodash.min.js: An.VERSION="4.17.15",r("bind bindKey curry curryRight partial partialRight".split(" "),...
        source: 'content',
        gate: ['bind bindKey curry curryRight partial partialRight'],
        pattern: re(
          String.raw`\.VERSION\s*=\s*["'](?<v>${VER})["']\s*[,;][^"']{0,60}["']bind["']?,?\s*["']?bindKey["']?,?\s*["']?curry["']?,?\s*["']?curryRight["']?,?\s*["']?partial["']?,?\s*["']?partialRight`,
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
      // angular.js: "@license AngularJS v1.8.2"; angular.min.js: "/*\n AngularJS v1.8.2\n (c) 2010-2020 Google LLC."
      { source: 'banner', gate: ['AngularJS v'], pattern: re(String.raw`(?:@license\s{1,8}|\/\*\s{0,8})AngularJS v(?<v>${VER})`) },
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
