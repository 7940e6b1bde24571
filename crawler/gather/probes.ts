// Requests for files that should not be served (PROBE_PATHS, and the known-application paths the main
// response calls for), the source maps the page's scripts point at, and the folders the page links (where a
// server may list them).
import { PROBE_PATHS } from '../../shared/checks/probe-paths.ts'
import type { BrowserRequest, HttpResponseArtifact, PageArtifact, ProbeResult, ScriptArtifact } from '../../shared/checks/types.ts'
import { startTags } from '../../shared/checks/util/html.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import { mapLimit } from '../../shared/lib/async.ts'
import { type AppProbes, appProbesFor } from './app-probes.ts'
import { fetchOnceWithHead } from './http-chain.ts'
import { GATHER_LIMITS } from './limits.ts'

export async function probe(origin: string, path: string, proxy: EgressProxy, timeoutMs: number): Promise<ProbeResult> {
  const url = origin + path
  const { fetched: got, head } = await fetchOnceWithHead(url, proxy, timeoutMs, GATHER_LIMITS.probeBody)
  if (!got.ok) return { path, url, status: 0, contentType: '', body: '', error: `${got.code}: ${got.reason}` }
  const { status, contentType, body, headers } = got.res
  const location = status >= 300 && status < 400 ? headers.location?.slice(0, 2_048) : undefined
  return { path, url, status, contentType, body, error: null, ...(head ? { head } : {}), ...(location ? { location } : {}) }
}

/** Same-origin source map URLs the loaded scripts point at (comment or SourceMap header). */
export function sourceMapUrls(scripts: ScriptArtifact[], requests: BrowserRequest[], origin: string): string[] {
  const found = new Set<string>()
  for (const s of scripts) {
    if (s.inline) continue
    const m = /\/\/[#@] sourceMappingURL=([^\s'"]+)\s*$/.exec(s.body.slice(-2_000))
    if (m && !m[1]!.startsWith('data:')) {
      try {
        found.add(new URL(m[1]!, s.url).href)
      } catch {}
    }
  }
  for (const r of requests) {
    const h = r.headers.sourcemap ?? r.headers['x-sourcemap']
    if (h && r.resourceType === 'script') {
      try {
        found.add(new URL(h, r.url).href)
      } catch {}
    }
  }
  return [...found].filter((u) => new URL(u).origin === origin).slice(0, GATHER_LIMITS.sourceMaps)
}

/**
 * Every path probe of one scan: PROBE_PATHS and the known-application paths this scan's main response calls
 * for, GATHER_LIMITS.probeConcurrency at once, keyed by path.
 */
export async function probePaths(
  finalUrl: string,
  main: Pick<HttpResponseArtifact, 'body' | 'headers'>,
  proxy: EgressProxy,
  timeoutMs: number,
): Promise<{ probes: Record<string, ProbeResult>; apps: AppProbes; sent: number }> {
  const origin = new URL(finalUrl).origin
  const apps = appProbesFor(finalUrl, main)
  const list = await mapLimit(
    [...PROBE_PATHS, ...apps.paths],
    GATHER_LIMITS.probeConcurrency,
    async (p) => [p, await probe(origin, p, proxy, timeoutMs)] as const,
  )
  return { probes: Object.fromEntries(list), apps, sent: list.length }
}

/** Links to pages, not files: their folder is not asked for. */
const PAGE_EXTENSION = /\.(?:html?|php\d?|aspx?|jsp|cgi|xhtml)$/i
const MAX_ANCHORS = 2_000

/**
 * Same-origin folders the rendered page names, as paths to ask for a listing: links ending in "/" first, then
 * the folders of linked files (/ftp/legal.md names /ftp/). Never the root, the page's own folder path or a
 * path already probed (with or without its trailing slash); at most GATHER_LIMITS.directoryLinks.
 */
export function directoryLinks(page: PageArtifact, finalUrl: string, probed: Iterable<string>): string[] {
  const base = new URL(finalUrl)
  const bare = (p: string) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p)
  const skip = new Set<string>(['/', bare(base.pathname)])
  for (const p of probed) skip.add(bare(p))
  const folders: string[] = []
  const ofFiles: string[] = []
  let n = 0
  for (const tag of startTags(page.html, ['a'])) {
    if (++n > MAX_ANCHORS) break
    const href = tag.attrs.href?.trim()
    if (!href || href.startsWith('#')) continue
    let u: URL
    try {
      u = new URL(href, base)
    } catch {
      continue
    }
    if (u.origin !== base.origin) continue
    const path = u.pathname
    if (path.endsWith('/')) folders.push(path)
    else {
      const last = path.slice(path.lastIndexOf('/') + 1)
      if (last.includes('.') && !PAGE_EXTENSION.test(last)) ofFiles.push(path.slice(0, path.lastIndexOf('/') + 1))
    }
  }
  const out: string[] = []
  for (const p of [...folders, ...ofFiles]) {
    if (out.length >= GATHER_LIMITS.directoryLinks) break
    if (skip.has(bare(p))) continue
    skip.add(bare(p))
    out.push(p)
  }
  return out
}
