// A scan's page kept for the same account's next scan. A fresh context costs a scan its renderer: a process
// forked and set up, a V8 heap, Blink, and axe's 654 KB compiled again, most of a scan's CPU on a machine whose
// page faults are dear (docs/operations.md). An account that scans again soon (an agent re-checking its fix,
// a CI job going through its pages) gets the context its last scan used, its tab navigated away and emptied,
// so the next page of the same site loads in the same renderer with axe already compiled there.
//
// What one scan leaves is cleared before another may take the page: the document (the tab goes to
// about:blank, and the tab's session storage with it), every cookie, the HTTP cache, and the storage of each
// origin its frames were on (local storage, IndexedDB, cache storage, file systems; service workers are
// blocked in scan contexts).
// A page is only ever handed to a scan of the account whose scan used it: no context, cache or renderer is
// shared between accounts. What stays is what a browser keeps for itself and a site cannot read back: the
// connections to the scan's egress proxy, the HSTS and client-hint preferences the same site's answers set,
// and V8's compiled code. A page is kept at most KEEP_MS and used at most KEEP_USES times; one that cannot be
// cleared within CLEAN_DEADLINE_MS, or that crashed, is closed instead.
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'

/**
 * How long a page is kept for its account's next scan: an agent's loop of a fix, a rebuild and a rescan takes
 * minutes more often than seconds, and a kept page costs only memory (bounded by SCAN_PAGES_KEPT).
 */
export const KEEP_MS = 120_000
/** Scans one kept context serves before it is closed (what a renderer accumulates stays bounded). */
export const KEEP_USES = 20
/** How long clearing a page may take before it is closed instead. */
export const CLEAN_DEADLINE_MS = 5_000
/** Origins whose storage a page may have used for it to be kept: a page of more is closed instead. */
export const MAX_KEPT_ORIGINS = 32

export interface Keepable {
  context: BrowserContext
  page: Page
}

/** The origins a page's frames have been on, recorded from when it is handed to a scan until stop(). */
export interface OriginLog {
  origins: Set<string>
  stop(): void
}

export function logOrigins(page: Page): OriginLog {
  const origins = new Set<string>()
  const onNavigated = (frame: { url(): string }) => {
    const url = frame.url()
    if (url.startsWith('http:') || url.startsWith('https:')) origins.add(new URL(url).origin)
  }
  page.on('framenavigated', onNavigated)
  return { origins, stop: () => page.off('framenavigated', onNavigated) }
}

/**
 * Clears what a scan left in its page and context (see the top of this file): true when all of it was
 * cleared within CLEAN_DEADLINE_MS.
 */
export async function clearForNextScan(kept: Keepable, cdp: CDPSession, origins: Set<string>): Promise<boolean> {
  if (origins.size > MAX_KEPT_ORIGINS || kept.page.isClosed()) return false
  const steps = async () => {
    // Leaving the document for about:blank also leaves the tab's session storage behind (the test checks it).
    // A navigation away that does not end cleanly closes the page instead: one whose load ended on an error
    // page (an untrusted certificate) has that page's commit interrupt it, and when the tab was kept after a
    // second try, a navigation still in flight there broke the next scan's load (the end-to-end fixture test).
    await kept.page.goto('about:blank', { timeout: CLEAN_DEADLINE_MS })
    // Every cookie of the context, those of subresources on other sites too, not only the frames' origins'.
    await kept.context.clearCookies()
    await cdp.send('Network.clearBrowserCache')
    for (const origin of origins) await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })
    return true
  }
  return within(steps(), CLEAN_DEADLINE_MS, false)
}

interface Entry<S extends Keepable> {
  slot: S
  timer: ReturnType<typeof setTimeout>
}

/**
 * Pages kept per account, at most `max` in all (the oldest let go first), each for `keepMs`. `release`
 * closes a page that is let go: expired, pushed out, or not clean.
 */
export class KeptPages<S extends Keepable> {
  private entries = new Map<string, Promise<Entry<S> | null>>()
  /** Each page's scans so far and the protocol session that clears it, from its first keep() on. */
  private uses = new WeakMap<S, { uses: number; cdp: CDPSession }>()
  /** Pages let go and not yet handed to `release` (still being cleared). */
  private letGo = new Set<Promise<void>>()

  constructor(
    private readonly max: number,
    private readonly release: (slot: S) => void,
    private readonly keepMs = KEEP_MS,
  ) {}

  get enabled(): boolean {
    return this.max > 0
  }

  /**
   * A page the account's last scan used, cleared, or null. A page still being cleared is waited for (at most
   * CLEAN_DEADLINE_MS); `usable` says whether it may still be handed out (the browser it came from is current).
   */
  async take(owner: string, usable: (slot: S) => boolean): Promise<S | null> {
    const pending = this.entries.get(owner)
    if (!pending) return null
    this.entries.delete(owner)
    const entry = await pending
    if (!entry) return null
    clearTimeout(entry.timer)
    if (!usable(entry.slot) || entry.slot.page.isClosed()) {
      this.release(entry.slot)
      return null
    }
    return entry.slot
  }

  /** Keeps a scan's page for the owner's next scan once it is cleared; closes it when it cannot be. */
  keep(owner: string, slot: S, origins: Set<string>): void {
    const used = this.uses.get(slot)
    const uses = (used?.uses ?? 0) + 1
    const before = this.entries.get(owner)
    this.entries.delete(owner)
    if (before) this.letGoOf(before)
    // Whoever takes it out of `entries` (take, letGoOf) has it once it is cleared; one not cleared is closed here.
    let pending!: Promise<Entry<S> | null>
    pending = (async (): Promise<Entry<S> | null> => {
      const cdp = used?.cdp ?? (await within(slot.context.newCDPSession(slot.page), CLEAN_DEADLINE_MS, null))
      if (cdp) this.uses.set(slot, { uses, cdp })
      const clean = cdp !== null && uses < KEEP_USES && (await clearForNextScan(slot, cdp, origins))
      if (!clean) {
        this.release(slot)
        return null
      }
      const timer = setTimeout(() => this.expire(owner, pending), this.keepMs)
      timer.unref?.()
      return { slot, timer }
    })().catch(() => {
      this.release(slot)
      return null
    })
    this.entries.set(owner, pending)
    while (this.entries.size > this.max) {
      const [oldest, entry] = this.entries.entries().next().value!
      this.entries.delete(oldest)
      this.letGoOf(entry)
    }
  }

  /** Lets every kept page go (a crawl starts, the browser is recycled, the worker stops). */
  releaseAll(): void {
    const all = [...this.entries.values()]
    this.entries.clear()
    for (const p of all) this.letGoOf(p)
  }

  /** Resolves once every page let go so far has been handed to `release`. */
  async drained(): Promise<void> {
    await Promise.all([...this.letGo])
  }

  /** Pages kept or being cleared now. */
  get size(): number {
    return this.entries.size
  }

  private expire(owner: string, pending: Promise<Entry<S> | null>): void {
    if (this.entries.get(owner) !== pending) return
    this.entries.delete(owner)
    this.letGoOf(pending)
  }

  /** A page no longer kept: released once cleared (one that could not be cleared released itself). */
  private letGoOf(pending: Promise<Entry<S> | null>): void {
    const done: Promise<void> = pending
      .then((e) => {
        if (!e) return
        clearTimeout(e.timer)
        this.release(e.slot)
      })
      .finally(() => this.letGo.delete(done))
    this.letGo.add(done)
  }
}
