// The crawl engine of a whole-site audit. One call crawls one origin:
//   1. gather() the start URL once: the site-level checks (exposed files, TLS, https redirect, CORS)
//      and the origin the crawl stays on (where the start URL's redirects end);
//   2. robots.txt (obeyed, RFC 9309) and sitemaps (robots' Sitemap lines, else /sitemap.xml; indexes
//      followed) seed the frontier beside the start URL and any resumed pages' links;
//   3. `concurrency` lanes (lane-pool.ts), each a browser context with one tab that navigates from page to
//      page (lane.ts), take URLs breadth first, load each under a hard deadline, judge it with the
//      page-level checks, hand it to hooks.onPage and queue its same-origin links.
// The run (run.ts) holds why it stops and what it counted. Every connection, browser and plain HTTP, goes
// through one egress proxy for the crawl (gather() keeps its own, as for any scan). Stops on the page,
// depth and wall-time caps, on abort, or when nothing is left. Pages still loading at a stop are dropped
// unreported, so a resumed run visits them.
import type { Page } from 'playwright-core'
import { type AuditAuth, isLogoutUrl, sentToLogin } from '../../shared/protocol/audit-auth.ts'
import { AppError, errorMessage } from '../../shared/errors.ts'
import { logIn } from './auth.ts'
import type { CrawledPage } from '../../shared/report/crawled-page.ts'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { runCheck } from '../../shared/checks/runner.ts'
import type { CheckResult } from '../../shared/report/scan-report.ts'
import type { BrowserPool } from '../browser.ts'
import { gather } from '../gather/index.ts'
import { bodyText, fetchBytes } from './fetch.ts'
import { Frontier, normaliseUrl } from './frontier.ts'
import { PageLane } from './lane.ts'
import { AxeSample, LanePool, PageDispatch } from './lane-pool.ts'
import { SITE_CHECKS } from './page.ts'
import { ROBOTS_MAX_BYTES, robotsFor, robotsForStatus, type Robots } from './robots.ts'
import { CrawlRun, type CrawlSummary } from './run.ts'
import { parseSitemap, SITEMAP_MAX_BYTES } from './sitemap.ts'

export type { CheckResult } from '../../shared/report/scan-report.ts'

export interface CrawlOptions {
  startUrl: string
  /** Pages visited in all, resumed ones included. */
  maxPages: number
  /** Link hops from the start URL (0: the start page only). Sitemap pages count as depth 1. */
  maxDepth: number
  maxDurationMs: number
  /** Pages in flight at once: one browser context (lane) each. The crawl stays on one origin, so this is per host. */
  concurrency: number
  navTimeoutMs: number
  signal: AbortSignal
  /** Pages already done by an earlier holder of this audit: not visited again; their links seed the frontier. */
  resume?: Array<{ url: string; depth: number; links: string[] }>
  /**
   * An authenticated crawl (audit_authenticated): the credentials, and the scrubber that takes every secret
   * out of what the crawl reports (errors, logs). The crawl stays on the start URL's origin, never follows a
   * logout link, and stops when a page is sent to a login page (stoppedBy sessionLost).
   */
  auth?: { credentials: AuditAuth; scrub: (s: string) => string }
}

export type { CrawledPage } from '../../shared/report/crawled-page.ts'

export interface CrawlHooks {
  /** Distinct pages known so far (resumed, visited, queued); called when it changes. */
  onDiscovered(total: number): void
  /** Lane `lane`'s tab is about to navigate to `url` (the viewer may attach to it). Must not throw or block. */
  onPageStart(url: string, page: Page, lane: number): void
  /**
   * A page is done. `tab` is the lane's tab still showing it, when it loaded (the replay takes its still).
   * Awaited; a rejection stops the crawl and crawlSite rejects with it.
   */
  onPage(page: CrawledPage, tab?: { page: Page; lane: number }): Promise<void>
}

export type { CrawlSummary } from './run.ts'

export interface CrawlDeps {
  /** The crawler's browser pool; recycled every CRAWL.recycleAfterPages pages. */
  browser: BrowserPool
  policy: EgressPolicy
  log: Logger
  /** Certificates trusted besides public CAs, by SPKI hash (for the site-level TLS probe). */
  trustedSpki: string[]
  probeTimeoutMs: number
}

export const CRAWL = {
  /** Our product token in robots.txt user-agent lines (it is also in the User-Agent header). */
  robotsToken: 'AppAudit',
  /** Pages served by one Chromium before it is replaced: its memory grows with every page. */
  recycleAfterPages: 100,
  /** A page task gets navTimeoutMs plus this to read, judge and close, then it is killed. */
  pageDeadlineExtraMs: 5_000,
  /** Added to that deadline for a page axe runs on (at most CRAWL_LIMITS.axeMaxPages per crawl). */
  axeExtraMs: 10_000,
  /** Closing a page or context that does not answer in this time: the lane gives up on that context. */
  closeTimeoutMs: 3_000,
  /** Crawl-delay obeyed up to this much; a site asking more still gets this. */
  maxCrawlDelayMs: 5_000,
  /** Sitemap files read (index files included) and page URLs taken from them. */
  maxSitemapFiles: 20,
  maxSitemapPages: 10_000,
  /** Images, fonts and media not loaded while crawling. */
  blockMedia: true,
}

async function loadRobots(
  origin: string,
  proxy: EgressProxy,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ robots: Robots; status: number | null }> {
  const got = await fetchBytes(`${origin}/robots.txt`, proxy, timeoutMs, ROBOTS_MAX_BYTES, signal)
  if (!got.ok) return { robots: robotsForStatus(null), status: null }
  if (got.status >= 200 && got.status < 300)
    return { robots: robotsFor(bodyText(got.body, ROBOTS_MAX_BYTES), CRAWL.robotsToken), status: got.status }
  return { robots: robotsForStatus(got.status), status: got.status }
}

/** Page URLs from the sitemaps, indexes followed breadth first; bounded in files and URLs. */
async function loadSitemaps(
  origin: string,
  named: string[],
  proxy: EgressProxy,
  timeoutMs: number,
  signal: AbortSignal,
  add: (url: string) => void,
): Promise<void> {
  // Sitemaps named in robots.txt may live elsewhere (the protocol's cross-submission); others must be on the origin.
  const queue = named.length ? [...named] : [`${origin}/sitemap.xml`]
  const seen = new Set<string>()
  let pages = 0
  while (queue.length > 0 && seen.size < CRAWL.maxSitemapFiles && !signal.aborted) {
    const url = queue.shift()!
    if (seen.has(url)) continue
    seen.add(url)
    const got = await fetchBytes(url, proxy, timeoutMs, SITEMAP_MAX_BYTES, signal)
    if (!got.ok || got.status !== 200) continue
    const parsed = parseSitemap(bodyText(got.body, SITEMAP_MAX_BYTES))
    for (const loc of parsed.locs) {
      if (parsed.kind === 'index') {
        const next = normaliseSitemapUrl(loc, origin)
        if (next) queue.push(next)
      } else if (pages < CRAWL.maxSitemapPages) {
        pages++
        add(loc)
      }
    }
  }
}

function normaliseSitemapUrl(loc: string, origin: string): string | null {
  try {
    const u = new URL(loc)
    return u.origin === origin ? u.href : null
  } catch {
    return null
  }
}

export async function crawlSite(opts: CrawlOptions, deps: CrawlDeps, hooks: CrawlHooks): Promise<CrawlSummary> {
  const log = deps.log.child({ crawl: opts.startUrl })
  const started = performance.now()
  const run = new CrawlRun(opts.signal, opts.maxDurationMs)
  const lanes = new LanePool()
  let proxy: EgressProxy | null = null
  let siteChecks: CheckResult[] = []
  try {
    // Site level first: a blocked or unreachable target fails here (AppError), before any lane starts.
    const site = await run.unlessHalted(
      gather(opts.startUrl, {
        policy: deps.policy,
        browser: deps.browser,
        navTimeoutMs: opts.navTimeoutMs,
        probeTimeoutMs: deps.probeTimeoutMs,
        trustedSpki: deps.trustedSpki,
        // Only the site checks are taken from it, and none reads accessibility: the lanes' pages carry it.
        axe: false,
      }),
    )
    if (!site) return run.summary(0, siteChecks)
    siteChecks = SITE_CHECKS.map((c) => runCheck(c, site.artifacts))
    const auth = opts.auth
    const scrub = auth?.scrub ?? ((x: string) => x)
    // The site checks read the start page without credentials, so it may have been redirected to a login
    // page: an authenticated crawl starts at the URL it was asked for, on its origin (or the https origin of
    // the same host, when the site redirected there).
    const asked = new URL(opts.startUrl)
    const landed = new URL(site.artifacts.target.finalUrl)
    const origin = !auth || landed.host === asked.host ? site.artifacts.target.origin : asked.origin
    const startFrom = auth ? `${origin}${asked.pathname}${asked.search}` : site.artifacts.target.finalUrl
    const startUrl = normaliseUrl(startFrom, startFrom, origin) ?? startFrom

    proxy = await startEgressProxy(deps.policy)
    // A login form is filled once; its cookies and storage then open every lane's context.
    const storageState = auth?.credentials.login
      ? await logIn(deps.browser, proxy, auth.credentials.login, opts.navTimeoutMs, scrub)
      : undefined
    const { robots, status: robotsStatus } = await loadRobots(origin, proxy, deps.probeTimeoutMs, run.signal)
    const crawlDelayMs = Math.min(robots.crawlDelayMs ?? 0, CRAWL.maxCrawlDelayMs)
    log.info('crawl starting', { origin, robotsStatus, crawlDelayMs, concurrency: opts.concurrency })

    const fr = new Frontier(opts.maxDepth, (u) => robots.isAllowed(u.pathname + u.search) && !(auth && isLogoutUrl(u)))
    let reported = -1
    const report = () => {
      if (fr.size === reported) return
      reported = fr.size
      try {
        hooks.onDiscovered(fr.size)
      } catch {}
    }
    const queueLinks = (links: string[], depth: number) => {
      let added = false
      for (const l of links) added = fr.add(l, depth) || added
      if (added) run.wake()
      report()
    }
    for (const r of opts.resume ?? []) fr.markDone(normaliseUrl(r.url, r.url, origin) ?? r.url)
    // The start URL is what the caller asked to audit: visited even when robots.txt disallows it.
    if (!fr.has(startUrl)) fr.add(startUrl, 0, true)
    for (const r of opts.resume ?? [])
      queueLinks(
        r.links.map((l) => normaliseUrl(l, r.url, origin)).filter((l): l is string => l !== null),
        r.depth + 1,
      )
    report()

    const dispatch = new PageDispatch(run, fr, deps.browser, {
      budget: Math.max(0, opts.maxPages - (opts.resume?.length ?? 0)),
      crawlDelayMs,
      recycleAfterPages: CRAWL.recycleAfterPages,
    })
    void loadSitemaps(origin, robots.sitemaps, proxy, deps.probeTimeoutMs, run.signal, (loc) => {
      const url = normaliseUrl(loc, loc, origin)
      if (url && fr.add(url, 1)) run.wake()
    })
      .catch((e) => log.warn('sitemaps could not be read', { error: errorMessage(e) }))
      .finally(() => {
        dispatch.sitemapsDone()
        report()
        run.wake()
      })

    const axe = new AxeSample()
    const settings = {
      origin,
      navTimeoutMs: opts.navTimeoutMs,
      pageDeadlineExtraMs: CRAWL.pageDeadlineExtraMs,
      axeExtraMs: CRAWL.axeExtraMs,
      closeTimeoutMs: CRAWL.closeTimeoutMs,
      blockMedia: CRAWL.blockMedia,
      ...(auth ? { auth: { credentials: auth.credentials, ...(storageState ? { storageState } : {}) } } : {}),
    }
    const crawlLane = async (index: number) => {
      const lane = new PageLane(index, deps.browser, proxy!, settings, log)
      try {
        for (;;) {
          const entry = await dispatch.take()
          if (!entry) return
          let tab = null as Page | null
          try {
            await lane.ready()
            await dispatch.politeWait()
            if (run.halted) return
            const t0 = performance.now()
            const r = await lane.visit(entry, {
              halt: run.signal,
              wantsAxe: (t) => axe.wants(t, entry.depth === 0),
              onPageStart: (page) => {
                tab = page
                hooks.onPageStart(entry.url, page, index)
              },
            })
            dispatch.served()
            if (run.halted && !r.visit) return // stopped mid-page: left for a resumed run
            if (r.visit?.kind === 'not_html') {
              dispatch.notAPage(entry.url)
              report()
              continue
            }
            const v = r.visit
            if (auth && v && sentToLogin(entry.url, v.finalUrl, auth.credentials.login?.url)) {
              // The session is gone: every page from here would be the login page. Stop, and say where.
              if (entry.depth === 0 && !opts.resume?.length) {
                // The crawl ends, and crawlSite rejects with this: the audit fails as the target's (refunded).
                run.hookFailed(
                  new AppError(
                    'login_failed',
                    `The start page sent the crawler to a login page (${new URL(v.finalUrl).pathname}): the credentials did not log in.`,
                  ),
                )
                return
              }
              run.sessionLostAt ??= scrub(entry.url)
              log.warn('session lost; stopping the crawl', { url: scrub(entry.url) })
              run.stop('sessionLost')
              return
            }
            const links = v ? [...new Set(v.links.map((h) => normaliseUrl(h, v.base, origin)).filter((l): l is string => l !== null))] : []
            const page: CrawledPage = v
              ? {
                  url: entry.url,
                  finalUrl: v.finalUrl,
                  depth: entry.depth,
                  httpStatus: v.httpStatus,
                  ok: v.ok,
                  ...(v.error ? { error: scrub(v.error) } : {}),
                  links,
                  checks: v.checks,
                  loadMs: v.loadMs,
                  ...(v.cookiesSet ? { cookiesSet: v.cookiesSet } : {}),
                }
              : {
                  url: entry.url,
                  finalUrl: entry.url,
                  depth: entry.depth,
                  httpStatus: null,
                  ok: false,
                  error: scrub(r.error ?? 'page failed'),
                  links: [],
                  checks: [],
                  loadMs: Math.round(performance.now() - t0),
                }
            if (page.ok) run.scanned++
            else run.failed++
            if (v && v.finalUrl !== entry.url) {
              const final = normaliseUrl(v.finalUrl, v.finalUrl, origin)
              if (final) fr.markDone(final) // reached by a redirect: not visited again under its own name
            }
            try {
              await hooks.onPage(page, v && tab && !tab.isClosed() ? { page: tab, lane: index } : undefined)
            } catch (e) {
              run.hookFailed(e)
              return
            }
            queueLinks(links, entry.depth + 1)
          } catch (e) {
            // Our side failed (browser gone, context refused): the page is reported failed and the lane
            // goes on with a fresh context.
            const error = scrub(errorMessage(e).split('\n')[0] ?? 'page task failed')
            log.warn('page task failed', { url: entry.url, error })
            await lane.dropContext()
            run.failed++
            try {
              await hooks.onPage({
                url: entry.url,
                finalUrl: entry.url,
                depth: entry.depth,
                httpStatus: null,
                ok: false,
                error,
                links: [],
                checks: [],
                loadMs: 0,
              })
            } catch (e2) {
              run.hookFailed(e2)
              return
            }
          } finally {
            dispatch.release()
          }
        }
      } finally {
        await lane.dropContext()
      }
    }
    lanes.start(Math.max(1, opts.concurrency), crawlLane)
    await lanes.done()
    run.rethrowHookError()
    log.info('crawl finished', {
      scanned: run.scanned,
      failed: run.failed,
      discovered: fr.size,
      ms: Math.round(performance.now() - started),
    })
    return run.summary(fr.size, siteChecks)
  } finally {
    run.end()
    await lanes.settled()
    await proxy?.stop().catch(() => {})
  }
}
