// Source maps of the page's own scripts: they map minified code back to file names, and with
// sourcesContent they carry the original source itself.

import { defineCheck } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, probeEvidence } from '../util/probe.ts'

const MAX_MAPS = 10
const SAMPLE_SOURCES = 5
const MAX_SOURCES_COUNTED = 20_000

export interface SourceMapShape {
  /** Entries of `sources` (summed over the sections of an index map). */
  sources: number
  /** True when the body was cut before the end of the sources list: the count is a lower bound. */
  sourcesAtLeast: boolean
  /** At least one source's original text is embedded (`sourcesContent` with a string entry). */
  sourcesContent: boolean
  sample: string[]
}

/** The XSSI guard some servers put in front of JSON: )]}' on the first line. */
const XSSI = /^\)\]\}'[^\n]*\n/

function fromParsed(map: unknown, depth = 0): SourceMapShape | null {
  if (!map || typeof map !== 'object' || Array.isArray(map)) return null
  const m = map as Record<string, unknown>
  if (m.version !== 3) return null
  if (Array.isArray(m.sections) && depth === 0) {
    const parts = m.sections.map((s) => fromParsed((s as { map?: unknown } | null)?.map, 1)).filter((p): p is SourceMapShape => p !== null)
    if (parts.length === 0) return null
    return {
      sources: parts.reduce((n, p) => n + p.sources, 0),
      sourcesAtLeast: false,
      sourcesContent: parts.some((p) => p.sourcesContent),
      sample: parts.flatMap((p) => p.sample).slice(0, SAMPLE_SOURCES),
    }
  }
  const sources = Array.isArray(m.sources) ? m.sources : null
  if (sources === null || typeof m.mappings !== 'string') return null
  const content = Array.isArray(m.sourcesContent) && m.sourcesContent.some((c) => typeof c === 'string' && c.length > 0)
  return {
    sources: sources.length,
    sourcesAtLeast: false,
    sourcesContent: content,
    sample: sources
      .filter((s): s is string => typeof s === 'string')
      .slice(0, SAMPLE_SOURCES)
      .map((s) => clip(s, 120)),
  }
}

const JSON_STRING = /"(?:[^"\\]|\\.){0,2000}"/y
const SEPARATOR = /\s*(,|\])\s*/y

/** Reads the string array that starts at `from` (just after "["); stops at "]" or where the body was cut. */
function readStringArray(body: string, from: number): { items: string[]; count: number; closed: boolean } {
  const items: string[] = []
  let count = 0
  let i = from
  while (count < MAX_SOURCES_COUNTED) {
    while (i < body.length && /\s/.test(body[i]!)) i++
    if (body[i] === ']') return { items, count, closed: true }
    if (body.startsWith('null', i)) {
      i += 4
    } else {
      JSON_STRING.lastIndex = i
      const s = JSON_STRING.exec(body)
      if (!s) return { items, count, closed: false }
      if (items.length < SAMPLE_SOURCES) {
        try {
          items.push(clip(JSON.parse(s[0]) as string, 120))
        } catch {
          items.push(clip(s[0].slice(1, -1), 120))
        }
      }
      i = JSON_STRING.lastIndex
    }
    count++
    SEPARATOR.lastIndex = i
    const sep = SEPARATOR.exec(body)
    if (!sep) return { items, count, closed: false }
    if (sep[1] === ']') return { items, count, closed: true }
    i = SEPARATOR.lastIndex
  }
  return { items, count, closed: false }
}

/**
 * A body cut at the gatherer's size limit no longer parses: read its head instead. It must open a JSON
 * object declaring "version": 3 near the start and a "sources" array (or index-map "sections"); "mappings" often comes
 * after sourcesContent and is then cut off.
 */
function fromTruncated(body: string): SourceMapShape | null {
  if (!body.startsWith('{')) return null
  if (!/"version"\s*:\s*3\s*[,}]/.test(body.slice(0, 2_000))) return null
  const sources = /"sources"\s*:\s*\[/.exec(body)
  if (!sources && !/"sections"\s*:\s*\[/.test(body.slice(0, 2_000))) return null
  const read = sources ? readStringArray(body, sources.index + sources[0].length) : { items: [], count: 0, closed: false }
  return {
    sources: read.count,
    sourcesAtLeast: !read.closed,
    sourcesContent: /"sourcesContent"\s*:\s*\[\s*(?:null\s*,\s*){0,200}"(?:[^"\\]|\\.)/.test(body),
    sample: read.items,
  }
}

/** Whether a body is a source map (revision 3), and what it reveals. Never throws. */
export function readSourceMap(body: string): SourceMapShape | null {
  const text = body
    .replace(/^\uFEFF/, '')
    .replace(XSSI, '')
    .trimStart()
  if (!text.startsWith('{')) return null
  try {
    return fromParsed(JSON.parse(text))
  } catch {
    return fromTruncated(text)
  }
}

export const exposedSourceMaps = defineCheck({
  id: 'exposed-source-maps',
  category: 'exposure',
  title: 'No source maps are served for the site\u2019s scripts',
  failTitle: 'Source maps are served for the site\u2019s scripts',
  description:
    'Fetches the same-origin source maps that the page\u2019s scripts name (sourceMappingURL comment or SourceMap header) and judges ' +
    'whether each is a real source map.',
  why:
    'A source map turns minified code back into the original file tree, names and comments; with sourcesContent embedded it hands out ' +
    'the original source, which makes finding bugs, hidden endpoints and leftover secrets much easier.',
  confirmation:
    'Confirmed by content: the body must be JSON with "version": 3 and a "sources" array with "mappings" (or index-map "sections"); a' +
    ' map cut at the gatherer\u2019s size limit is recognised by its opening. Not findings: a map URL that answers 404, an HTML page ' +
    '(a single-page app answering index.html), or the same answer as a path that cannot exist. Medium when the map lists file names ' +
    'only; high when sourcesContent embeds original source. Evidence: map URLs, number of sources, a few source paths, whether ' +
    'sourcesContent is embedded.',
  severity: 'medium',
  fix: {
    generic:
      'Stop publishing source maps for production: build without them, or upload them to your error tracker (Sentry, Datadog) as ' +
      'private artifacts and delete them from the deployed files.',
    vercel:
      'Turn off browser source maps in the framework build (Next.js: productionBrowserSourceMaps: false, the default; Vite: ' +
      'build.sourcemap: false or "hidden") and redeploy; upload maps to your error tracker in CI instead.',
    netlify:
      'Build without public maps (Vite: build: { sourcemap: "hidden" }), delete *.map from the publish directory in the build command ' +
      '(find dist -name "*.map" -delete), or upload them with the Sentry Netlify plugin instead.',
    nextjs:
      'In next.config.js keep productionBrowserSourceMaps: false (the default). To keep maps for an error tracker, use @sentry/nextjs ' +
      'with sourcemaps: { deleteSourcemapsAfterUpload: true }.',
    nginx:
      'Stop serving maps in the server block:\nlocation ~* \\.map$ {\n  return 404;\n}\nand build with hidden source maps (no ' +
      'sourceMappingURL comment).',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (ends_with(http.request.uri.path, ".map")) -> Block; and build without public ' +
      'source maps.',
  },
  fixTarget: { kind: 'served-file' },
  requires: ['sourceMaps', 'probes'],
  optional: ['page'],
  run: ({ sourceMaps, probes, page }) => {
    if (sourceMaps.length === 0) {
      return page === null
        ? {
            status: 'skipped',
            evidence: { reason: 'The page did not load in the browser, so its scripts and their source maps are unknown.' },
            summary: 'Not applicable: the page\u2019s scripts could not be read.',
          }
        : { status: 'pass', evidence: { maps: 0 }, summary: 'The page\u2019s scripts name no same-origin source map.' }
    }
    const judgements = sourceMaps.map((map) => confirmByContent(map, probes, 'a source map', readSourceMap))
    const served = confirmedOnly(judgements)
    if (served.length === 0) {
      const answered = judgements.some((j) => j.state === 'absent')
      const checked = judgements.map((j) =>
        j.state === 'not-probed' ? { url: j.path } : { ...probeEvidence(j.probe), reason: j.state === 'confirmed' ? 'Served.' : j.reason },
      )
      return answered
        ? { status: 'pass', evidence: { checked }, summary: `The ${sourceMaps.length} source map URL(s) the scripts name are not served.` }
        : { status: 'skipped', evidence: { checked }, summary: 'Not applicable: no source map request got an answer.' }
    }
    const maps = served.slice(0, MAX_MAPS).map(({ probe, found }) => ({
      ...probeEvidence(probe),
      sources: found.sources,
      ...(found.sourcesAtLeast ? { sourcesAtLeast: true } : {}),
      sourcesContent: found.sourcesContent,
      sampleSources: found.sample,
    }))
    const withContent = served.filter((s) => s.found.sourcesContent).length
    const sources = served.reduce((n, s) => n + s.found.sources, 0)
    return {
      status: 'fail',
      severity: withContent > 0 ? 'high' : 'medium',
      evidence: {
        url: served[0]!.probe.url,
        maps,
        total: served.length,
        withSourcesContent: withContent,
        truncated: served.length > MAX_MAPS,
      },
      summary:
        `${served.length} source map(s) served, listing ${sources} source file(s)` +
        (withContent > 0
          ? `; ${withContent} embed the original source (sourcesContent), e.g. ${served.find((s) => s.found.sourcesContent)!.probe.url}.`
          : `, e.g. ${served[0]!.probe.url}.`),
    }
  },
})
