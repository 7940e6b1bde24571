// An audit's map of the site's API across its pages. The start URL's scan (gather) probes what the start page
// revealed; every other page's fetch/XHR calls are collected here as the lanes read them, and once the lanes
// are done the API paths, GraphQL endpoints and API prefixes that only other pages used get the same probes
// (CORS with a foreign and a "null" Origin, introspection, one GET of a path that cannot exist), within a
// budget of their own. The site checks that read the page's traffic and the API probes (debug-error-page,
// cors-wildcard-api, cors-credentialed-reflection, exposed-api-docs) then judge the whole site's calls and
// every probe, not only the start page's.
import { API_PROBE_BUDGET } from '../../shared/checks/probe-paths.ts'
import type { ApiCall, ApiProbe, Artifacts } from '../../shared/checks/types.ts'
import { parseUrl } from '../../shared/checks/util/http.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import { revealedPlans, sendApiProbes } from '../gather/api-probes.ts'

export const SITE_API_LIMITS = {
  /** Distinct calls kept across the site (method, path, and whether it failed), bodies already capped per call. */
  calls: 60,
  /** Probes sent after the crawl for what pages other than the start page revealed. */
  probes: API_PROBE_BUDGET,
}

const keyOf = (c: ApiCall): string => {
  const u = parseUrl(c.url)
  return `${c.method} ${u ? u.origin + u.pathname : c.url} ${c.status >= 400 || c.status === 0 ? 'failed' : 'ok'}`
}
/** A probe, by what makes it another request: kind, URL and the Origin sent. */
const probeKey = (p: { kind: string; url: string; origin?: string }) => `${p.kind} ${p.url} ${p.origin ?? ''}`

/** The calls of every page, each distinct call once, in the order pages were read. */
export class SiteApi {
  private readonly calls = new Map<string, ApiCall>()

  constructor(private readonly limit = SITE_API_LIMITS.calls) {}

  add(calls: readonly ApiCall[] | undefined): void {
    for (const c of calls ?? []) {
      if (this.calls.size >= this.limit) return
      const key = keyOf(c)
      if (!this.calls.has(key)) this.calls.set(key, c)
    }
  }

  get size(): number {
    return this.calls.size
  }

  /**
   * The start page's artifacts with every page's calls added to its traffic, and the probes of what those
   * calls revealed beyond what the start page's scan already probed (same kind, URL and Origin are not sent
   * again). `sent` is how many of those were sent.
   */
  async probe(site: Artifacts, proxy: EgressProxy, timeoutMs: number): Promise<{ artifacts: Artifacts; sent: number }> {
    const start = site.page
    if (!start) return { artifacts: site, sent: 0 }
    const own = new Set((start.api?.calls ?? []).map(keyOf))
    const others = [...this.calls.entries()].filter(([k]) => !own.has(k)).map(([, c]) => c)
    if (others.length === 0) return { artifacts: site, sent: 0 }
    const before = site.apiProbes ?? []
    const probed = new Set(before.map(probeKey))
    const plans = revealedPlans(
      { ...start, html: '', api: { calls: others, unlisted: 0, websockets: [] } },
      site.target.finalUrl,
      new Set(),
    )
      .filter((p) => !probed.has(probeKey(p)))
      .slice(0, SITE_API_LIMITS.probes)
    const extra: ApiProbe[] = await sendApiProbes(plans, proxy, timeoutMs)
    const api = { ...(start.api ?? { unlisted: 0, websockets: [] }), calls: [...(start.api?.calls ?? []), ...others] }
    return { artifacts: { ...site, page: { ...start, api }, apiProbes: [...before, ...extra] }, sent: extra.length }
  }
}
