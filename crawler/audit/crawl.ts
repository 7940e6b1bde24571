// The crawl engine of a whole-site audit. One call crawls one origin:
//   1. gather() the start URL once: the site-level artifacts (exposed files, TLS, https redirect, CORS)
//      and the origin the crawl stays on (where the start URL's redirects end);
//   2. seed the frontier (seed.ts): robots.txt (obeyed, RFC 9309), the start URL and any resumed pages'
//      links, and the sitemaps, read beside the lanes;
//   3. `concurrency` lanes (lane-pool.ts), each a tab that navigates from page to page (lane.ts) in the one
//      browser context the lanes share (lane-context.ts), take URLs breadth first, load each under a hard deadline, judge it with the
//      page-level checks, hand it to hooks.onPage and queue its same-origin links (lane-runner.ts);
//   4. probe what the other pages' API calls revealed (site-api.ts) and run the site-level checks on the start
//      URL's scan with every page's calls and every probe.
// The run (run.ts) holds why it stops and what it counted. Every connection, browser and plain HTTP, goes
// through one egress proxy for the crawl (gather() keeps its own, as for any scan). Stops on the page,
// depth and wall-time caps, on abort, or when nothing is left. Pages still loading at a stop are dropped
// unreported, so a resumed run visits them.
import { isLogoutUrl } from '../../shared/protocol/audit-auth.ts'
import { logIn } from './auth.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import { runCheck } from '../../shared/checks/runner.ts'
import { gather } from '../gather/index.ts'
import { CRAWL, type CrawlDeps, type CrawlHooks, type CrawlOptions } from './crawl-options.ts'
import { Frontier } from './frontier.ts'
import { LanePool, PageDispatch } from './lane-pool.ts'
import { laneRunner, laneSettings } from './lane-runner.ts'
import { SITE_CHECKS } from './page.ts'
import { SiteApi } from './site-api.ts'
import { CrawlRun, type CrawlSummary } from './run.ts'
import { crawlStart, Discovery, loadRobots, seedFrontier, seedFromSitemaps } from './seed.ts'

export type { CheckResult } from '../../shared/report/scan-report.ts'
export type { CrawledPage } from '../../shared/report/crawled-page.ts'
export type { CrawlSummary } from './run.ts'
export { CRAWL, type CrawlDeps, type CrawlHooks, type CrawlOptions } from './crawl-options.ts'

export async function crawlSite(opts: CrawlOptions, deps: CrawlDeps, hooks: CrawlHooks): Promise<CrawlSummary> {
  const log = deps.log.child({ crawl: opts.startUrl })
  const started = performance.now()
  const run = new CrawlRun(opts.signal, opts.maxDurationMs)
  const lanes = new LanePool()
  let proxy: EgressProxy | null = null
  try {
    // Site level first: a blocked or unreachable target fails here (AppError), before any lane starts.
    const site = await run.unlessHalted(gatherSite(opts, deps))
    if (!site) return run.summary(0, [])
    const { origin, startUrl } = crawlStart(opts, site.artifacts.target)
    const { auth } = opts
    const scrub = auth?.scrub ?? ((x: string) => x)

    proxy = await startEgressProxy(deps.policy)
    // A login form is filled once; its cookies and storage then open the lanes' context.
    const login = auth?.credentials.login
    const storageState = login ? await logIn(deps.browser, proxy, login, opts.navTimeoutMs, scrub) : undefined
    const { robots, status: robotsStatus } = await loadRobots(origin, proxy, deps.probeTimeoutMs, run.signal)
    const crawlDelayMs = Math.min(robots.crawlDelayMs ?? 0, CRAWL.maxCrawlDelayMs)
    log.info('crawl starting', { origin, robotsStatus, crawlDelayMs, concurrency: opts.concurrency })

    const frontier = new Frontier(opts.maxDepth, (u) => robots.isAllowed(u.pathname + u.search) && !(auth && isLogoutUrl(u)))
    const found = new Discovery(frontier, run, hooks.onDiscovered)
    seedFrontier(found, startUrl, origin, opts.resume ?? [])
    const dispatch = new PageDispatch(run, frontier, deps.browser, {
      budget: Math.max(0, opts.maxPages - (opts.resume?.length ?? 0)),
      crawlDelayMs,
      recycleAfterPages: CRAWL.recycleAfterPages,
    })
    void seedFromSitemaps(origin, robots.sitemaps, proxy, deps.probeTimeoutMs, run.signal, found, log).finally(() => {
      dispatch.sitemapsDone()
      found.report()
      run.wake()
    })

    const settings = laneSettings(origin, opts, storageState)
    const resumed = (opts.resume?.length ?? 0) > 0
    const siteApi = new SiteApi()
    const context = { run, dispatch, found, hooks, browser: deps.browser, proxy, settings, log, scrub, resumed, siteApi }
    lanes.start(Math.max(1, opts.concurrency), laneRunner(auth ? { ...context, auth } : context))
    await lanes.done()
    run.rethrowHookError()
    // What other pages revealed of the API is probed now, and the site checks judge every page's calls.
    const judged = opts.signal.aborted
      ? { artifacts: site.artifacts, sent: 0 }
      : await siteApi.probe(site.artifacts, proxy, deps.probeTimeoutMs)
    const siteChecks = SITE_CHECKS.map((c) => runCheck(c, judged.artifacts))
    log.info('crawl finished', {
      scanned: run.scanned,
      failed: run.failed,
      discovered: frontier.size,
      apiCalls: siteApi.size,
      apiProbesAfter: judged.sent,
      ms: Math.round(performance.now() - started),
    })
    return run.summary(frontier.size, siteChecks)
  } finally {
    run.end()
    await lanes.settled()
    await proxy?.stop().catch(() => {})
  }
}

/** The site-level scan of the start URL: its site checks' artifacts, and where it landed. */
function gatherSite(opts: CrawlOptions, deps: CrawlDeps) {
  return gather(opts.startUrl, {
    policy: deps.policy,
    browser: deps.browser,
    navTimeoutMs: opts.navTimeoutMs,
    probeTimeoutMs: deps.probeTimeoutMs,
    trustedSpki: deps.trustedSpki,
    // Only the site checks are taken from it, and none reads accessibility: the lanes' pages carry it.
    axe: false,
  })
}
