// The page in Chromium: load it through the egress proxy, wait for the network to go quiet, then read DOM,
// scripts, cookies and timings (and run axe). readLoadedPage is shared with the site crawler.
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core'
import type { AccessibilityArtifact, BrowserCookie, PageArtifact, PerformanceArtifact, ScriptArtifact } from '../../shared/checks/types.ts'
import { BROWSER_USER_AGENT } from '../../shared/egress/http.ts'
import { egressFailure, proxySettingsFor, type EgressProxy } from '../../shared/egress/proxy.ts'
import type { BrowserPool } from '../browser.ts'
import { preloadAxe, runAxe } from './axe.ts'
import { readInlineCode } from './inline-code.ts'
import { GATHER_LIMITS } from './limits.ts'
import { quiet, recordPage, type PageRecorder } from './page-recorder.ts'
import { readTimings } from './timings.ts'
import { errorMessage } from '../../shared/errors.ts'

function toCookie(c: Awaited<ReturnType<BrowserContext['cookies']>>[number]): BrowserCookie {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain,
    path: c.path,
    secure: c.secure,
    httpOnly: c.httpOnly,
    sameSite: c.sameSite ?? null,
    expires: c.expires,
  }
}

/**
 * Runs in the page (main world): the serialised document as Playwright's page.content() makes it (doctype,
 * then the root element's outerHTML), the title, and the texts of inline scripts, those in open shadow roots
 * included as Playwright's selector engine finds them. One plain evaluation: page.content() and title()
 * evaluate in a utility world and $$eval in the page's copy of Playwright's injected script, each set up anew
 * for every document, which cost a crawl about 100 ms more CPU per page than this evaluation (a bare page
 * load: 121 to 135 ms; docs/decisions.md).
 * Self-contained: it is serialised.
 */
export function readDocument(limits: { html: number; scripts: number; elements: number }): {
  html: string
  title: string
  inline: string[]
} {
  const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : ''
  const html = (doctype + (document.documentElement?.outerHTML ?? '')).slice(0, limits.html)
  const roots: Array<Document | ShadowRoot> = [document]
  const all = document.getElementsByTagName('*')
  for (let i = 0; i < all.length && i < limits.elements; i++) {
    const shadow = all[i]!.shadowRoot
    if (shadow) roots.push(shadow)
  }
  const inline: string[] = []
  for (const root of roots) {
    for (const el of Array.from(root.querySelectorAll('script:not([src])'))) {
      if (inline.length >= limits.scripts) break
      inline.push(el.textContent ?? '')
    }
  }
  return { html, title: document.title, inline }
}

export type Loaded = {
  page: PageArtifact | null
  scripts: ScriptArtifact[]
  accessibility: AccessibilityArtifact | null
  performance: PerformanceArtifact | null
  error: string | null
  /** Where the browser phase's time went, in ms: load event, network quiet, reads, axe (report timings). */
  phases: Record<string, number>
}

const since = (t: number) => Math.round(performance.now() - t)

/**
 * Reads a loaded page: DOM, title, inline scripts, cookies and timings (before any interaction), then
 * axe when asked. Shared with the site crawler, which runs axe on a sample of pages only.
 */
export async function readLoadedPage(
  page: Page,
  context: BrowserContext,
  rec: PageRecorder,
  loaded: { status: number; error: string | null },
  opts: { axe: boolean; axeFinisher?: Promise<Page | null> },
): Promise<Loaded> {
  const { status, error } = loaded
  // Cookies, DOM and timings are read before axe runs: they describe the page before any interaction.
  // axe's source goes to the page meanwhile (preloadAxe: it defines itself and touches nothing else).
  const preloaded = opts.axe ? preloadAxe(page) : undefined
  const tRead = performance.now()
  const [{ html, title, inline }, inlineCode, cookies, timings] = await Promise.all([
    page
      .evaluate(readDocument, { html: GATHER_LIMITS.html, scripts: 50, elements: GATHER_LIMITS.inlineElements })
      .catch(() => ({ html: '', title: '', inline: [] as string[] })),
    readInlineCode(page),
    context.cookies().catch(() => []),
    page.evaluate(readTimings).catch(() => null),
  ])
  rec.recording = false
  const phases: Record<string, number> = { pageRead: since(tRead) }
  const tAxe = performance.now()
  const accessibility = opts.axe ? await runAxe(page, { preloaded, ...(opts.axeFinisher ? { finisher: opts.axeFinisher } : {}) }) : null
  if (opts.axe) phases.axe = since(tAxe)
  const finalUrl = page.url()
  const [externalOrNull, api] = await Promise.all([Promise.all(rec.scriptBodies), rec.api.traffic()])
  const external = externalOrNull.filter((s): s is ScriptArtifact => s !== null)
  const scripts = [
    ...external,
    ...inline
      .filter((b) => b.trim())
      .map((body, i) => ({ url: `${finalUrl}#inline-${i + 1}`, inline: true, body: body.slice(0, GATHER_LIMITS.scriptBody) })),
  ]
  return {
    page: {
      finalUrl,
      status,
      title,
      html,
      requests: [...rec.requests.values()],
      cookies: cookies.map(toCookie),
      consoleErrors: rec.consoleErrors,
      ...(inlineCode ? { inline: inlineCode } : {}),
      api,
    },
    scripts,
    accessibility,
    performance: timings,
    error,
    phases,
  }
}

/** How a scan's context is opened: through its egress proxy, as a desktop browser, service workers off. */
export function scanContextOptions(proxy: EgressProxy): BrowserContextOptions {
  return {
    proxy: proxySettingsFor(proxy),
    userAgent: BROWSER_USER_AGENT,
    serviceWorkers: 'block',
    ignoreHTTPSErrors: false,
    viewport: { width: 1280, height: 800 },
  }
}

/**
 * Loads the page in a fresh context: the one a warm slot already opened through this proxy (its page
 * unused), or a new one. A context opened here is closed when the page has been read; a slot's is closed by
 * its owner.
 */
export async function loadPage(
  url: string,
  proxy: EgressProxy,
  opts: {
    browser: BrowserPool
    navTimeoutMs: number
    opened?: { context: BrowserContext; page: Page; finisher?: Promise<Page | null> }
    /** false: the page is read without axe. Default true. */
    axe?: boolean
    /** Called once the page has loaded, as its wait for network quiet begins. */
    onLoaded?: () => void
  },
): Promise<Loaded> {
  const context = opts.opened?.context ?? (await opts.browser.newContext(scanContextOptions(proxy)))
  try {
    const page = opts.opened?.page ?? (await context.newPage())
    const rec = recordPage(page)
    const traffic = rec.traffic
    let status = 0
    let error: string | null = null
    const phases: Record<string, number> = {}
    try {
      const tLoad = performance.now()
      const res = await page.goto(url, { waitUntil: 'load', timeout: opts.navTimeoutMs })
      status = res?.status() ?? 0
      const failure = res ? egressFailure(res) : null
      if (failure) error = `${failure.code}: ${failure.reason}`
      phases.pageLoad = since(tLoad)
      opts.onLoaded?.()
      const tQuiet = performance.now()
      // Late requests (XHR after load) matter for mixed content and third parties: wait until nothing is
      // in flight for a short quiet window (Chromium's networkidle waits a fixed 500 ms), at most 1 s.
      await quiet(traffic, GATHER_LIMITS.quietMs, GATHER_LIMITS.quietMaxMs)
      phases.networkQuiet = since(tQuiet)
    } catch (e) {
      error = errorMessage(e).split('\n')[0] ?? 'navigation failed'
    }
    if (status === 0) {
      rec.detach()
      return { page: null, scripts: [], accessibility: null, performance: null, error: error ?? 'no response', phases }
    }
    const axeFinisher = opts.opened?.finisher
    const read = await readLoadedPage(
      page,
      context,
      rec,
      { status, error },
      { axe: opts.axe ?? true, ...(axeFinisher ? { axeFinisher } : {}) },
    ).finally(() => rec.detach())
    return { ...read, phases: { ...phases, ...read.phases } }
  } finally {
    if (!opts.opened) await context.close().catch(() => {})
  }
}
