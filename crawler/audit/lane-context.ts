// The browser context a crawl's lanes share, as one visitor's browser with one tab per lane: one cookie jar
// and storage, and Chromium keeps the site's pages in one or two renderer processes instead of one per
// lane (processes are never shared between contexts; within one, same-site tabs share one up to Chromium's
// threshold). Each lane holds the context while it uses it; a context is replaced when its browser was
// recycled or is gone, or a lane found it broken, and is closed (with a bound) once no lane holds it.
import type { BrowserContext } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { BrowserPool } from '../browser.ts'

interface Shared {
  context: Promise<BrowserContext>
  /** The pool's browser generation it was opened under. */
  generation: number
  holders: number
  /** No longer handed out: its browser was recycled, or a lane found it broken. */
  stale: boolean
}

/** One lane's hold on the shared context. */
export interface ContextHold {
  readonly context: BrowserContext
  readonly shared: Shared
}

export class LaneContexts {
  private current: Shared | null = null

  constructor(
    private readonly pool: BrowserPool,
    /** Opens a context for the lanes (proxy, credentials). */
    private readonly open: () => Promise<BrowserContext>,
    private readonly closeTimeoutMs: number,
    private readonly log: Logger,
  ) {}

  /** Whether a hold's context may still be used for a next page. */
  usable(hold: ContextHold): boolean {
    return !hold.shared.stale && hold.shared.generation === this.pool.generation
  }

  /** A hold on the context of the pool's current browser, opened when there is none. */
  async acquire(): Promise<ContextHold> {
    let s = this.current
    if (s && (s.stale || s.generation !== this.pool.generation)) {
      s.stale = true
      s = this.current = null
    }
    if (!s) {
      const opened: Shared = { context: this.open(), generation: this.pool.generation, holders: 0, stale: false }
      opened.context.catch(() => {
        opened.stale = true
        if (this.current === opened) this.current = null
      })
      s = this.current = opened
    }
    s.holders++
    try {
      return { context: await s.context, shared: s }
    } catch (e) {
      s.holders--
      throw e
    }
  }

  /**
   * Lets go of a hold; `broken`: the context failed under this lane, so no lane gets it again. The last
   * holder closes it (bounded); one that will not close has its browser recycled.
   */
  async release(hold: ContextHold, broken = false): Promise<void> {
    const s = hold.shared
    if (broken) s.stale = true
    if (--s.holders > 0) return
    if (this.current === s) this.current = null
    s.stale = true
    const closed = await within(
      hold.context.close().then(
        () => true,
        () => true,
      ),
      this.closeTimeoutMs,
      false,
    )
    if (!closed) {
      this.log.warn('a browser context did not close; recycling the browser')
      this.pool.recycle()
    }
  }
}
