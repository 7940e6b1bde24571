// A scan's browser page made ready before the scan asks for it. Opening a context and its first page costs
// a new renderer process (about half a second on 2 cores, most of a small page's load); a worker makes the
// next one while it waits for work, so a scan starts with a page already open. Each slot is used once: its
// own egress proxy, a fresh context (no cookies, no cache) and a blank page, closed with its scan. A second
// blank page, axe's finisher (axe.ts), is made in the background as soon as the first is open, so axe's
// last step, after the page has been read, does not wait for a new renderer and a second load of axe.
//
// A slot made ahead also evaluates axe once in its blank page. Nothing of it stays in the page the scan
// loads (a new document, a new window), but the renderer keeps what V8 compiled: the first navigation of a
// new page stays in its process, and V8 caches compiled scripts per process by their source, so axe
// evaluated again after the load only runs (374 ms against 863 ms on the slower 2-core machine, of which
// about 200 ms is sending its 654 KB over the protocol, which no cache saves). A slot opened on demand
// skips it: the scan would wait for the compile it saves.
import type { BrowserContext, Page } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import type { BrowserPool } from '../browser.ts'
import { AXE_SOURCE, openFinisher } from './axe.ts'
import { scanContextOptions } from './page-reader.ts'

/** How long a slot made ahead may take to compile axe in its blank page before it is handed out anyway. */
const PRECOMPILE_DEADLINE_MS = 10_000

export interface PageSlot {
  proxy: EgressProxy
  context: BrowserContext
  page: Page
  /** axe's finishing page, on its way (null when it could not be made: axe then opens its own). */
  finisher: Promise<Page | null>
}

interface Prepared extends PageSlot {
  /** The pool's browser generation it was opened under: a slot of a recycled browser is not handed out. */
  generation: number
}

/**
 * Opens a slot: a proxy for the policy, then a context through it and its page. Undone if a step fails.
 * `precompileAxe`: evaluate axe in the blank page first, so that its renderer has it compiled.
 */
export async function openSlot(browser: BrowserPool, policy: EgressPolicy, opts: { precompileAxe?: boolean } = {}): Promise<PageSlot> {
  const proxy = await startEgressProxy(policy)
  let context: BrowserContext | null = null
  try {
    context = await browser.newContext(scanContextOptions(proxy))
    const page = await context.newPage()
    const finisher = openFinisher(context)
    if (opts.precompileAxe)
      await within(
        page.evaluate(AXE_SOURCE).then(() => true),
        PRECOMPILE_DEADLINE_MS,
        false,
      )
    return { proxy, context, page, finisher }
  } catch (e) {
    await context?.close().catch(() => {})
    await proxy.stop().catch(() => {})
    throw e
  }
}

export async function closeSlot(slot: PageSlot): Promise<void> {
  // The finisher, made or on its way, closes with its context.
  await slot.context.close().catch(() => {})
  await slot.proxy.stop().catch(() => {})
}

export class WarmPages {
  private next: Promise<Prepared | null> | null = null
  private closed = false
  /** Crawls running in this process (suspend()): no slot is made ahead meanwhile. */
  private suspended = 0
  /** Used slots still closing (release), so close() waits for them. */
  private closing = new Set<Promise<void>>()
  private unsubscribe: () => void

  constructor(
    private browser: BrowserPool,
    private policy: EgressPolicy,
  ) {
    // A slot made ahead on a browser that a crawl has since recycled would keep that whole Chromium up
    // until the next scan: it is closed at once and made again on the new browser.
    this.unsubscribe = browser.onRecycle(() => {
      const stale = this.next
      if (!stale || this.closed) return
      this.next = null
      this.release(stale)
      this.prepare()
    })
  }

  /** Prepares the next slot in the background, unless one is ready or on its way. */
  prepare(): void {
    if (this.closed || this.next || this.suspended > 0) return
    const generation = this.browser.generation
    this.next = openSlot(this.browser, this.policy, { precompileAxe: true }).then(
      (slot) => ({ ...slot, generation }),
      () => null, // the scan that takes it opens its own, and reports what fails then
    )
  }

  /**
   * A crawl starts in this process: the slot made ahead (a context and two renderers, one with axe compiled)
   * is closed and none is made until every crawl has called the returned function, so the crawl's lanes
   * have that memory and CPU. A scan meanwhile opens its page when it starts (take()).
   */
  suspend(): () => void {
    this.suspended++
    const stale = this.next
    this.next = null
    if (stale) this.release(stale)
    let resumed = false
    return () => {
      if (resumed) return
      resumed = true
      this.suspended--
      this.prepare()
    }
  }

  /** The prepared slot when it is still good, else a new one. The caller closes it (closeSlot). */
  async take(): Promise<PageSlot> {
    const pending = this.next
    this.next = null
    const ready = pending ? await pending : null
    if (ready && ready.generation === this.browser.generation && ready.context.browser()?.isConnected() && !ready.page.isClosed())
      return ready
    if (ready) await closeSlot(ready)
    return openSlot(this.browser, this.policy)
  }

  /**
   * Closes a used slot in the background: closing a context takes a few tens of milliseconds that the scan's
   * report need not wait for. close() waits for it.
   */
  release(slot: PageSlot | Promise<PageSlot | null>): void {
    const done = Promise.resolve(slot)
      .then((s) => (s ? closeSlot(s) : undefined))
      .finally(() => this.closing.delete(done))
    this.closing.add(done)
  }

  async close(): Promise<void> {
    this.closed = true
    this.unsubscribe()
    const pending = this.next
    this.next = null
    const ready = pending ? await pending : null
    if (ready) await closeSlot(ready)
    await Promise.all([...this.closing])
  }
}
