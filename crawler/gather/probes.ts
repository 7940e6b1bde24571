// Requests for files that should not be served (PROBE_PATHS, and the known-application paths the main
// response calls for), and the source maps the page's scripts point at.
import { PROBE_PATHS } from '../../shared/checks/probe-paths.ts'
import type { BrowserRequest, HttpResponseArtifact, ProbeResult, ScriptArtifact } from '../../shared/checks/types.ts'
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
