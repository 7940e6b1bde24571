// Collects every artifact of one scan, once: plain-HTTP chains and probes, and the page in Chromium, each by
// its own gatherer in this folder. Every connection goes through the scan's egress proxy, which refuses
// blocked addresses. Checks judge the artifacts afterwards; nothing here decides pass or fail.
import { API_PROBE_BUDGET, PROBE_BUDGET } from '../../shared/checks/probe-paths.ts'
import { APP_PROBE_BUDGET } from '../../shared/checks/probe-paths-apps.ts'
import type { ApiProbe, Artifacts } from '../../shared/checks/types.ts'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import { type EgressProxy, startEgressProxy } from '../../shared/egress/proxy.ts'
import { AppError } from '../../shared/errors.ts'
import type { BrowserPool } from '../browser.ts'
import { type AppProbes, appProbeCounts } from './app-probes.ts'
import { type ApiProbePlan, apiProbeCounts, revealedPlans, sendApiProbes, wellKnownPlans } from './api-probes.ts'
import { corsProbe } from './cors-probe.ts'
import { followChain, httpFormOf } from './http-chain.ts'
import { GATHER_LIMITS } from './limits.ts'
import { loadPage, type Loaded } from './page-reader.ts'
import { directoryLinks, probe, probePaths, sourceMapUrls } from './probes.ts'
import { probeTls } from './tls.ts'
import type { WarmPages } from './warm-page.ts'

export interface GatherOptions {
  policy: EgressPolicy
  browser: BrowserPool
  navTimeoutMs: number
  probeTimeoutMs: number
  /** Certificates trusted besides public CAs, by SPKI hash (as the browser is told). */
  trustedSpki?: string[]
  progress?: (progress: number, message: string) => void
  /** Pages opened ahead of scans, made with the same policy. */
  warm?: WarmPages
  /** The account the scan is for: its page may be kept for that account's next scan (kept-pages.ts). */
  owner?: string
  /** false: no axe run (a crawl's site level judges no accessibility; its pages do). Default true. */
  axe?: boolean
}

export interface Gathered {
  artifacts: Artifacts
  timings: Record<string, number>
  /**
   * Probe requests made, against PROBE_BUDGET; the API probes among them apart, against API_PROBE_BUDGET, and
   * the known-application probes apart, against APP_PROBE_BUDGET.
   */
  probes: {
    budget: number
    sent: number
    concurrency: number
    api: { budget: number; sent: number; cors: number; graphql: number; openapi: number; errors: number }
    apps: ReturnType<typeof appProbeCounts>
  }
}

export async function gather(rawUrl: string, opts: GatherOptions): Promise<Gathered> {
  const timings: Record<string, number> = {}
  const t0 = performance.now()
  const mark = (name: string, since: number) => (timings[name] = Math.round(performance.now() - since))
  const target = new URL(rawUrl)
  // A page a worker opened while it waited (crawler/gather/warm-page.ts), with its own proxy, or new ones.
  const slot = opts.warm ? await opts.warm.take(opts.owner).catch(() => null) : null
  const proxy = slot?.proxy ?? (await startEgressProxy(opts.policy))
  mark('pageOpen', t0)
  try {
    opts.progress?.(10, 'fetching over HTTP and loading in the browser')
    const tChain = performance.now()
    const mainP = followChain(target.href, proxy, opts.probeTimeoutMs).finally(() => mark('httpChain', tChain))
    const tPage = performance.now()
    // The next scan's slot is made while this page waits for network quiet (warm-page.ts prepareNext).
    const loading = { ...opts, ...(slot ? { opened: slot } : {}), onLoaded: () => opts.warm?.prepareNext() }
    const pageP = loadPage(target.href, proxy, loading).finally(() => mark('browser', tPage))
    const httpForm = httpFormOf(target)
    const httpP = httpForm && httpForm !== target.href ? followChain(httpForm, proxy, opts.probeTimeoutMs) : null
    // Awaited below, after the plain-HTTP view and the probes: a browser that fails first (closed, crashed)
    // must not count as an unhandled rejection meanwhile. Its error still reaches the scan there.
    pageP.catch(() => {})

    const main = await mainP
    if (!main.last.ok) {
      // The page may still load in the browser, but without the plain-HTTP view there is no report.
      await pageP.catch(() => {})
      throw new AppError(main.last.code, `${target.href}: ${main.last.reason}`)
    }
    const finalUrl = main.chain.finalUrl ?? target.href
    const finalOrigin = new URL(finalUrl).origin
    opts.progress?.(40, 'probing for exposed files')
    const tProbe = performance.now()
    const finalAsUrl = new URL(finalUrl)
    const known = wellKnownPlans(finalOrigin)
    const [pathProbes, cors, tls, knownProbes] = await Promise.all([
      probePaths(finalUrl, main.last.res, proxy, opts.probeTimeoutMs),
      corsProbe(finalUrl, proxy, opts.probeTimeoutMs),
      finalAsUrl.protocol === 'https:'
        ? probeTls(finalAsUrl, proxy.port, { timeoutMs: opts.probeTimeoutMs, trustedSpki: opts.trustedSpki ?? [], now: Date.now() })
        : null,
      sendApiProbes(known, proxy, opts.probeTimeoutMs),
    ])
    const { probes, apps } = pathProbes
    mark('probes', tProbe)
    const [loaded, httpChain] = await Promise.all([pageP, httpP])
    Object.assign(timings, loaded.phases)
    const { sourceMaps, folders, apiProbes } = await probeWhatLoaded(
      loaded,
      finalUrl,
      { known, knownProbes, probed: Object.keys(probes) },
      proxy,
      opts.probeTimeoutMs,
    )
    for (const f of folders) probes[f.path] = f
    opts.progress?.(80, 'page loaded; judging')
    const artifacts: Artifacts = {
      target: { url: target.href, finalUrl, origin: finalOrigin, scheme: finalUrl.startsWith('https:') ? 'https' : 'http' },
      mainResponse: main.last.res,
      redirectChain: main.chain,
      httpRedirect: httpChain ? httpChain.chain : target.protocol === 'http:' ? main.chain : null,
      page: loaded.page,
      scripts: loaded.scripts,
      probes,
      sourceMaps,
      cors,
      apiProbes,
      tls,
      accessibility: loaded.accessibility,
      performance: loaded.performance,
    }
    timings.gather = Math.round(performance.now() - t0)
    return { artifacts, timings, probes: probeCounts(pathProbes.sent + sourceMaps.length + folders.length, apiProbes, apps) }
  } finally {
    if (slot) opts.warm!.giveBack(slot, opts.owner)
    else await proxy.stop().catch(() => {})
    // The next scan's page opens once the worker waits for work (or in the next scan's own quiet wait).
    opts.warm?.prepareWhenIdle()
  }
}

/**
 * Once the page has loaded: the source maps its scripts name, the folders it links (for a listing), and what it
 * revealed about its API (paths, GraphQL, documents, error pages).
 */
async function probeWhatLoaded(
  loaded: Loaded,
  finalUrl: string,
  wellKnown: { known: ApiProbePlan[]; knownProbes: ApiProbe[]; probed: string[] },
  proxy: EgressProxy,
  timeoutMs: number,
) {
  const origin = new URL(finalUrl).origin
  const mapUrls = sourceMapUrls(loaded.scripts, loaded.page?.requests ?? [], origin)
  const revealed = loaded.page ? revealedPlans(loaded.page, finalUrl, new Set(wellKnown.known.map((p) => p.url))) : []
  const folderPaths = loaded.page ? directoryLinks(loaded.page, finalUrl, wellKnown.probed) : []
  const [sourceMaps, folders, revealedProbes] = await Promise.all([
    Promise.all(mapUrls.map((u) => probe(origin, new URL(u).pathname + new URL(u).search, proxy, timeoutMs))),
    Promise.all(folderPaths.map((p) => probe(origin, p, proxy, timeoutMs))),
    sendApiProbes(revealed, proxy, timeoutMs),
  ])
  return { sourceMaps, folders, apiProbes: [...wellKnown.knownProbes, ...revealedProbes] }
}

/**
 * The probe requests made (paths, application paths and source maps, then the API probes) against their
 * budgets, as the report states them.
 */
function probeCounts(pathsAndMaps: number, apiProbes: ApiProbe[], apps: AppProbes): Gathered['probes'] {
  return {
    budget: PROBE_BUDGET + API_PROBE_BUDGET + APP_PROBE_BUDGET,
    sent: pathsAndMaps + apiProbes.length,
    concurrency: GATHER_LIMITS.probeConcurrency,
    api: apiProbeCounts(apiProbes),
    apps: appProbeCounts(apps),
  }
}
