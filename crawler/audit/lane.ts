// One lane of a crawl: one tab, in the browser context the crawl's lanes share (lane-context.ts), that
// navigates from page to page. The lane opens its tab when needed, replaces it when a page crashed, overran
// its deadline or failed on our side, moves to a new context when its browser was recycled or is gone, has
// its renderer collect the pages it left every few pages, empties its tab between two pages when the crawl
// runs many lanes, and closes its tab with a bound.
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { FrontierEntry } from './frontier.ts'
import type { AuditAuth } from '../../shared/protocol/audit-auth.ts'
import type { StorageState } from './auth.ts'
import type { ContextHold, LaneContexts } from './lane-context.ts'
import { CRAWL_LIMITS, visitPage, type PageVisit } from './page.ts'
import { errorMessage } from '../../shared/errors.ts'

export interface LaneSettings {
  origin: string
  navTimeoutMs: number
  /** A page gets navTimeoutMs plus this to read, judge and close, then it is given up. */
  pageDeadlineExtraMs: number
  /** More time for a page that axe runs on. */
  axeExtraMs: number
  /** Closing a tab or context that does not answer within this: the lane gives up on that context. */
  closeTimeoutMs: number
  blockMedia: boolean
  /** The tab is emptied before each page after its first (BLANK_TAB_ABOVE_LANES). */
  blankBetween: boolean
  /** An authenticated crawl: the credentials, and what the login form left (cookies, storage). */
  auth?: { credentials: AuditAuth; storageState?: StorageState }
}

/** A lane's tab and the CDP session the lane keeps on it (media blocking, garbage collection). */
export interface LaneTab {
  page: Page
  cdp: CDPSession
}

/** The lane's tab, media blocked when asked. It is navigated from page to page (see visitPage). */
export async function openLaneTab(context: BrowserContext, blockMedia: boolean): Promise<LaneTab> {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  if (blockMedia) {
    // The block list lives in this session's network agent, which must stay enabled; it buffers no bodies.
    await cdp.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 })
    await cdp.send('Network.setBlockedURLs', { urls: [...CRAWL_LIMITS.blockedUrlPatterns] })
  }
  return { page, cdp }
}

/**
 * The lane's tab asks its renderer to collect garbage after this many pages. V8 and Blink collect the pages
 * a tab left only when their heaps have grown: one lane's renderer went from 120 to 264 MB over 60 pages,
 * with 123 documents alive, and held 1 after a collection. Every third page took the crawl's peak another
 * 60-90 MB lower at concurrency 1, 2 and 4 (RenderDocument off, crawler/browser.ts) with its pages a minute
 * within the runs' spread (bench/crawl-throughput --quick, one run each way); every page did no better. The
 * collection runs in the renderer while the browser sends the next page's request.
 */
export const COLLECT_GARBAGE_EVERY = 3

/** A renderer that does not answer a bare evaluation within this is held by a script (see freeRenderer). */
export const UNRESPONSIVE_MS = 2_000

/**
 * With more lanes than this, a lane's tab is emptied before its next page: its document's content is replaced
 * by nothing (Playwright's setContent: document.open, write and close, run in its own world, which the page's
 * scripts cannot reach) and the tab waits for that load, so the compositor paints an empty frame. A tab keeps
 * the tiles of two pages, the one it shows and the one before (256 x 256 pixels of shared memory, resident in
 * its renderer and again in the GPU process, about 5 MB a page at 1280 x 800); emptied, the page it left
 * holds none. `bench/crawl-throughput --pages=200 --concurrency=4`, two runs each: the peak 1131-1137 MB ->
 * 1092-1095 (Crawlee 1408-1480) at 1061-1068 -> 1087-1092 pages a minute. A navigation to about:blank instead
 * gave the same peak for 13-15% fewer pages a minute (902-932), and with only its commit awaited kept the
 * tiles. At concurrency 2 a blank page did not move the peak (837-845 against 845-847 MB, --quick), so two
 * lanes, the default, do without (docs/decisions.md).
 */
export const BLANK_TAB_ABOVE_LANES = 2

export interface PageOutcome {
  visit: PageVisit | null
  /** Why there is no visit, when there is none and the run did not just stop. */
  error?: string
}

export class PageLane {
  private hold: ContextHold | null = null
  private tab: LaneTab | null = null
  private pagesSinceCollection = 0
  private collecting = false
  /** The tab shows a page: a visit started in it since it was opened or last emptied. */
  private showsPage = false

  constructor(
    private readonly index: number,
    private readonly contexts: LaneContexts,
    private readonly settings: LaneSettings,
    private readonly log: Logger,
  ) {}

  /**
   * Opens what the next page needs: a hold on the crawl's context on the pool's current browser, and a tab in
   * it, emptied when the settings ask for it and the tab is not in the live view (`inView`: someone watches
   * it, and an empty frame between two pages would flicker).
   */
  async ready(inView = false): Promise<void> {
    if (this.hold && !this.contexts.usable(this.hold)) await this.dropContext()
    this.hold ??= await this.contexts.acquire()
    if (this.tab && this.showsPage && this.settings.blankBetween && !inView) {
      this.showsPage = false
      const emptied = await this.tab.page.setContent('', { timeout: this.settings.closeTimeoutMs }).then(
        () => true,
        () => false,
      )
      if (!emptied) await this.dropTab()
    }
    this.tab ??= await openLaneTab(this.hold.context, this.settings.blockMedia)
    this.collectGarbage()
  }

  /**
   * One page in the lane's tab under a hard deadline, then the tab or context replaced when the page left
   * it unusable. Call ready() first.
   */
  async visit(
    entry: FrontierEntry,
    o: { halt: AbortSignal; wantsAxe: (template: string) => boolean; onPageStart: (page: Page) => void },
  ): Promise<PageOutcome> {
    const context = this.hold!.context
    this.showsPage = true
    const { navTimeoutMs, pageDeadlineExtraMs, axeExtraMs } = this.settings
    let timer: ReturnType<typeof setTimeout> | undefined
    let onHalt: (() => void) | undefined
    let expire: () => void = () => {}
    const started = performance.now()
    let limitMs = navTimeoutMs + pageDeadlineExtraMs
    const deadline = new Promise<'deadline' | 'halted'>((resolve) => {
      expire = () => resolve('deadline')
      timer = setTimeout(expire, limitMs)
      onHalt = () => resolve('halted')
      o.halt.addEventListener('abort', onHalt, { once: true })
    })
    // axe injects and runs its whole engine in the page, seconds of CPU on a cold or busy machine: a page
    // chosen for it gets that much more time, so the pages that carry a site's accessibility findings are
    // not the ones given up.
    const wantsAxe = (template: string) => {
      const chosen = o.wantsAxe(template)
      if (chosen && axeExtraMs > 0) {
        limitMs += axeExtraMs
        clearTimeout(timer)
        timer = setTimeout(expire, Math.max(0, limitMs - (performance.now() - started)))
      }
      return chosen
    }
    const task = visitPage(this.tab!.page, entry.url, this.settings.origin, {
      navTimeoutMs,
      blockMedia: this.settings.blockMedia,
      signedIn: this.settings.auth !== undefined,
      wantsAxe,
      onPageStart: o.onPageStart,
    })
    task.catch(() => {})
    // tabSpent: the tab crashed, ran past the deadline or failed on our side, so the next page gets a new one.
    let outcome: PageOutcome & { tabSpent: boolean; contextBroken: boolean }
    try {
      const r = await Promise.race([task, deadline])
      if (r === 'deadline') {
        outcome = {
          visit: null,
          error: `page did not finish within ${limitMs} ms`,
          tabSpent: true,
          contextBroken: false,
        }
      } else if (r === 'halted') {
        outcome = { visit: null, tabSpent: true, contextBroken: false }
      } else {
        outcome = { visit: r, tabSpent: false, contextBroken: false }
      }
    } catch (e) {
      outcome = {
        visit: null,
        error: errorMessage(e).split('\n')[0] ?? 'page failed',
        tabSpent: true,
        contextBroken: !context.browser()?.isConnected(),
      }
    } finally {
      clearTimeout(timer)
      if (onHalt) o.halt.removeEventListener('abort', onHalt)
    }
    if (outcome.contextBroken) await this.dropContext(true)
    else if (outcome.tabSpent) await this.dropTab()
    else this.pagesSinceCollection++
    return { visit: outcome.visit, ...(outcome.error !== undefined ? { error: outcome.error } : {}) }
  }

  /**
   * Before the next page, once the tab has kept COLLECT_GARBAGE_EVERY pages, its renderer collects the garbage
   * of the pages it left; not awaited (the next page's request goes out meanwhile), one at a time.
   */
  private collectGarbage(): void {
    const tab = this.tab
    if (!tab || this.collecting || this.pagesSinceCollection < COLLECT_GARBAGE_EVERY) return
    this.pagesSinceCollection = 0
    this.collecting = true
    tab.cdp
      .send('HeapProfiler.collectGarbage')
      .catch(() => {})
      .finally(() => {
        this.collecting = false
      })
  }

  /**
   * Closes the lane's tab (bounded) and lets go of its context; `broken`: the context failed, so no lane
   * gets it again. The last lane to let go of a context closes it.
   */
  async dropContext(broken = false): Promise<void> {
    const hold = this.hold
    const tab = this.tab
    this.hold = null
    this.tab = null
    this.showsPage = false
    this.pagesSinceCollection = 0
    this.collecting = false
    if (!hold) return
    const closed =
      !tab ||
      (await within(
        tab.page.close().then(
          () => true,
          () => true,
        ),
        this.settings.closeTimeoutMs,
        false,
      ))
    if (!closed) this.log.warn('a tab did not close; its context is given up', { lane: this.index })
    await this.contexts.release(hold, broken || !closed)
  }

  /**
   * Ends the script that holds the tab's renderer, when one does. When the crawl's lanes share that renderer
   * (CRAWL_SHARED_RENDERER; crawler/browser.ts, SHARED_RENDERER_ARGS), a page whose script never yields holds
   * up every lane's page, and closing its tab would not end it while another tab keeps the renderer. A renderer that does
   * not answer a bare evaluation within UNRESPONSIVE_MS is told to stop the script it runs
   * (`Runtime.terminateExecution`, which Chromium carries out while that script runs); one that answers is
   * left alone, so a tab given up for a slow network never stops another lane's script.
   */
  private async freeRenderer(tab: LaneTab): Promise<void> {
    const settled = () => true
    const answered = await within(tab.cdp.send('Runtime.evaluate', { expression: '0' }).then(settled, settled), UNRESPONSIVE_MS, false)
    if (answered) return
    this.log.warn('a renderer did not answer; its running script is stopped', { lane: this.index })
    await within(tab.cdp.send('Runtime.terminateExecution').then(settled, settled), this.settings.closeTimeoutMs, false)
  }

  /** Closes the tab (bounded); a tab that will not close takes its context with it (no lane gets it again). */
  private async dropTab(): Promise<void> {
    const t = this.tab
    if (t) await this.freeRenderer(t)
    this.tab = null
    this.showsPage = false
    this.pagesSinceCollection = 0
    this.collecting = false
    if (
      t &&
      !(await within(
        t.page.close().then(
          () => true,
          () => true,
        ),
        this.settings.closeTimeoutMs,
        false,
      ))
    )
      await this.dropContext(true)
  }
}
