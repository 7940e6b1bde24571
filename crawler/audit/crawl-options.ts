// What a crawl is given: the caller's options (caps, resume, credentials), the hooks it reports through, the
// services it runs on, and the crawler's own fixed limits.
import type { Page } from 'playwright-core'
import type { AuditAuth } from '../../shared/protocol/audit-auth.ts'
import type { CrawledPage } from '../../shared/report/crawled-page.ts'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { BrowserPool } from '../browser.ts'

export interface CrawlOptions {
  startUrl: string
  /** Pages visited in all, resumed ones included. */
  maxPages: number
  /** Link hops from the start URL (0: the start page only). Sitemap pages count as depth 1. */
  maxDepth: number
  maxDurationMs: number
  /** Pages in flight at once: one tab (lane) each, in one browser context. The crawl stays on one origin, so this is per host. */
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

export interface CrawlHooks {
  /** Distinct pages known so far (resumed, visited, queued); called when it changes. */
  onDiscovered(total: number): void
  /** Lane `lane`'s tab is about to navigate to `url` (the viewer may attach to it). Must not throw or block. */
  onPageStart(url: string, page: Page, lane: number): void
  /** Lane `lane`'s tab is in the live view now (someone watches it): it is not emptied between pages. */
  inView?(lane: number): boolean
  /**
   * A page is done. `tab` is the lane's tab still showing it, when it loaded (the replay takes its still).
   * Awaited; a rejection stops the crawl and crawlSite rejects with it.
   */
  onPage(page: CrawledPage, tab?: { page: Page; lane: number }): Promise<void>
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
