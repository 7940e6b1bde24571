// One lane of a crawl: a browser context of its own and one tab that navigates from page to page. The lane
// opens them when needed, replaces the tab when a page crashed, overran its deadline or failed on our side,
// replaces the context when its browser was recycled or is gone, and closes them with a bound.
import type { BrowserContext, Page } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { BrowserPool } from '../browser.ts'
import type { FrontierEntry } from './frontier.ts'
import type { AuditAuth } from '../../shared/protocol/audit-auth.ts'
import { applyAuth, type StorageState } from './auth.ts'
import { openLaneContext, openLaneTab, visitPage, type PageVisit } from './page.ts'
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
  /** An authenticated crawl: the credentials, and what the login form left (cookies, storage). */
  auth?: { credentials: AuditAuth; storageState?: StorageState }
}

export interface PageOutcome {
  visit: PageVisit | null
  /** Why there is no visit, when there is none and the run did not just stop. */
  error?: string
}

export class PageLane {
  private context: BrowserContext | null = null
  private tab: Page | null = null
  /** The pool's browser generation the context belongs to. */
  private generation = -1

  constructor(
    private readonly index: number,
    private readonly pool: BrowserPool,
    private readonly proxy: EgressProxy,
    private readonly settings: LaneSettings,
    private readonly log: Logger,
  ) {}

  /** Opens what the next page needs: a context on the pool's current browser, and a tab in it. */
  async ready(): Promise<void> {
    if (this.context && this.generation !== this.pool.generation) await this.dropContext()
    if (!this.context) {
      this.generation = this.pool.generation
      this.context = await openLaneContext(this.pool, this.proxy, this.settings.auth?.storageState)
      if (this.settings.auth) await applyAuth(this.context, this.settings.auth.credentials, this.settings.origin)
    }
    this.tab ??= await openLaneTab(this.context, this.settings.blockMedia)
  }

  /**
   * One page in the lane's tab under a hard deadline, then the tab or context replaced when the page left
   * it unusable. Call ready() first.
   */
  async visit(
    entry: FrontierEntry,
    o: { halt: AbortSignal; wantsAxe: (template: string) => boolean; onPageStart: (page: Page) => void },
  ): Promise<PageOutcome> {
    const context = this.context!
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
    const task = visitPage(this.tab!, entry.url, this.settings.origin, {
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
    if (outcome.contextBroken) await this.dropContext()
    else if (outcome.tabSpent) await this.dropTab()
    return { visit: outcome.visit, ...(outcome.error !== undefined ? { error: outcome.error } : {}) }
  }

  /** Closes the context (bounded); one that will not close has its browser recycled. */
  async dropContext(): Promise<void> {
    const c = this.context
    this.context = null
    this.tab = null
    if (
      c &&
      !(await within(
        c.close().then(
          () => true,
          () => true,
        ),
        this.settings.closeTimeoutMs,
        false,
      ))
    ) {
      this.log.warn('a browser context did not close; recycling the browser', { lane: this.index })
      this.pool.recycle()
    }
  }

  /** Closes the tab (bounded); a tab that will not close takes its context with it. */
  private async dropTab(): Promise<void> {
    const t = this.tab
    this.tab = null
    if (
      t &&
      !(await within(
        t.close().then(
          () => true,
          () => true,
        ),
        this.settings.closeTimeoutMs,
        false,
      ))
    )
      await this.dropContext()
  }
}
