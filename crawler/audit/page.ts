// One page of a site crawl: load it in a lane's browser context, record it with the gatherers' page recorder,
// read its links from the rendered DOM and judge it with the page-level checks.
//
// Which checks run per page, and which once per site, follows from the artifacts a check declares
// (`requires` and `optional`):
//   - site-level: any check reading `probes`, `sourceMaps`, `cors`, `apiProbes`, `tls` or `httpRedirect`. Those
//     artifacts describe the origin, not a page (exposed files, TLS, the http->https redirect, the CORS
//     probe), so gather() collects them once for the start URL and their results are the crawl's
//     siteChecks; every page's fetch/XHR calls also go to the site's API map (site-api.ts), probed after the crawl.
//   - page-level: every other check. They read `target`, `mainResponse`, `page`, `scripts`,
//     `performance` and `accessibility`, all of which the crawl builds per page from the browser's own
//     view: `mainResponse` is the document response Chromium received (headers, Set-Cookie, body),
//     not a second plain-HTTP request, so a page costs one fetch.
//   - media-dependent: images, fonts and media are not loaded while crawling (speed), so the checks that
//     weigh or count a page's resources (perf-page-weight, perf-request-count) would judge a page lighter
//     than it is: they are left out of per-page results (the site-level scan of the start URL loads
//     everything).
//   - cookies: the lanes share one context and so one cookie jar, kept from page to page, so the jar after a
//     page holds every cookie earlier pages set. A page is judged only on the cookies it set itself:
//     Set-Cookie on its own responses (document, redirects, subresources) and jar entries that are new or
//     changed since the jar was last read after a page (set by scripts; with lanes side by side, a script's
//     cookie goes to the first page read after it was set, which may be another lane's page open at the
//     same time). The page reports their names (`cookiesSet`), which the
//     audit result uses to attribute each cookie finding to the pages that set the cookie.
//   - accessibility: axe takes longer than the rest of a page together, so it runs on the first
//     AXE_MAX_PAGES pages with a DOM template (tag/id/class skeleton) not seen before; pages sharing a
//     template with an audited page mostly share its violations. The check is left out where axe did not run.
//     Its last step (finishRun) runs in the page itself rather than in a blank page as AxeBuilder does.
import type { BrowserContext, Page, Response as PwResponse } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import { CHECKS } from '../../shared/checks/registry.ts'
import type { AnyCheck } from '../../shared/checks/registry.ts'
import type { ApiCall, ArtifactName, Artifacts, BrowserCookie, HttpResponseArtifact, RedirectChain } from '../../shared/checks/types.ts'
import { egressFailure, proxySettingsFor, type EgressProxy } from '../../shared/egress/proxy.ts'
import { runCheck } from '../../shared/checks/runner.ts'
import type { CheckResult } from '../../shared/report/scan-report.ts'
import type { BrowserPool } from '../browser.ts'
import { BROWSER_USER_AGENT } from '../../shared/egress/http.ts'
import { GATHER_LIMITS } from '../gather/limits.ts'
import { readLoadedPage } from '../gather/page-reader.ts'
import { quiet, recordPage, type PageRecorder } from '../gather/page-recorder.ts'
import { errorMessage } from '../../shared/errors.ts'

/** Artifacts that describe the origin rather than one page: collected once per site. */
const SITE_ARTIFACTS: ReadonlySet<ArtifactName> = new Set<ArtifactName>([
  'probes',
  'sourceMaps',
  'cors',
  'apiProbes',
  'tls',
  'httpRedirect',
])
/** Page checks that weigh or count resources the crawl deliberately does not load. */
const MEDIA_DEPENDENT_CHECKS = new Set(['perf-page-weight', 'perf-request-count'])

const reads = (c: AnyCheck): ArtifactName[] => [...c.requires, ...(c.optional ?? [])]
export const SITE_CHECKS: readonly AnyCheck[] = CHECKS.filter((c: AnyCheck) => reads(c).some((a) => SITE_ARTIFACTS.has(a)))
export const PAGE_CHECKS: readonly AnyCheck[] = CHECKS.filter((c: AnyCheck) => !reads(c).some((a) => SITE_ARTIFACTS.has(a)))

export const CRAWL_LIMITS = {
  /**
   * After load, how long the network must stay idle and the longest wait for it (a single scan waits
   * longer). Requests that onload handlers start are in flight within milliseconds and keep the window
   * open until they finish, so a short window still sees them; a longer one mostly idles a lane.
   */
  quietMs: 50,
  quietMaxMs: 500,
  /** Links read from one page. */
  linksPerPage: 2_000,
  /** Pages axe runs on per crawl, one per new DOM template. */
  axeMaxPages: 20,
  /** Longest wait for the raw headers of a page's responses (their Set-Cookie), and most cookie names kept per page. */
  setCookieWaitMs: 1_000,
  cookiesSetPerPage: 100,
  /**
   * Images, fonts and media are not loaded while crawling: they do not change links, headers, scripts or
   * the DOM. Blocked by URL in the network stack (CDP Network.setBlockedURLs), not by intercepting every
   * request, which cost a fifth of a crawl's CPU; a media file without one of these extensions loads.
   */
  blockedUrlPatterns: [
    'png',
    'jpg',
    'jpeg',
    'gif',
    'webp',
    'avif',
    'bmp',
    'ico',
    'svg',
    'woff',
    'woff2',
    'ttf',
    'otf',
    'eot',
    'mp4',
    'webm',
    'ogg',
    'ogv',
    'mp3',
    'wav',
    'm4a',
    'mov',
  ].flatMap((ext) => [`*.${ext}`, `*.${ext}?*`]) as readonly string[],
}

/** A browser context for one crawl lane: the crawl's proxy, service workers and downloads refused. */
export async function openLaneContext(
  pool: BrowserPool,
  proxy: EgressProxy,
  storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
): Promise<BrowserContext> {
  return pool.newContext({
    ...(storageState ? { storageState } : {}),
    proxy: proxySettingsFor(proxy),
    userAgent: BROWSER_USER_AGENT,
    serviceWorkers: 'block',
    ignoreHTTPSErrors: false,
    acceptDownloads: false,
    viewport: { width: 1280, height: 800 },
  })
}

export type PageVisit =
  | {
      kind: 'page'
      finalUrl: string
      httpStatus: number | null
      ok: boolean
      error?: string
      /** Raw hrefs and the base they resolve against. */
      links: string[]
      base: string
      checks: CheckResult[]
      loadMs: number
      /** Names of the cookies this page set (see the header); absent when the page was not read. */
      cookiesSet?: string[]
      /** The page's fetch/XHR calls, for the site's API map (site-api.ts); absent when the page was not read. */
      apiCalls?: ApiCall[]
    }
  /** The URL answered with something other than HTML (or started a download): not a page. */
  | { kind: 'not_html'; finalUrl: string; contentType: string }

export interface VisitOptions {
  navTimeoutMs: number
  blockMedia: boolean
  /** An authenticated crawl: the page's credentialed API calls are the signed-in user's own (api-data-exposure). */
  signedIn?: boolean
  /** Decides, from the page's DOM template key, whether axe runs on it. */
  wantsAxe(templateKey: string): boolean
  onPageStart(page: Page): void
}

/** Runs in the page: link targets (a, area, link rel=next/prev) and a key of the DOM's skeleton. */
function readLinksAndTemplate(max: number): { base: string; hrefs: string[]; template: string } {
  const hrefs: string[] = []
  for (const el of Array.from(document.querySelectorAll('a[href], area[href], link[rel~="next"][href], link[rel~="prev"][href]'))) {
    if (hrefs.length >= max) break
    if (el.hasAttribute('download')) continue
    const h = el.getAttribute('href')
    if (h) hrefs.push(h)
  }
  // Template: tag, id and sorted classes of elements up to four levels below body, order-free and deduped.
  const parts = new Set<string>()
  let visited = 0
  const walk = (el: Element, depth: number, path: string) => {
    if (visited++ > 1_500 || depth > 4) return
    const cls = Array.from(el.classList).sort().join('.')
    const here = `${path}/${el.tagName}${el.id ? `#${el.id}` : ''}${cls ? `.${cls}` : ''}`
    parts.add(here)
    for (const child of Array.from(el.children)) walk(child, depth + 1, here)
  }
  if (document.body) walk(document.body, 0, '')
  let h = 5381
  for (const s of Array.from(parts).sort().join('|')) h = ((h * 33) ^ s.charCodeAt(0)) >>> 0
  return { base: document.baseURI, hrefs, template: h.toString(36) }
}

function isHtml(contentType: string): boolean {
  const t = contentType.split(';')[0]!.trim().toLowerCase()
  return t === '' || t === 'text/html' || t === 'application/xhtml+xml'
}

/** The document response as gather's plain-HTTP artifact: headers joined, Set-Cookie kept apart. */
async function responseArtifact(url: string, res: PwResponse): Promise<HttpResponseArtifact> {
  const list = await res.headersArray().catch(() => [] as { name: string; value: string }[])
  const headers: Record<string, string> = {}
  const setCookies: string[] = []
  for (const { name, value } of list) {
    const k = name.toLowerCase()
    if (k === 'set-cookie') setCookies.push(...value.split('\n'))
    else headers[k] = headers[k] === undefined ? value : `${headers[k]}, ${value}`
  }
  const buf = await res.body().catch(() => null)
  return {
    url,
    status: res.status(),
    headers,
    setCookies,
    contentType: headers['content-type'] ?? '',
    body: buf ? buf.subarray(0, GATHER_LIMITS.mainBody).toString('utf8') : '',
    bodyTruncated: buf ? buf.length > GATHER_LIMITS.mainBody : false,
  }
}

/** Each crawl context's jar as the last page read left it: name, domain and path to value and expiry. */
const lastJar = new WeakMap<BrowserContext, Map<string, string>>()
const jarKey = (c: BrowserCookie) => `${c.name}\u0000${c.domain}\u0000${c.path}`

/**
 * The cookies this page set: named by Set-Cookie on its own responses, or new or changed in the context's
 * jar since the last page read. Returns their names and the jar cut down to those cookies, so that
 * cookies carried over from earlier pages are not judged again on this one.
 */
async function cookiesOfThisPage(
  context: BrowserContext,
  rec: PageRecorder,
  jar: BrowserCookie[],
): Promise<{ names: string[]; jar: BrowserCookie[] }> {
  const fromHeaders = await within(Promise.all(rec.setCookieNames), CRAWL_LIMITS.setCookieWaitMs, [] as string[][])
  const named = new Set(fromHeaders.flat())
  const before = lastJar.get(context) ?? new Map<string, string>()
  const now = new Map(jar.map((c) => [jarKey(c), `${c.value}\u0000${c.expires}`]))
  lastJar.set(context, now)
  const own = jar.filter((c) => named.has(c.name) || before.get(jarKey(c)) !== now.get(jarKey(c)))
  const names = [...new Set([...named, ...own.map((c) => c.name)])].sort().slice(0, CRAWL_LIMITS.cookiesSetPerPage)
  return { names, jar: own }
}

function chainOf(url: string, res: PwResponse): RedirectChain {
  const hops: RedirectChain['hops'] = []
  for (let r = res.request().redirectedFrom(); r; r = r.redirectedFrom())
    hops.unshift({ url: r.url(), status: 0, location: r.redirectedTo()?.url() ?? null })
  hops.push({ url: res.url(), status: res.status(), location: null })
  return { startUrl: url, hops, finalUrl: res.url(), error: null }
}

/**
 * Loads one URL in the lane's tab and judges it. The lane navigates one tab from page to page: Chromium
 * then keeps the same renderer for the site instead of starting a process per page, which costs a
 * fraction of the CPU. Never throws for the target's faults (they become `ok: false`); rejects when the
 * page crashes. The caller owns the deadline and replaces the tab after a crash, a deadline or an error.
 */
export async function visitPage(page: Page, url: string, origin: string, opts: VisitOptions): Promise<PageVisit> {
  let onCrash: (() => void) | undefined
  const crashed = new Promise<never>((_, reject) => page.once('crash', (onCrash = () => reject(new Error('page crashed')))))
  crashed.catch(() => {})
  const guard = <T>(p: Promise<T>) => Promise.race([p, crashed])
  const rec = recordPage(page, { setCookies: true })
  try {
    return await visit(page, url, origin, opts, rec, guard)
  } finally {
    rec.detach()
    if (onCrash) page.off('crash', onCrash)
  }
}

async function visit(
  page: Page,
  url: string,
  origin: string,
  opts: VisitOptions,
  rec: PageRecorder,
  guard: <T>(p: Promise<T>) => Promise<T>,
): Promise<PageVisit> {
  try {
    opts.onPageStart(page)
  } catch {}
  const t0 = performance.now()
  const nav = await navigate(page, url, opts.navTimeoutMs, guard)
  if (nav === 'download') return { kind: 'not_html', finalUrl: url, contentType: 'download' }
  const { res } = nav
  if (!res) return unjudged(url, url, nav.error ?? 'no response', t0)
  const failure = egressFailure(res)
  if (failure) return unjudged(res.url(), url, `${failure.code}: ${failure.reason}`, t0)
  const contentType = (await res.allHeaders().catch(() => ({}) as Record<string, string>))['content-type'] ?? ''
  if (!isHtml(contentType)) return { kind: 'not_html', finalUrl: res.url(), contentType }
  await guard(quiet(rec.traffic, CRAWL_LIMITS.quietMs, CRAWL_LIMITS.quietMaxMs))
  const loadMs = Math.round(performance.now() - t0)
  const finalUrl = page.url()
  const status = res.status()
  const found = await guard(page.evaluate(readLinksAndTemplate, CRAWL_LIMITS.linksPerPage)).catch((e: Error) => {
    if (e.message === 'page crashed') throw e
    return { base: finalUrl, hrefs: [] as string[], template: '' }
  })
  if (new URL(finalUrl).origin !== origin) {
    // Redirected off the site: not ours to judge or to follow.
    return { kind: 'page', finalUrl, httpStatus: status, ok: status < 400, links: [], base: finalUrl, checks: [], loadMs }
  }
  const axe = opts.wantsAxe(found.template)
  const judged = await judge(
    page,
    res,
    { url, finalUrl, origin, status, axe, blockMedia: opts.blockMedia, signedIn: opts.signedIn ?? false },
    rec,
    guard,
  )
  return {
    kind: 'page',
    finalUrl,
    httpStatus: status,
    ok: status < 400,
    ...(status >= 400 ? { error: `HTTP ${status}` } : {}),
    links: found.hrefs,
    base: found.base,
    checks: judged.checks,
    loadMs,
    cookiesSet: judged.cookiesSet,
    ...(judged.apiCalls ? { apiCalls: judged.apiCalls } : {}),
  }
}

/** goto under the crash guard: the response, or why there is none; 'download' when the URL started one. */
async function navigate(
  page: Page,
  url: string,
  navTimeoutMs: number,
  guard: <T>(p: Promise<T>) => Promise<T>,
): Promise<{ res: PwResponse | null; error?: string } | 'download'> {
  try {
    return { res: await guard(page.goto(url, { waitUntil: 'load', timeout: navTimeoutMs })) }
  } catch (e) {
    const msg = errorMessage(e).split('\n')[0] ?? 'navigation failed'
    if (msg === 'page crashed') throw e
    if (/Download is starting/i.test(msg)) return 'download'
    return { res: null, error: msg }
  }
}

/** A page that gave nothing to judge: no response, or one the egress proxy refused. */
function unjudged(finalUrl: string, base: string, error: string, t0: number): PageVisit {
  return {
    kind: 'page',
    finalUrl,
    httpStatus: null,
    ok: false,
    error,
    links: [],
    base,
    checks: [],
    loadMs: Math.round(performance.now() - t0),
  }
}

/**
 * Reads the loaded page (axe when chosen) and its document response, and runs the page-level checks on
 * them, judging only the cookies this page set itself.
 */
async function judge(
  page: Page,
  res: PwResponse,
  at: { url: string; finalUrl: string; origin: string; status: number; axe: boolean; blockMedia: boolean; signedIn: boolean },
  rec: PageRecorder,
  guard: <T>(p: Promise<T>) => Promise<T>,
): Promise<{ checks: CheckResult[]; cookiesSet: string[]; apiCalls?: ApiCall[] }> {
  const context = page.context()
  const { url, finalUrl, origin, status, axe } = at
  const [loaded, mainResponse] = await guard(
    Promise.all([
      // axe finishes in the page it ran in, which has it loaded: AxeBuilder's own finish opens a blank page,
      // a renderer of its own that compiles axe again.
      readLoadedPage(page, context, rec, { status, error: null }, { axe, axeFinisher: Promise.resolve(page) }),
      responseArtifact(finalUrl, res),
    ]),
  )
  const cookies = await cookiesOfThisPage(context, rec, loaded.page?.cookies ?? [])
  const artifacts: Artifacts = {
    target: { url, finalUrl, origin, scheme: finalUrl.startsWith('https:') ? 'https' : 'http' },
    mainResponse,
    redirectChain: chainOf(url, res),
    httpRedirect: null,
    page: loaded.page
      ? { ...loaded.page, cookies: cookies.jar, ...(loaded.page.api ? { api: { ...loaded.page.api, signedIn: at.signedIn } } : {}) }
      : null,
    scripts: loaded.scripts,
    probes: {},
    sourceMaps: [],
    cors: null,
    apiProbes: null,
    tls: null,
    accessibility: loaded.accessibility,
    performance: loaded.performance,
  }
  const checks = PAGE_CHECKS.filter((c) => (axe || c.id !== 'accessibility') && !(at.blockMedia && MEDIA_DEPENDENT_CHECKS.has(c.id))).map(
    (c) => runCheck(c, artifacts),
  )
  return { checks, cookiesSet: cookies.names, ...(loaded.page?.api ? { apiCalls: loaded.page.api.calls } : {}) }
}
