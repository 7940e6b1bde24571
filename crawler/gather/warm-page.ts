// A scan's browser page made ready before the scan asks for it. Opening a context and its first page costs
// a new renderer process (about half a second on 2 cores, most of a small page's load); a worker makes the
// next one while it waits for work, or, when scans come back to back, while a scan's loaded page waits for
// network quiet (its CPU mostly idle then), so a scan starts with a page already open. Each slot is its own
// egress proxy, a fresh context (no cookies, no cache) and a blank page, closed with its scan, or kept, cleared,
// for the same account's next scan (kept-pages.ts). axe's finisher (axe.ts), a blank page with axe loaded, is
// ready before it is needed, so axe's last step, after the page has been read, does not wait for a new
// renderer and a second load of axe.
//
// axe's finisher is not made per slot: one blank page per browser, in a context of its own that reaches no
// network, serves every scan of the worker (SharedFinisher). finishRun only merges the partial results it is
// given (JSON from the scanned page) under the configuration set once, so one page finishes every scan the
// same way; a per-slot finisher cost every scan a renderer and an evaluation of axe's 654 KB.
//
// A slot made ahead while the worker has room also evaluates axe once in its blank page. Nothing of it stays
// in the page the scan loads (a new document, a new window), but the renderer keeps what V8 compiled: the
// first navigation of a new page stays in its process, and V8 caches compiled scripts per process by their
// source, so axe evaluated again after the load only runs (374 ms against 863 ms on the slower 2-core
// machine, of which about 200 ms is sending its 654 KB over the protocol, which no cache saves). It buys
// latency with CPU: the evaluation in the blank page costs more than it saves in the loaded one (Chromium 147
// ms against 80 ms saved here; a scan 0.06 CPU-s more, bench/scan-cpu.ts). So it is done only while the
// worker has room, fewer scans running than its concurrency: a slot made while the worker is full (a
// saturated worker, where CPU is what limits the rate) is left plain, and compiled later if room comes
// before a scan takes it. A slot opened on demand skips it: the scan would wait for the compile it saves.
import type { BrowserContext, Page } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import type { EgressPolicy } from '../../shared/egress/guard.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import type { BrowserPool } from '../browser.ts'
import { evaluateAxe, openFinisher } from './axe.ts'
import { KeptPages, logOrigins, type OriginLog } from './kept-pages.ts'
import { scanContextOptions } from './page-reader.ts'

/** How long a slot made ahead may take to compile axe in its blank page before it is handed out anyway. */
const PRECOMPILE_DEADLINE_MS = 10_000
/** How long the worker keeps room for a scan before the slots made while it had none get axe compiled. */
export const IDLE_COMPILE_DELAY_MS = 250

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
  /** axe evaluated in its blank page, or on its way (null: not yet, made while the worker was full). */
  compiled: Promise<boolean> | null
}

/** Evaluates axe in a blank page so that its renderer has it compiled; false when it failed or took too long. */
function precompile(page: Page): Promise<boolean> {
  return within(
    evaluateAxe(page).then(() => true),
    PRECOMPILE_DEADLINE_MS,
    false,
  ).catch(() => false)
}

/** Opens a slot: a proxy for the policy, then a context through it and its page. Undone if a step fails. */
export async function openSlot(
  browser: BrowserPool,
  policy: EgressPolicy,
  opts: { finisher?: () => Promise<Page | null> } = {},
): Promise<PageSlot> {
  const proxy = await startEgressProxy(policy)
  let context: BrowserContext | null = null
  try {
    context = await browser.newContext(scanContextOptions(proxy))
    const page = await context.newPage()
    const finisher = opts.finisher ? opts.finisher() : openFinisher(context)
    return { proxy, context, page, finisher }
  } catch (e) {
    await context?.close().catch(() => {})
    await proxy.stop().catch(() => {})
    throw e
  }
}

export async function closeSlot(slot: PageSlot): Promise<void> {
  // A finisher made in the slot's context, made or on its way, closes with it; the shared one stays.
  await slot.context.close().catch(() => {})
  await slot.proxy.stop().catch(() => {})
}

interface Made {
  generation: number
  context: BrowserContext | null
  page: Promise<Page | null>
  /** Closed, crashed, or never made: the next scan makes another. */
  broken: boolean
}

/**
 * axe's finishing page for every scan on one browser: a context with no proxy of its own (the pool's dead
 * address: it reaches nothing) and one blank page with axe loaded and configured (openFinisher). Made again
 * when it broke or the browser was recycled; closed with the worker.
 */
export class SharedFinisher {
  private made: Made | null = null
  private closed = false
  private closing = new Set<Promise<void>>()

  constructor(private browser: BrowserPool) {}

  /** The page, made now if there is none for the current browser. Never rejects; null when it cannot be made. */
  get(): Promise<Page | null> {
    const m = this.made
    if (m && !m.broken && m.generation === this.browser.generation) return m.page
    this.drop()
    if (this.closed) return Promise.resolve(null)
    const entry: Made = { generation: this.browser.generation, context: null, page: Promise.resolve(null), broken: false }
    entry.page = (async () => {
      const context = await this.browser.newContext({ serviceWorkers: 'block' })
      entry.context = context
      const page = this.made === entry ? await openFinisher(context) : null
      if (!page || this.made !== entry) {
        entry.broken = true
        return null
      }
      page.once('crash', () => (entry.broken = true))
      page.once('close', () => (entry.broken = true))
      return page
    })().catch(() => {
      entry.broken = true
      return null
    })
    this.made = entry
    return entry.page
  }

  /** Lets the current page go (a recycled browser closes once its contexts are closed). */
  drop(): void {
    const m = this.made
    if (!m) return
    this.made = null
    const done: Promise<void> = m.page
      .then(() => m.context?.close())
      .catch(() => {})
      .finally(() => this.closing.delete(done))
    this.closing.add(done)
  }

  /** Resolves once every page let go has closed. */
  async settled(): Promise<void> {
    await Promise.all([...this.closing])
  }

  async close(): Promise<void> {
    this.closed = true
    this.drop()
    await this.settled()
  }
}

export class WarmPages {
  /** Slots made ahead or on their way, oldest first; each is started once the one before it has settled. */
  private made: Array<Promise<Prepared | null>> = []
  readonly finisher: SharedFinisher
  private closed = false
  /** Crawls running in this process (suspend()): no slot is made ahead meanwhile. */
  private suspended = 0
  /** Scans holding a slot now (take() to giveBack()): from `compileBelow` on, a slot is made without axe's compile. */
  private running = 0
  /** Used slots still closing (release), so close() waits for them. */
  private closing = new Set<Promise<void>>()
  private unsubscribe: () => void
  /** Used pages kept for their account's next scan (kept-pages.ts); none when `keep` is 0. */
  private readonly kept: KeptPages<Prepared>
  /** The origins each slot handed to a scan of an account has been on, for clearing it after. */
  private origins = new WeakMap<PageSlot, OriginLog>()

  /**
   * `depth`: slots kept made ahead. With two, a scan that follows another at once takes a slot that is
   * already open, while the one it replaces is made; with one, it waited for that slot (bench/scan-capacity's
   * back to back against isolated).
   * `compileBelow`: a slot gets axe compiled in it while fewer scans than this run (the worker's concurrency:
   * a worker with a scan slot free has the CPU to spare; a full one does not). 1: only while none runs.
   * `keep`: used pages kept for their account's next scan, at most (kept-pages.ts); 0: every slot is closed
   * after its scan.
   */
  constructor(
    private browser: BrowserPool,
    private policy: EgressPolicy,
    private readonly depth = 1,
    private readonly compileBelow = 1,
    keep = 0,
  ) {
    this.finisher = new SharedFinisher(browser)
    this.kept = new KeptPages<Prepared>(keep, (slot) => this.release(slot))
    // A slot made ahead on a browser that a crawl has since recycled would keep that whole Chromium up
    // until the next scan: it is closed at once and made again on the new browser.
    this.unsubscribe = browser.onRecycle(() => {
      this.finisher.drop()
      this.kept.releaseAll()
      if (this.made.length === 0 || this.closed) return
      this.releaseMade()
      this.prepare()
    })
  }

  /** Prepares slots in the background up to `upTo` (at most `depth`), one after another. */
  prepare(upTo = this.depth): void {
    while (!this.closed && this.suspended === 0 && this.made.length < Math.min(upTo, this.depth)) {
      const generation = this.browser.generation
      // A slot still being made when a crawl suspends this asks for no finishing page: it is let go unused.
      const finisher = () => (this.suspended > 0 ? Promise.resolve(null) : this.finisher.get())
      const before = this.made.at(-1) ?? Promise.resolve(null)
      const slot = before
        .then(() => openSlot(this.browser, this.policy, { finisher }))
        .then(
          (opened) => this.compileIfRoom({ ...opened, generation, compiled: null }),
          () => null, // the scan that takes it opens its own, and reports what fails then
        )
      this.made.push(slot)
    }
  }

  /** Starts axe's compile in a made slot when the worker has room (fewer scans than compileBelow) and it has none yet. */
  private compileIfRoom(slot: Prepared): Prepared {
    if (this.running < this.compileBelow && !slot.compiled && !this.closed) slot.compiled = precompile(slot.page)
    return slot
  }

  /** Every slot made ahead or on its way is closed (in the background). */
  private releaseMade(): void {
    for (const stale of this.made.splice(0)) this.release(stale)
  }

  /**
   * A crawl starts in this process: the slots made ahead (each a context and a renderer with axe compiled)
   * are closed and none is made until every crawl has called the returned function, so the crawl's lanes
   * have that memory and CPU. A scan meanwhile opens its page when it starts (take()).
   */
  suspend(): () => void {
    this.suspended++
    this.releaseMade()
    this.kept.releaseAll()
    // axe's shared finishing page goes too (a slot made ahead does not ask for it while suspended, see
    // prepare()); a scan during the crawl makes it again when it needs it.
    this.finisher.drop()
    let resumed = false
    return () => {
      if (resumed) return
      resumed = true
      this.suspended--
      this.prepare()
    }
  }

  /**
   * Whether the next slot made ahead is open (with axe compiled in it when it was made with room) and axe's
   * finishing page made, waiting at most `ms` for them (none on its way: false). The finishing page loads
   * axe too: a scan that starts while it does shares the cores with it.
   */
  async ready(ms: number): Promise<boolean> {
    const next = this.made[0]?.then(async (s) => {
      if (!s) return false
      await s.compiled
      return (await s.finisher) !== null
    })
    return next ? within(next, ms, false) : false
  }

  /**
   * The page the owner's last scan used, kept and cleared (kept-pages.ts), else the oldest slot made ahead
   * when it is still good, else a new one. The scan gives it back with giveBack(); until then it counts as
   * running. A compile of axe still running in it is waited for: the page's load would wait for the
   * renderer's main thread anyway.
   */
  async take(owner?: string): Promise<PageSlot> {
    const slot = await this.takeSlot(owner)
    if (owner && this.kept.enabled) this.origins.set(slot, logOrigins(slot.page))
    return slot
  }

  private async takeSlot(owner?: string): Promise<Prepared> {
    const current = (s: Prepared) => s.generation === this.browser.generation && s.context.browser()?.isConnected() === true
    const kept = owner ? await this.kept.take(owner, current) : null
    if (kept) {
      this.running++
      // The shared finishing page it was made with may have been made again since.
      kept.finisher = this.finisher.get()
      return kept
    }
    const pending = this.made.shift()
    // Counted as running once its slot is there: a slot still being made for it counts the scans before it only.
    const ready = pending ? await pending : null
    this.running++
    try {
      if (ready && current(ready) && !ready.page.isClosed()) {
        await ready.compiled
        return ready
      }
      if (ready) await closeSlot(ready)
      const generation = this.browser.generation
      const opened = await openSlot(this.browser, this.policy, { finisher: () => this.finisher.get() })
      return { ...opened, generation, compiled: null }
    } catch (e) {
      this.running--
      throw e
    }
  }

  /**
   * A scan has ended: the slots it used are made again once the worker has stayed without a scan for a moment.
   * A scan that follows at once makes the one it needs next itself, while its page waits for network quiet
   * (prepareNext): made right as a scan ends, the new context and renderer shared the cores with the next
   * scan's load and reads.
   */
  prepareWhenIdle(): void {
    const later = setTimeout(() => {
      if (this.running === 0) this.prepare()
    }, IDLE_COMPILE_DELAY_MS)
    later.unref?.()
  }

  /** A scan's page has loaded and waits for network quiet, the CPU mostly idle: one slot for the next scan is made now. */
  prepareNext(): void {
    this.prepare(1)
  }

  /**
   * A scan is done with the slot take() gave it: kept for the owner's next scan (kept-pages.ts), or closed in
   * the background (release). When the worker has room again, the slots made while it had none get axe
   * compiled in them, once it has kept the room a moment.
   */
  giveBack(slot: PageSlot, owner?: string): void {
    this.running = Math.max(0, this.running - 1)
    const origins = this.origins.get(slot)
    origins?.stop()
    const keep = owner && origins && !this.closed && this.suspended === 0 && (slot as Prepared).generation === this.browser.generation
    if (keep) this.kept.keep(owner, slot as Prepared, origins.origins)
    else this.release(slot)
    if (this.running >= this.compileBelow) return
    // Not at once: scans back to back leave the worker's slot free for the few milliseconds between one
    // answer and the next call, and the next scan would then wait for a compile started in that gap.
    const later = setTimeout(() => {
      if (this.running < this.compileBelow) for (const made of this.made) void made.then((s) => s && this.compileIfRoom(s))
    }, IDLE_COMPILE_DELAY_MS)
    later.unref?.()
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

  /**
   * Whether every slot let go (suspend(), release()) and axe's finishing page have closed, waiting at most
   * `ms` for them: a crawl that starts before their renderers have gone adds its own to theirs.
   */
  settled(ms: number): Promise<boolean> {
    return within(
      this.kept
        .drained()
        .then(() => Promise.all([...this.closing, this.finisher.settled()]))
        .then(() => true),
      ms,
      false,
    )
  }

  async close(): Promise<void> {
    this.closed = true
    this.unsubscribe()
    this.releaseMade()
    this.kept.releaseAll()
    await this.kept.drained()
    await Promise.all([...this.closing])
    await this.finisher.close()
  }
}
