// The crawl engine of a whole-site audit. One call crawls one origin:
//   1. gather() the start URL once: the site-level checks (exposed files, TLS, https redirect, CORS)
//      and the origin the crawl stays on (where the start URL's redirects end);
//   2. robots.txt (obeyed, RFC 9309) and sitemaps (robots' Sitemap lines, else /sitemap.xml; indexes
//      followed) seed the frontier beside the start URL and any resumed pages' links;
//   3. `concurrency` lanes, each with its own browser context (media blocked), take URLs breadth
//      first, load each in a new page under a hard deadline, judge it with the page-level checks,
//      hand it to hooks.onPage and queue its same-origin links.
// Every connection, browser and plain HTTP, goes through one egress proxy for the crawl (gather()
// keeps its own, as for any scan). Stops on the page, depth and wall-time caps, on abort, or when
// nothing is left. Pages still loading at a stop are dropped unreported, so a resumed run visits them.
import type { BrowserContext, Page } from 'playwright-core'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import type { Logger } from '../../shared/log.ts'
import { sleep, within } from '../../shared/async.ts'
import { runCheck } from '../../shared/checks/runner.ts'
import type { CheckResult } from '../../shared/report.ts'
import type { BrowserPool } from '../browser.ts'
import { gather } from '../gather/index.ts'
import { bodyText, fetchBytes } from './fetch.ts'
import { Frontier, normaliseUrl, type FrontierEntry } from './frontier.ts'
import { CRAWL_LIMITS, openLaneContext, openLaneTab, SITE_CHECKS, visitPage, type PageVisit } from './page.ts'
import { ROBOTS_MAX_BYTES, robotsFor, robotsForStatus, type Robots } from './robots.ts'
import { parseSitemap, SITEMAP_MAX_BYTES } from './sitemap.ts'

export type { CheckResult } from '../../shared/report.ts'

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
}

export interface CrawledPage {
  url: string
  finalUrl: string
  depth: number
  /** null when no response arrived (timeout, crash, blocked, unreachable). */
  httpStatus: number | null
  /** Loaded with a status below 400. */
  ok: boolean
  error?: string
  /** Same-origin page links found in the rendered DOM, normalised, robots rules not yet applied. */
  links: string[]
  /** Page-level check results (see page.ts for which checks those are). */
  checks: CheckResult[]
  loadMs: number
}

export interface CrawlHooks {
  /** Distinct pages known so far (resumed, visited, queued); called when it changes. */
  onDiscovered(total: number): void
  /** A page is about to navigate (the viewer may attach to it). Must not throw or block. */
  onPageStart(url: string, page: Page): void
  /** A page is done. Awaited; a rejection stops the crawl and crawlSite rejects with it. */
  onPage(page: CrawledPage): Promise<void>
}

export interface CrawlSummary {
  /** Pages of this run that loaded with a status below 400 (resumed pages not included). */
  pagesScanned: number
  /** Pages of this run that did not: error status, timeout, crash, blocked. */
  pagesFailed: number
  /** Distinct pages known at the end, resumed ones included. */
  pagesDiscovered: number
  stoppedBy: 'done' | 'maxPages' | 'maxDuration' | 'aborted'
  /** Site-level check results from the start URL's scan. */
  siteChecks: CheckResult[]
}

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

async function loadRobots(origin: string, proxy: EgressProxy, timeoutMs: number, signal: AbortSignal): Promise<{ robots: Robots; status: number | null }> {
  const got = await fetchBytes(`${origin}/robots.txt`, proxy, timeoutMs, ROBOTS_MAX_BYTES, signal)
  if (!got.ok) return { robots: robotsForStatus(null), status: null }
  if (got.status >= 200 && got.status < 300) return { robots: robotsFor(bodyText(got.body, ROBOTS_MAX_BYTES), CRAWL.robotsToken), status: got.status }
  return { robots: robotsForStatus(got.status), status: got.status }
}

/** Page URLs from the sitemaps, indexes followed breadth first; bounded in files and URLs. */
async function loadSitemaps(origin: string, named: string[], proxy: EgressProxy, timeoutMs: number, signal: AbortSignal, add: (url: string) => void): Promise<void> {
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

type Stop = 'maxDuration' | 'aborted' | 'hookFailed'

export async function crawlSite(opts: CrawlOptions, deps: CrawlDeps, hooks: CrawlHooks): Promise<CrawlSummary> {
  const log = deps.log.child({ crawl: opts.startUrl })
  const started = performance.now()
  const halt = new AbortController()
  let stopped: Stop | null = null
  let hookError: unknown = null
  const stop = (why: Stop) => {
    stopped ??= why
    halt.abort()
    wake()
  }
  const onAbort = () => stop('aborted')
  opts.signal.addEventListener('abort', onAbort, { once: true })
  const durationTimer = setTimeout(() => stop('maxDuration'), opts.maxDurationMs)
  if (opts.signal.aborted) stop('aborted')

  // Lanes waiting for work sleep on this; anything that may give them work wakes them.
  let waiters: Array<() => void> = []
  function wake() {
    const w = waiters
    waiters = []
    for (const f of w) f()
  }

  let proxy: EgressProxy | null = null
  const lanes: Promise<void>[] = []
  let siteChecks: CheckResult[] = []
  let scanned = 0
  let failed = 0
  let frontier: Frontier | null = null
  let budgetHit = false
  try {
    // Site level first: a blocked or unreachable target fails here (AppError), before any lane starts.
    const site = await Promise.race([
      gather(opts.startUrl, {
        policy: deps.policy, browser: deps.browser, navTimeoutMs: opts.navTimeoutMs, probeTimeoutMs: deps.probeTimeoutMs, trustedSpki: deps.trustedSpki,
      }),
      new Promise<null>((r) => halt.signal.addEventListener('abort', () => r(null), { once: true })),
    ])
    if (!site) return summary()
    siteChecks = SITE_CHECKS.map((c) => runCheck(c, site.artifacts))
    const origin = site.artifacts.target.origin
    const startUrl = normaliseUrl(site.artifacts.target.finalUrl, site.artifacts.target.finalUrl, origin) ?? site.artifacts.target.finalUrl

    proxy = await startEgressProxy(deps.policy)
    const { robots, status: robotsStatus } = await loadRobots(origin, proxy, deps.probeTimeoutMs, halt.signal)
    const crawlDelayMs = Math.min(robots.crawlDelayMs ?? 0, CRAWL.maxCrawlDelayMs)
    log.info('crawl starting', { origin, robotsStatus, crawlDelayMs, concurrency: opts.concurrency })

    const fr = new Frontier(opts.maxDepth, (u) => robots.isAllowed(u.pathname + u.search))
    frontier = fr
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
      if (added) wake()
      report()
    }
    for (const r of opts.resume ?? []) fr.markDone(normaliseUrl(r.url, r.url, origin) ?? r.url)
    // The start URL is what the caller asked to audit: visited even when robots.txt disallows it.
    if (!fr.has(startUrl)) fr.add(startUrl, 0, true)
    for (const r of opts.resume ?? []) queueLinks(r.links.map((l) => normaliseUrl(l, r.url, origin)).filter((l): l is string => l !== null), r.depth + 1)
    report()
    const budget = Math.max(0, opts.maxPages - (opts.resume?.length ?? 0))

    let sitemapsPending = true
    void loadSitemaps(origin, robots.sitemaps, proxy, deps.probeTimeoutMs, halt.signal, (loc) => {
      const url = normaliseUrl(loc, loc, origin)
      if (url && fr.add(url, 1)) wake()
    })
      .catch((e) => log.warn('sitemaps could not be read', { error: (e as Error).message }))
      .finally(() => {
        sitemapsPending = false
        report()
        wake()
      })

    let claimed = 0
    let inFlight = 0
    /** The next URL for a lane, waiting while other lanes or the sitemaps may still add some; null: no more. */
    const take = async (): Promise<FrontierEntry | null> => {
      for (;;) {
        if (halt.signal.aborted) return null
        if (claimed < budget) {
          const next = fr.next()
          if (next) {
            claimed++
            inFlight++
            return next
          }
        } else if (inFlight === 0) {
          budgetHit = fr.pending > 0
          return null
        }
        if (inFlight === 0 && !sitemapsPending && fr.pending === 0) return null
        await new Promise<void>((r) => waiters.push(r))
      }
    }

    let nextStartAt = 0
    const politeWait = async () => {
      if (crawlDelayMs <= 0) return
      const now = performance.now()
      const at = Math.max(now, nextStartAt)
      nextStartAt = at + crawlDelayMs
      await sleep(at - now, halt.signal)
    }

    const templates = new Set<string>()
    let axeRuns = 0
    /** axe once per DOM template, up to the cap; the start page always, whichever lane gets there first. */
    const wantsAxe = (template: string, start: boolean) => {
      if (!start && (!template || templates.has(template) || axeRuns >= CRAWL_LIMITS.axeMaxPages)) return false
      if (template) templates.add(template)
      axeRuns++
      return true
    }

    let servedSinceRecycle = 0
    const pool = deps.browser

    /**
     * One page in the lane's tab under a hard deadline. `tabSpent`: the tab crashed, ran past the deadline
     * or failed on our side, so the lane closes it and opens a new one for the next page.
     */
    const runPage = async (context: BrowserContext, tab: Page, entry: FrontierEntry): Promise<{ visit: PageVisit | null; error?: string; tabSpent: boolean; contextBroken: boolean }> => {
      const task = visitPage(tab, entry.url, origin, {
        navTimeoutMs: opts.navTimeoutMs, blockMedia: CRAWL.blockMedia, wantsAxe: (t) => wantsAxe(t, entry.depth === 0), onPageStart: (page) => hooks.onPageStart(entry.url, page),
      })
      task.catch(() => {})
      let timer: ReturnType<typeof setTimeout> | undefined
      let onHalt: (() => void) | undefined
      const deadline = new Promise<'deadline' | 'halted'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), opts.navTimeoutMs + CRAWL.pageDeadlineExtraMs)
        onHalt = () => resolve('halted')
        halt.signal.addEventListener('abort', onHalt, { once: true })
      })
      try {
        const r = await Promise.race([task, deadline])
        if (r === 'deadline') return { visit: null, error: `page did not finish within ${opts.navTimeoutMs + CRAWL.pageDeadlineExtraMs} ms`, tabSpent: true, contextBroken: false }
        if (r === 'halted') return { visit: null, tabSpent: true, contextBroken: false }
        return { visit: r, tabSpent: false, contextBroken: false }
      } catch (e) {
        return { visit: null, error: (e as Error).message.split('\n')[0] ?? 'page failed', tabSpent: true, contextBroken: !context.browser()?.isConnected() }
      } finally {
        clearTimeout(timer)
        if (onHalt) halt.signal.removeEventListener('abort', onHalt)
      }
    }

    const lane = async (index: number) => {
      let context: BrowserContext | null = null
      let tab: Page | null = null
      let generation = -1
      const dropContext = async () => {
        const c = context
        context = null
        tab = null
        if (c && !(await within(c.close().then(() => true, () => true), CRAWL.closeTimeoutMs, false))) {
          log.warn('a browser context did not close; recycling the browser', { lane: index })
          pool.recycle()
        }
      }
      /** Closes the tab (bounded); a tab that will not close takes its context with it. */
      const dropTab = async () => {
        const t = tab
        tab = null
        if (t && !(await within(t.close().then(() => true, () => true), CRAWL.closeTimeoutMs, false))) await dropContext()
      }
      try {
        for (;;) {
          const entry = await take()
          if (!entry) return
          try {
            if (context && generation !== pool.generation) await dropContext()
            if (!context) {
              generation = pool.generation
              context = await openLaneContext(pool, proxy!)
            }
            tab ??= await openLaneTab(context, CRAWL.blockMedia)
            await politeWait()
            if (halt.signal.aborted) return
            const t0 = performance.now()
            const r = await runPage(context, tab, entry)
            if (r.contextBroken) await dropContext()
            else if (r.tabSpent) await dropTab()
            if (++servedSinceRecycle >= CRAWL.recycleAfterPages) {
              servedSinceRecycle = 0
              pool.recycle()
            }
            if (halt.signal.aborted && !r.visit) return // stopped mid-page: left for a resumed run
            if (r.visit?.kind === 'not_html') {
              claimed--
              fr.notAPage(entry.url)
              report()
              continue
            }
            const v = r.visit
            const links = v
              ? [...new Set(v.links.map((h) => normaliseUrl(h, v.base, origin)).filter((l): l is string => l !== null))]
              : []
            const page: CrawledPage = v
              ? { url: entry.url, finalUrl: v.finalUrl, depth: entry.depth, httpStatus: v.httpStatus, ok: v.ok, ...(v.error ? { error: v.error } : {}), links, checks: v.checks, loadMs: v.loadMs }
              : { url: entry.url, finalUrl: entry.url, depth: entry.depth, httpStatus: null, ok: false, error: r.error ?? 'page failed', links: [], checks: [], loadMs: Math.round(performance.now() - t0) }
            if (page.ok) scanned++
            else failed++
            if (v && v.finalUrl !== entry.url) {
              const final = normaliseUrl(v.finalUrl, v.finalUrl, origin)
              if (final) fr.markDone(final) // reached by a redirect: not visited again under its own name
            }
            try {
              await hooks.onPage(page)
            } catch (e) {
              hookError ??= e
              stop('hookFailed')
              return
            }
            queueLinks(links, entry.depth + 1)
          } catch (e) {
            // Our side failed (browser gone, context refused): the page is reported failed and the lane
            // goes on with a fresh context.
            const error = (e as Error).message.split('\n')[0] ?? 'page task failed'
            log.warn('page task failed', { url: entry.url, error })
            await dropContext()
            failed++
            try {
              await hooks.onPage({ url: entry.url, finalUrl: entry.url, depth: entry.depth, httpStatus: null, ok: false, error, links: [], checks: [], loadMs: 0 })
            } catch (e2) {
              hookError ??= e2
              stop('hookFailed')
              return
            }
          } finally {
            inFlight--
            wake()
          }
        }
      } finally {
        await dropContext()
      }
    }
    for (let i = 0; i < Math.max(1, opts.concurrency); i++) lanes.push(lane(i))
    await Promise.all(lanes)
    if (hookError) throw hookError
    log.info('crawl finished', { scanned, failed, discovered: fr.size, ms: Math.round(performance.now() - started) })
    return summary()
  } finally {
    clearTimeout(durationTimer)
    opts.signal.removeEventListener('abort', onAbort)
    halt.abort()
    wake()
    await Promise.allSettled(lanes)
    await proxy?.stop().catch(() => {})
  }

  function summary(): CrawlSummary {
    const stoppedBy: CrawlSummary['stoppedBy'] =
      stopped === 'aborted' ? 'aborted' : stopped === 'maxDuration' ? 'maxDuration' : budgetHit ? 'maxPages' : 'done'
    return { pagesScanned: scanned, pagesFailed: failed, pagesDiscovered: frontier?.size ?? 0, stoppedBy, siteChecks }
  }
}
