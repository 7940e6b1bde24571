// The lanes of a crawl and what they share: which URL each takes next within the page budget (waiting
// while other lanes or the sitemaps may still add some), the crawl delay between page starts, axe sampling,
// and when the browser is recycled. As Crawlee's AutoscaledPool with its RequestQueue, for a fixed count.
import { sleep } from '../../shared/lib/async.ts'
import type { BrowserPool } from '../browser.ts'
import type { Frontier, FrontierEntry } from './frontier.ts'
import { CRAWL_LIMITS } from './page.ts'
import type { CrawlRun } from './run.ts'

export class LanePool {
  private lanes: Promise<void>[] = []

  /** Starts `count` lanes; lane(i) runs until it finds no more work or the run stops. */
  start(count: number, lane: (index: number) => Promise<void>): void {
    for (let i = 0; i < count; i++) this.lanes.push(lane(i))
  }

  /** Resolves when every lane has returned; rejects with the first that threw. */
  async done(): Promise<void> {
    await Promise.all(this.lanes)
  }

  /** Resolves when every lane has ended, whichever way. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.lanes)
  }
}

export interface DispatchOptions {
  /** Pages this run may visit (the audit's cap less the pages resumed). */
  budget: number
  /** Between two page starts, across lanes (robots.txt Crawl-delay, capped). */
  crawlDelayMs: number
  /** Pages one Chromium serves before the pool replaces it. */
  recycleAfterPages: number
}

/** Hands URLs to lanes, breadth first, within the budget. */
export class PageDispatch {
  private claimed = 0
  private inFlight = 0
  private nextStartAt = 0
  private servedSinceRecycle = 0
  private sitemapsPending = true

  constructor(
    private readonly run: CrawlRun,
    private readonly frontier: Frontier,
    private readonly pool: BrowserPool,
    private readonly o: DispatchOptions,
  ) {}

  /** The next URL for a lane, waiting while other lanes or the sitemaps may still add some; null: no more. */
  async take(): Promise<FrontierEntry | null> {
    for (;;) {
      if (this.run.halted) return null
      if (this.claimed < this.o.budget) {
        const next = this.frontier.next()
        if (next) {
          this.claimed++
          this.inFlight++
          return next
        }
      } else if (this.inFlight === 0) {
        this.run.budgetHit = this.frontier.pending > 0
        return null
      }
      if (this.inFlight === 0 && !this.sitemapsPending && this.frontier.pending === 0) return null
      await this.run.waitForWork()
    }
  }

  /** A taken URL is finished, whatever became of it: waiting lanes look again. */
  release(): void {
    this.inFlight--
    this.run.wake()
  }

  /** A taken URL was not a page (a download, an image): it does not count against the budget. */
  notAPage(url: string): void {
    this.claimed--
    this.frontier.notAPage(url)
  }

  /** No more URLs will come from the sitemaps. */
  sitemapsDone(): void {
    this.sitemapsPending = false
  }

  /** Waits until this lane may start its page, keeping the crawl delay between starts across lanes. */
  async politeWait(): Promise<void> {
    if (this.o.crawlDelayMs <= 0) return
    const now = performance.now()
    const at = Math.max(now, this.nextStartAt)
    this.nextStartAt = at + this.o.crawlDelayMs
    await sleep(at - now, this.run.signal)
  }

  /** A page was served by the pool's browser: every so many, the browser is recycled. */
  served(): void {
    if (++this.servedSinceRecycle >= this.o.recycleAfterPages) {
      this.servedSinceRecycle = 0
      this.pool.recycle()
    }
  }
}

/** axe once per DOM template, up to the cap; the start page always, whichever lane gets there first. */
export class AxeSample {
  private templates = new Set<string>()
  private runs = 0

  wants(template: string, start: boolean): boolean {
    if (!start && (!template || this.templates.has(template) || this.runs >= CRAWL_LIMITS.axeMaxPages)) return false
    if (template) this.templates.add(template)
    this.runs++
    return true
  }
}
