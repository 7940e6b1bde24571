// What one lane of a crawl does until the dispatch has nothing more for it: take the next URL, visit it in
// the lane's tab, stop at a lost session, report the page (hooks.onPage) and queue its same-origin links.
// Pages still loading at a stop are dropped unreported, so a resumed run visits them.
import type { Page } from 'playwright-core'
import { AppError, errorMessage } from '../../shared/errors.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { CrawledPage } from '../../shared/report/crawled-page.ts'
import { sentToLogin } from '../../shared/protocol/audit-auth.ts'
import type { BrowserPool } from '../browser.ts'
import { applyAuth, type StorageState } from './auth.ts'
import { CRAWL, type CrawlHooks, type CrawlOptions } from './crawl-options.ts'
import { type FrontierEntry, normaliseUrl } from './frontier.ts'
import { BLANK_TAB_ABOVE_LANES, type LaneSettings, PageLane } from './lane.ts'
import { LaneContexts } from './lane-context.ts'
import { AxeSample, type PageDispatch } from './lane-pool.ts'
import { openLaneContext, type PageVisit } from './page.ts'
import type { CrawlRun } from './run.ts'
import type { SiteApi } from './site-api.ts'
import type { Discovery } from './seed.ts'

/** What every lane of one crawl shares. */
export interface LaneRunContext {
  run: CrawlRun
  dispatch: PageDispatch
  found: Discovery
  hooks: CrawlHooks
  browser: BrowserPool
  proxy: EgressProxy
  settings: LaneSettings
  log: Logger
  /** An authenticated crawl: its credentials say which page is the login page. */
  auth?: CrawlOptions['auth']
  /** Takes every secret out of what the crawl reports (the identity when there are none). */
  scrub: (s: string) => string
  /** The crawl goes on from an earlier holder's pages. */
  resumed: boolean
  /** Every page's API calls, probed once the lanes are done (site-api.ts). */
  siteApi: SiteApi
}

type LoadedVisit = Extract<PageVisit, { kind: 'page' }>
/** After a page, the lane takes the next one or returns. */
type Next = 'next' | 'stop'

/** The lanes' settings for one crawl; an authenticated crawl's contexts open with what the login form left. */
export function laneSettings(origin: string, opts: CrawlOptions, storageState?: StorageState): LaneSettings {
  const { auth } = opts
  return {
    origin,
    navTimeoutMs: opts.navTimeoutMs,
    pageDeadlineExtraMs: CRAWL.pageDeadlineExtraMs,
    axeExtraMs: CRAWL.axeExtraMs,
    closeTimeoutMs: CRAWL.closeTimeoutMs,
    blockMedia: CRAWL.blockMedia,
    blankBetween: opts.concurrency > BLANK_TAB_ABOVE_LANES,
    ...(auth ? { auth: { credentials: auth.credentials, ...(storageState ? { storageState } : {}) } } : {}),
  }
}

/**
 * The lane body for LanePool.start: lane `index` crawls pages until there are none or the run stops. The
 * lanes share one browser context (lane-context.ts); an authenticated crawl's opens with what the login
 * form left and the credentials applied.
 */
export function laneRunner(c: LaneRunContext): (index: number) => Promise<void> {
  const axe = new AxeSample()
  const { auth } = c.settings
  const contexts = new LaneContexts(
    c.browser,
    async () => {
      const context = await openLaneContext(c.browser, c.proxy, auth?.storageState)
      if (auth)
        await applyAuth(context, auth.credentials, c.settings.origin).catch(async (e) => {
          await context.close().catch(() => {})
          throw e
        })
      return context
    },
    c.settings.closeTimeoutMs,
    c.log,
  )
  return async (index) => {
    const lane = new PageLane(index, contexts, c.settings, c.log)
    try {
      for (;;) {
        const entry = await c.dispatch.take()
        if (!entry) return
        try {
          if ((await crawlPage(c, lane, index, entry, axe)) === 'stop') return
        } catch (e) {
          if ((await pageTaskFailed(c, lane, entry, e)) === 'stop') return
        } finally {
          c.dispatch.release()
        }
      }
    } finally {
      await lane.dropContext()
    }
  }
}

/** One page in the lane's tab: visited, reported, its links queued. */
async function crawlPage(c: LaneRunContext, lane: PageLane, index: number, entry: FrontierEntry, axe: AxeSample): Promise<Next> {
  let tab = null as Page | null
  await lane.ready(c.hooks.inView?.(index) ?? false)
  await c.dispatch.politeWait()
  if (c.run.halted) return 'stop'
  const t0 = performance.now()
  const r = await lane.visit(entry, {
    halt: c.run.signal,
    wantsAxe: (t) => axe.wants(t, entry.depth === 0),
    onPageStart: (page) => {
      tab = page
      c.hooks.onPageStart(entry.url, page, index)
    },
  })
  c.dispatch.served()
  if (c.run.halted && !r.visit) return 'stop' // stopped mid-page: left for a resumed run
  if (r.visit?.kind === 'page') c.siteApi.add(r.visit.apiCalls)
  if (r.visit?.kind === 'not_html') {
    c.dispatch.notAPage(entry.url)
    c.found.report()
    return 'next'
  }
  const v = r.visit
  if (v && sessionEnded(c, entry, v.finalUrl)) return 'stop'
  const page = toCrawledPage(entry, v ?? { error: r.error ?? 'page failed', loadMs: Math.round(performance.now() - t0) }, c)
  if (page.ok) c.run.scanned++
  else c.run.failed++
  if (v && v.finalUrl !== entry.url) {
    const final = normaliseUrl(v.finalUrl, v.finalUrl, c.settings.origin)
    if (final) c.found.frontier.markDone(final) // reached by a redirect: not visited again under its own name
  }
  if (!(await deliver(c, page, v && tab && !tab.isClosed() ? { page: tab, lane: index } : undefined))) return 'stop'
  c.found.queueLinks(page.links, entry.depth + 1)
  return 'next'
}

/**
 * Our side failed (browser gone, context refused): the page is reported failed and the lane goes on with
 * a fresh context.
 */
async function pageTaskFailed(c: LaneRunContext, lane: PageLane, entry: FrontierEntry, e: unknown): Promise<Next> {
  const error = errorMessage(e).split('\n')[0] ?? 'page task failed'
  c.log.warn('page task failed', { url: entry.url, error: c.scrub(error) })
  await lane.dropContext()
  c.run.failed++
  return (await deliver(c, toCrawledPage(entry, { error, loadMs: 0 }, c))) ? 'next' : 'stop'
}

/**
 * An authenticated crawl's page sent to the login page: the session is gone, and every page from here would
 * be the login page. Stops the run, and says where; true when it did.
 */
function sessionEnded(c: LaneRunContext, entry: FrontierEntry, finalUrl: string): boolean {
  if (!c.auth || !sentToLogin(entry.url, finalUrl, c.auth.credentials.login?.url)) return false
  if (entry.depth === 0 && !c.resumed) {
    // The crawl ends, and crawlSite rejects with this: the audit fails as the target's (refunded).
    c.run.hookFailed(
      new AppError(
        'login_failed',
        `The start page sent the crawler to a login page (${new URL(finalUrl).pathname}): the credentials did not log in.`,
      ),
    )
    return true
  }
  c.run.sessionLostAt ??= c.scrub(entry.url)
  c.log.warn('session lost; stopping the crawl', { url: c.scrub(entry.url) })
  c.run.stop('sessionLost')
  return true
}

/** Hands a page to hooks.onPage; false when the hook rejected (the run stops and crawlSite rejects with it). */
async function deliver(c: LaneRunContext, page: CrawledPage, tab?: { page: Page; lane: number }): Promise<boolean> {
  try {
    await c.hooks.onPage(page, tab)
    return true
  } catch (e) {
    c.run.hookFailed(e)
    return false
  }
}

/**
 * What a lane reports of a page: what its visit found (links normalised and deduplicated, errors scrubbed),
 * or, when there was no visit, why, with no findings.
 */
export function toCrawledPage(
  entry: FrontierEntry,
  got: LoadedVisit | { error: string; loadMs: number },
  c: { settings: { origin: string }; scrub: (s: string) => string },
): CrawledPage {
  if (!('kind' in got)) {
    const { error, loadMs } = got
    return {
      url: entry.url,
      finalUrl: entry.url,
      depth: entry.depth,
      httpStatus: null,
      ok: false,
      error: c.scrub(error),
      links: [],
      checks: [],
      loadMs,
    }
  }
  const links = [...new Set(got.links.map((h) => normaliseUrl(h, got.base, c.settings.origin)).filter((l): l is string => l !== null))]
  return {
    url: entry.url,
    finalUrl: got.finalUrl,
    depth: entry.depth,
    httpStatus: got.httpStatus,
    ok: got.ok,
    ...(got.error ? { error: c.scrub(got.error) } : {}),
    links,
    checks: got.checks,
    loadMs: got.loadMs,
    ...(got.cookiesSet ? { cookiesSet: got.cookiesSet } : {}),
  }
}
