// One warm Chromium per crawler process (Debian's headless shell when installed); a fresh context per scan.
// Relaunched if it dies.
import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from 'playwright-core'
import type { Logger } from '../shared/lib/log.ts'
import { CHROMIUM_EGRESS_ARGS } from '../shared/egress/proxy.ts'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]

/**
 * The features Playwright turns off in every Chromium it launches (playwright-core 1.65's chromiumSwitches),
 * repeated here because Chromium reads only the last --disable-features on its command line: ours replaces
 * Playwright's, so it has to carry them. test/crawler/browser.test.ts fails when a Playwright upgrade adds
 * one this list lacks.
 */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
] as const

/**
 * Chromium features the crawler turns off besides Playwright's:
 * - its spare renderer. Chromium keeps one renderer process started ahead for the next navigation; with a
 *   crawl's lanes each in a context of its own, the spare almost never belongs to the context that
 *   navigates, so it is thrown away and started again on nearly every page: 108 renderer processes for 60
 *   navigations in 4 contexts, against 8 without it (3 and 2 in one context; measured with a context per
 *   lane, before the lanes shared one). Scans do not miss it: their pages are opened ahead (gather/warm-page.ts).
 * - the address bar's suggestion popups, which Chromium 156 makes ahead as web pages even when headless
 *   (chrome://omnibox-popup.top-chrome/ and its AI variant, in a renderer of their own): a renderer that
 *   never shows anything, about 140 MB of resident set beside a crawl's four lanes (bench/crawl-throughput).
 * - a new frame host for each document (RenderDocument). With it, every page a crawl lane's tab navigates to
 *   gets a compositor and tile pool of its own, and the last pages' tiles (shared memory, counted in the
 *   renderer's resident set and again in the GPU process's) were freed only a second or two later: one lane
 *   held 275 tiles of 256 x 256 pixels (about 70 MB) at concurrency 1, where without it the new document
 *   reuses the tab's pool (43 tiles). The crawl's peak fell by 100-170 MB at concurrency 1, 2 and 4, and its
 *   pages a minute did not (bench/crawl-throughput --quick, one run each way; docs/decisions.md).
 */
export const CHROMIUM_OFF_FEATURES = [
  'SpareRendererForSitePerProcess',
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'RenderDocument',
] as const
export const CHROMIUM_FEATURE_ARGS = [`--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...CHROMIUM_OFF_FEATURES].join(',')}`]

/**
 * With `CRAWL_SHARED_RENDERER`, pages of one site in one context share a renderer. With a renderer-process
 * limit of 1, Chromium puts a new page in an existing renderer suitable for it: one of the same context whose
 * process is locked to the same site. A crawl's lanes share a context and crawl one site, so they share one
 * renderer instead of one each; scans keep a renderer each (every scan has a context of its own, and no
 * renderer of another context is ever suitable), and so does every other site a page frames (site
 * isolation's locks still hold). The limit is soft: a page with no suitable renderer gets a new one.
 * bench/crawl-throughput --quick: at c=4 the peak 778-816 MB against 1072-1110 (one renderer of about 170 MB
 * against four of 114-122), at c=2 741-750 against 853-863. The price is one main thread for every lane: at
 * c=4 a 200-page crawl made 743-806 pages a minute against 865 without it (1.90-2.10x Crawlee's, where the
 * target is 2x), and a page whose script never yields holds up the other lanes' pages until a lane's
 * deadline ends it (crawler/audit/lane.ts, freeRenderer). So it is for pods short of memory, off by default.
 * docs/decisions.md.
 */
export const SHARED_RENDERER_ARGS = ['--renderer-process-limit=1']

/**
 * Debian's old headless shell (package chromium-headless-shell), the Chromium a scan runs in when present:
 * the same version and engine as the full browser, without its windows. The full browser in headless mode
 * makes a window with its toolbar and tab strip for every context and composites it; a scan paid that in the
 * browser process (0.18 CPU-s a scan against 0.08 in the shell; all of Chromium 0.47 against 0.34, bench/
 * scan-cpu.ts). It is what Playwright itself launches for headless pages.
 */
export const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell'
/** Debian's full browser: the one a person runs, and so the one the benches run Lighthouse in. */
export const FULL_CHROMIUM = '/usr/bin/chromium'

/** The Chromium to launch: the configured one, else the headless shell, else the full browser, else Playwright's. */
export function chromiumPath(configured: string): string | undefined {
  if (configured) return configured
  for (const path of [HEADLESS_SHELL, FULL_CHROMIUM]) if (existsSync(path)) return path
  return undefined
}

/** Debian's full browser when present (a reference tool run as its users run it), else chromiumPath's. */
export function fullChromiumPath(): string | undefined {
  return existsSync(FULL_CHROMIUM) ? FULL_CHROMIUM : chromiumPath('')
}

export class BrowserPool {
  private browser: Promise<Browser> | null = null
  private closed = false
  /** The process is stopping (shuttingDown()): a browser that goes away now is no news. */
  private stopping = false
  /** Contexts still open per browser, so a recycled browser closes only once its pages are done. */
  private openContexts = new Map<Promise<Browser>, number>()
  /** Browsers recycled but still serving contexts opened before. */
  private retiring = new Set<Promise<Browser>>()
  /** Retired browsers being closed, so close() can wait for them too. */
  private closing = new Set<Promise<void>>()
  /** Bumped by recycle(): contexts opened under an older generation belong to a retiring browser. */
  generation = 0
  /** Called after each recycle (see onRecycle). */
  private recycled = new Set<() => void>()

  constructor(
    private executablePath: string | undefined,
    private log: Logger,
    /** Certificates (by SPKI hash) trusted besides the public CAs. */
    private trustedSpki: string[] = [],
    /** sharedRenderer: a crawl's lanes share one renderer (SHARED_RENDERER_ARGS). */
    private options: { sharedRenderer?: boolean } = {},
  ) {}

  private launch(): Promise<Browser> {
    const p = chromium
      .launch({
        executablePath: this.executablePath,
        args: [
          ...CHROMIUM_ARGS,
          ...CHROMIUM_FEATURE_ARGS,
          ...(this.options.sharedRenderer ? SHARED_RENDERER_ARGS : []),
          ...CHROMIUM_EGRESS_ARGS,
          ...(this.trustedSpki.length ? [`--ignore-certificate-errors-spki-list=${this.trustedSpki.join(',')}`] : []),
        ],
        // Contexts set their own proxy (the egress guard). A context without one would use this dead
        // address and reach nothing: deny by default.
        proxy: { server: 'http://127.0.0.1:9' },
        timeout: 30_000,
        // The process's own shutdown (server/main.ts) closes the browser, after the workers have handed their
        // jobs back. Playwright's handlers would close it at once on the signal, and the pages still loading
        // would fail and be stored as failed pages of an audit that then completes, instead of being left
        // for the next holder. Its exit handler still kills the browser if the process leaves any other way.
        handleSIGTERM: false,
        handleSIGINT: false,
      })
      .then((b) => {
        b.on('disconnected', () => {
          // A recycled browser disconnects when it is closed on purpose: nothing to report.
          if (this.browser !== p) return
          this.browser = null
          // During the process's own shutdown the browser may go before close() is reached (the workers hand
          // their jobs back first): said as what it is, not as a fault a next scan will mend.
          if (this.closed || this.stopping) this.log.info('browser closed during shutdown')
          else this.log.warn('browser disconnected; next scan relaunches it')
        })
        return b
      })
    p.catch(() => {
      if (this.browser === p) this.browser = null
    })
    return p
  }

  async newContext(options: BrowserContextOptions): Promise<BrowserContext> {
    if (this.closed) throw new Error('browser pool closed')
    this.browser ??= this.launch()
    const p = this.browser
    const browser = await p
    const context = await browser.newContext(options)
    this.openContexts.set(p, (this.openContexts.get(p) ?? 0) + 1)
    context.once('close', () => {
      const left = (this.openContexts.get(p) ?? 1) - 1
      if (left > 0) return void this.openContexts.set(p, left)
      this.openContexts.delete(p)
      if (this.retiring.has(p)) this.closeRetired(p)
    })
    return context
  }

  /**
   * Retires the current browser (long crawls: Chromium's memory grows with pages served). The next
   * newContext launches a fresh one; the old one closes once every context opened on it is closed.
   */
  recycle(): void {
    const p = this.browser
    if (!p) return
    this.browser = null
    this.generation++
    this.retiring.add(p)
    if (!this.openContexts.get(p)) this.closeRetired(p)
    for (const listener of this.recycled) listener()
  }

  /**
   * Calls `listener` after each recycle, so a holder of a context opened ahead (a warm scan page) can let
   * it go: the retired browser, a whole Chromium, stays up for as long as any of its contexts is open.
   * Returns the unsubscribe function.
   */
  onRecycle(listener: () => void): () => void {
    this.recycled.add(listener)
    return () => void this.recycled.delete(listener)
  }

  private closeRetired(p: Promise<Browser>): void {
    this.retiring.delete(p)
    const done: Promise<void> = p
      .then((b) => b.close())
      .catch(() => {})
      .finally(() => this.closing.delete(done))
    this.closing.add(done)
  }

  /** Readiness: a browser is up and connected (launched now if none is). Throws when none can start. */
  async check(): Promise<void> {
    if (this.closed) throw new Error('browser pool closed')
    this.browser ??= this.launch()
    const b = await this.browser
    if (!b.isConnected()) throw new Error('browser disconnected')
  }

  /** Launches now, so the first scan does not pay for it. */
  async warm(): Promise<void> {
    this.browser ??= this.launch()
    await this.browser
  }

  /** The process has begun to stop: from now on a browser that disconnects is not reported as a fault. */
  shuttingDown(): void {
    this.stopping = true
  }

  async close(): Promise<void> {
    this.closed = true
    const b = this.browser
    this.browser = null
    for (const p of [...this.retiring]) this.closeRetired(p)
    await Promise.all([b?.then((browser) => browser.close()).catch(() => {}), ...this.closing])
  }
}
