// Collects every artifact of one scan, once: plain-HTTP chains and probes, and the page in Chromium.
// Every connection goes through the scan's egress proxy, which refuses blocked addresses.
// Checks judge the artifacts afterwards; nothing here decides pass or fail.
import type { BrowserContext, ConsoleMessage, Frame, Page, Request as PwRequest, Response as PwResponse } from 'playwright-core'
import AxeBuilder from '@axe-core/playwright'
import type {
  AccessibilityArtifact, Artifacts, BrowserCookie, BrowserRequest, CorsProbeArtifact, HttpResponseArtifact, PageArtifact,
  PerformanceArtifact, ProbeResult, RedirectChain, ScriptArtifact,
} from '../shared/checks/types.ts'
import { PROBE_PATHS } from '../shared/checks/probes.ts'
import { AppError } from '../shared/errors.ts'
import type { EgressPolicy } from '../shared/egress/guard.ts'
import { egressFailure, proxySettingsFor, readCapped, startEgressProxy, type EgressProxy } from '../shared/egress/proxy.ts'
import type { BrowserPool } from './browser.ts'
import { probeTls } from './tls-probe.ts'

export const GATHER_LIMITS = {
  mainBody: 512 * 1024,
  probeBody: 64 * 1024,
  html: 512 * 1024,
  scriptBody: 2 * 1024 * 1024,
  scriptsTotal: 8 * 1024 * 1024,
  scripts: 60,
  requests: 500,
  redirects: 10,
  sourceMaps: 5,
  /** After load: how long the network must stay idle, and the longest wait for it. */
  quietMs: 150,
  quietMaxMs: 1_000,
  /** Probes in flight at once against one origin: enough to be quick, few enough not to look like an attack. */
  probeConcurrency: 6,
}

/** Resolves once no request has been in flight for `quietMs`, or after `maxMs`. */
export async function quiet(traffic: { inflight: number; last: number }, quietMs: number, maxMs: number): Promise<void> {
  const deadline = performance.now() + maxMs
  for (let now = performance.now(); now < deadline; now = performance.now()) {
    if (traffic.inflight === 0 && now - traffic.last >= quietMs) return
    // Idle: sleep until the window would close (traffic may move it on); busy: look again shortly.
    const wait = traffic.inflight === 0 ? traffic.last + quietMs - now : 10
    await Bun.sleep(Math.max(2, Math.min(wait, deadline - now)))
  }
}

/** Like Promise.all over items.map(fn), with at most `limit` calls running at once; order kept. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return out
}

/** Same-origin source map URLs the loaded scripts point at (comment or SourceMap header). */
export function sourceMapUrls(scripts: ScriptArtifact[], requests: BrowserRequest[], origin: string): string[] {
  const found = new Set<string>()
  for (const s of scripts) {
    if (s.inline) continue
    const m = /\/\/[#@] sourceMappingURL=([^\s'"]+)\s*$/.exec(s.body.slice(-2_000))
    if (m && !m[1]!.startsWith('data:')) {
      try {
        found.add(new URL(m[1]!, s.url).href)
      } catch {}
    }
  }
  for (const r of requests) {
    const h = r.headers.sourcemap ?? r.headers['x-sourcemap']
    if (h && r.resourceType === 'script') {
      try {
        found.add(new URL(h, r.url).href)
      } catch {}
    }
  }
  return [...found].filter((u) => new URL(u).origin === origin).slice(0, GATHER_LIMITS.sourceMaps)
}

export const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36 AppAudit/0.1'

export interface GatherOptions {
  policy: EgressPolicy
  browser: BrowserPool
  navTimeoutMs: number
  probeTimeoutMs: number
  /** Certificates trusted besides public CAs, by SPKI hash (as the browser is told). */
  trustedSpki?: string[]
  progress?: (progress: number, message: string) => void
}

/** The unrelated origin the CORS probe claims to come from. */
export const CORS_PROBE_ORIGIN = 'https://appaudit-cors-probe.example'

export interface Gathered {
  artifacts: Artifacts
  timings: Record<string, number>
}

type Fetched = { ok: true; res: HttpResponseArtifact } | { ok: false; code: 'target_blocked' | 'target_unreachable'; reason: string }

/** One GET through the egress proxy, no redirect following. */
async function fetchOnce(url: string, proxy: EgressProxy, timeoutMs: number, bodyLimit: number, extraHeaders: Record<string, string> = {}): Promise<Fetched> {
  let res: Response
  try {
    res = await fetch(url, {
      proxy: proxy.url,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...extraHeaders },
      // Certificate validity is judged from the browser's view; probes still read what an attacker could.
      tls: { rejectUnauthorized: false },
      decompress: true,
    } as RequestInit)
  } catch (e) {
    const f = egressFailure(e)
    if (f) return { ok: false, ...f }
    return { ok: false, code: 'target_unreachable', reason: (e as Error).name === 'TimeoutError' ? 'timed out' : (e as Error).message }
  }
  const f = egressFailure(res)
  if (f) {
    await res.body?.cancel().catch(() => {})
    return { ok: false, ...f }
  }
  const headers: Record<string, string> = {}
  res.headers.forEach((v, k) => {
    if (k !== 'set-cookie') headers[k] = v
  })
  const body = await readCapped(res, bodyLimit).catch(() => ({ text: '', truncated: true }))
  return {
    ok: true,
    res: {
      url,
      status: res.status,
      headers,
      setCookies: res.headers.getSetCookie(),
      contentType: headers['content-type'] ?? '',
      body: body.text,
      bodyTruncated: body.truncated,
    },
  }
}

/** Follows redirects hop by hop; each hop is checked by the proxy again. */
async function followChain(startUrl: string, proxy: EgressProxy, timeoutMs: number): Promise<{ chain: RedirectChain; last: Fetched }> {
  const hops: RedirectChain['hops'] = []
  let url = startUrl
  for (let i = 0; i <= GATHER_LIMITS.redirects; i++) {
    const got = await fetchOnce(url, proxy, timeoutMs, GATHER_LIMITS.mainBody)
    if (!got.ok) return { chain: { startUrl, hops, finalUrl: null, error: `${got.code}: ${got.reason}` }, last: got }
    const location = got.res.headers.location ?? null
    hops.push({ url, status: got.res.status, location })
    if (got.res.status < 300 || got.res.status >= 400 || !location) {
      return { chain: { startUrl, hops, finalUrl: url, error: null }, last: got }
    }
    try {
      url = new URL(location, url).href
    } catch {
      return { chain: { startUrl, hops, finalUrl: null, error: `invalid Location ${JSON.stringify(location)}` }, last: got }
    }
  }
  return {
    chain: { startUrl, hops, finalUrl: null, error: `more than ${GATHER_LIMITS.redirects} redirects` },
    last: { ok: false, code: 'target_unreachable', reason: 'too many redirects' },
  }
}

async function probe(origin: string, path: string, proxy: EgressProxy, timeoutMs: number): Promise<ProbeResult> {
  const url = origin + path
  const got = await fetchOnce(url, proxy, timeoutMs, GATHER_LIMITS.probeBody)
  if (!got.ok) return { path, url, status: 0, contentType: '', body: '', error: `${got.code}: ${got.reason}` }
  return { path, url, status: got.res.status, contentType: got.res.contentType, body: got.res.body, error: null }
}

async function corsProbe(url: string, proxy: EgressProxy, timeoutMs: number): Promise<CorsProbeArtifact> {
  const got = await fetchOnce(url, proxy, timeoutMs, 1024, { origin: CORS_PROBE_ORIGIN })
  if (!got.ok) return { url, origin: CORS_PROBE_ORIGIN, status: 0, headers: {}, error: `${got.code}: ${got.reason}` }
  return { url, origin: CORS_PROBE_ORIGIN, status: got.res.status, headers: got.res.headers, error: null }
}

function toCookie(c: Awaited<ReturnType<BrowserContext['cookies']>>[number]): BrowserCookie {
  return {
    name: c.name, value: c.value, domain: c.domain, path: c.path, secure: c.secure, httpOnly: c.httpOnly,
    sameSite: c.sameSite ?? null, expires: c.expires,
  }
}

export type Loaded = {
  page: PageArtifact | null
  scripts: ScriptArtifact[]
  accessibility: AccessibilityArtifact | null
  performance: PerformanceArtifact | null
  error: string | null
}

/** What one page did while it loaded, as its listeners saw it. Shared with the site crawler. */
export interface PageRecorder {
  requests: Map<PwRequest, BrowserRequest>
  scriptBodies: Promise<ScriptArtifact | null>[]
  consoleErrors: string[]
  /** Requests in flight and when traffic last changed, for the quiet window. */
  traffic: { inflight: number; last: number }
  /** Only what the page itself did: recording stops before axe runs (it fetches stylesheets itself). */
  recording: boolean
  /** Removes the listeners: a crawl lane navigates one tab from page to page and records each visit anew. */
  detach(): void
}

/**
 * Attaches the listeners that record requests, script bodies, console errors and traffic. Call before
 * goto. Only the main frame's navigation requests are recorded until the new document commits: on a tab
 * that is reused, whatever the previous document still sends until then belongs to it, not to this page.
 */
export function recordPage(page: Page): PageRecorder {
  const requests = new Map<PwRequest, BrowserRequest>()
  const scriptBodies: Promise<ScriptArtifact | null>[] = []
  const consoleErrors: string[] = []
  const traffic = { inflight: 0, last: performance.now() }
  /** Requests of this page still in flight (finished or failed ones leave): the quiet window reads its size. */
  const counted = new Set<PwRequest>()
  // waiting: no navigation yet; navigating: the main frame's navigation request is out but the old
  // document is still there (and may still send requests); started: the new document has committed.
  let phase: 'waiting' | 'navigating' | 'started' = 'waiting'
  let scriptBytes = 0
  const onConsole = (m: ConsoleMessage) => {
    if (phase === 'started' && m.type() === 'error' && consoleErrors.length < 50) consoleErrors.push(m.text().slice(0, 500))
  }
  const onRequest = (r: PwRequest) => {
    if (phase !== 'started') {
      if (!(r.isNavigationRequest() && r.frame() === page.mainFrame())) return
      phase = 'navigating'
    }
    counted.add(r)
    traffic.inflight = counted.size
    traffic.last = performance.now()
    if (!rec.recording || requests.size >= GATHER_LIMITS.requests) return
    requests.set(r, {
      url: r.url(), method: r.method(), resourceType: r.resourceType(), status: 0, failure: null, headers: {},
      initiatorUrl: r.frame()?.url() ?? null,
    })
  }
  const settle = (r: PwRequest) => {
    if (!counted.delete(r)) return
    traffic.inflight = counted.size
    traffic.last = performance.now()
  }
  const onFailed = (r: PwRequest) => {
    settle(r)
    const req = requests.get(r)
    if (req) req.failure = r.failure()?.errorText ?? 'failed'
  }
  const onResponse = (res: PwResponse) => {
    if (!counted.has(res.request())) return
    const req = requests.get(res.request())
    if (req) {
      req.status = res.status()
      req.headers = res.headers()
    }
    if (rec.recording && res.request().resourceType() === 'script' && scriptBodies.length < GATHER_LIMITS.scripts && res.status() < 400) {
      scriptBodies.push(
        res.body().then(
          (buf) => {
            if (scriptBytes >= GATHER_LIMITS.scriptsTotal) return null
            const body = buf.subarray(0, GATHER_LIMITS.scriptBody).toString('utf8')
            scriptBytes += body.length
            return { url: res.url(), inline: false, body }
          },
          () => null,
        ),
      )
    }
  }
  const onNavigated = (frame: Frame) => {
    if (phase === 'navigating' && frame === page.mainFrame()) phase = 'started'
  }
  page.on('framenavigated', onNavigated)
  page.on('console', onConsole)
  page.on('request', onRequest)
  page.on('requestfinished', settle)
  page.on('requestfailed', onFailed)
  page.on('response', onResponse)
  const rec: PageRecorder = {
    requests, scriptBodies, consoleErrors, traffic, recording: true,
    detach() {
      page.off('framenavigated', onNavigated)
      page.off('console', onConsole)
      page.off('request', onRequest)
      page.off('requestfinished', settle)
      page.off('requestfailed', onFailed)
      page.off('response', onResponse)
    },
  }
  return rec
}

/**
 * Reads a loaded page: DOM, title, inline scripts, cookies and timings (before any interaction), then
 * axe when asked. Shared with the site crawler, which runs axe on a sample of pages only.
 */
export async function readLoadedPage(
  page: Page,
  context: BrowserContext,
  rec: PageRecorder,
  loaded: { status: number; error: string | null },
  opts: { axe: boolean },
): Promise<Loaded> {
  const { status, error } = loaded
  // Cookies, DOM and timings are read before axe runs: they describe the page before any interaction.
  const [html, title, inline, cookies, timings] = await Promise.all([
    page.content().catch(() => ''),
    page.title().catch(() => ''),
    page.$$eval('script:not([src])', (els) => els.slice(0, 50).map((e) => e.textContent ?? '')).catch(() => [] as string[]),
    context.cookies().catch(() => []),
    page.evaluate(readTimings).catch(() => null),
  ])
  rec.recording = false
  const accessibility = opts.axe ? await runAxe(page) : null
  const finalUrl = page.url()
  const external = (await Promise.all(rec.scriptBodies)).filter((s): s is ScriptArtifact => s !== null)
  const scripts = [
    ...external,
    ...inline.filter((b) => b.trim()).map((body, i) => ({ url: `${finalUrl}#inline-${i + 1}`, inline: true, body: body.slice(0, GATHER_LIMITS.scriptBody) })),
  ]
  return {
    page: {
      finalUrl, status, title, html: html.slice(0, GATHER_LIMITS.html), requests: [...rec.requests.values()],
      cookies: cookies.map(toCookie), consoleErrors: rec.consoleErrors,
    },
    scripts,
    accessibility,
    performance: timings,
    error,
  }
}

async function loadPage(url: string, proxy: EgressProxy, opts: GatherOptions): Promise<Loaded> {
  const context = await opts.browser.newContext({
    proxy: proxySettingsFor(proxy),
    userAgent: USER_AGENT,
    serviceWorkers: 'block',
    ignoreHTTPSErrors: false,
    viewport: { width: 1280, height: 800 },
  })
  try {
    const page = await context.newPage()
    const rec = recordPage(page)
    const traffic = rec.traffic
    let status = 0
    let error: string | null = null
    try {
      const res = await page.goto(url, { waitUntil: 'load', timeout: opts.navTimeoutMs })
      status = res?.status() ?? 0
      const failure = res ? egressFailure(res) : null
      if (failure) error = `${failure.code}: ${failure.reason}`
      // Late requests (XHR after load) matter for mixed content and third parties: wait until nothing is
      // in flight for a short quiet window (Chromium's networkidle waits a fixed 500 ms), at most 1 s.
      await quiet(traffic, GATHER_LIMITS.quietMs, GATHER_LIMITS.quietMaxMs)
    } catch (e) {
      error = (e as Error).message.split('\n')[0] ?? 'navigation failed'
    }
    if (status === 0) return { page: null, scripts: [], accessibility: null, performance: null, error: error ?? 'no response' }
    return await readLoadedPage(page, context, rec, { status, error }, { axe: true })
  } finally {
    await context.close().catch(() => {})
  }
}

/** Runs in the page: navigation and resource timings (bounded). */
export function readTimings(): PerformanceArtifact {
  const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined
  const round = (n: number) => Math.round(n)
  return {
    navigation: nav
      ? {
          ttfb: round(nav.responseStart), domContentLoaded: round(nav.domContentLoadedEventEnd), load: round(nav.loadEventEnd),
          transferSize: nav.transferSize, encodedBodySize: nav.encodedBodySize, decodedBodySize: nav.decodedBodySize,
        }
      : null,
    resources: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).slice(0, 300).map((r) => ({
      url: r.name, initiatorType: r.initiatorType, transferSize: r.transferSize, encodedBodySize: r.encodedBodySize,
      decodedBodySize: r.decodedBodySize, duration: round(r.duration),
    })),
  }
}

const AXE_IMPACTS = new Set(['minor', 'moderate', 'serious', 'critical'])

async function runAxe(page: import('playwright-core').Page): Promise<AccessibilityArtifact | null> {
  try {
    const r = await new AxeBuilder({ page: page as never }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze()
    return {
      engine: `${r.testEngine.name} ${r.testEngine.version}`,
      violations: r.violations.slice(0, 50).map((v) => ({
        id: v.id,
        impact: AXE_IMPACTS.has(v.impact ?? '') ? (v.impact as 'minor') : null,
        help: v.help,
        helpUrl: v.helpUrl,
        nodes: v.nodes.length,
        targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
      })),
      passes: r.passes.length,
      incomplete: r.incomplete.length,
    }
  } catch {
    return null
  }
}

/** The http:// form of an https target, to see whether plain HTTP redirects to HTTPS. */
function httpFormOf(url: URL): string | null {
  if (url.protocol === 'http:') return url.href
  if (url.port) return null // no conventional plain-HTTP twin for a custom port
  return `http://${url.host}${url.pathname}${url.search}`
}

export async function gather(rawUrl: string, opts: GatherOptions): Promise<Gathered> {
  const timings: Record<string, number> = {}
  const t0 = performance.now()
  const mark = (name: string, since: number) => (timings[name] = Math.round(performance.now() - since))
  const target = new URL(rawUrl)
  const proxy = await startEgressProxy(opts.policy)
  try {
    opts.progress?.(10, 'fetching over HTTP and loading in the browser')
    const tChain = performance.now()
    const mainP = followChain(target.href, proxy, opts.probeTimeoutMs).finally(() => mark('httpChain', tChain))
    const tPage = performance.now()
    const pageP = loadPage(target.href, proxy, opts).finally(() => mark('browser', tPage))
    const httpForm = httpFormOf(target)
    const httpP = httpForm && httpForm !== target.href ? followChain(httpForm, proxy, opts.probeTimeoutMs) : null

    const main = await mainP
    if (!main.last.ok) {
      // The page may still load in the browser, but without the plain-HTTP view there is no report.
      await pageP.catch(() => {})
      throw new AppError(main.last.code, `${target.href}: ${main.last.reason}`)
    }
    const finalUrl = main.chain.finalUrl ?? target.href
    const finalOrigin = new URL(finalUrl).origin
    opts.progress?.(40, 'probing for exposed files')
    const tProbe = performance.now()
    const finalAsUrl = new URL(finalUrl)
    const [probeList, cors, tls] = await Promise.all([
      mapLimit(PROBE_PATHS, GATHER_LIMITS.probeConcurrency, async (p) => [p, await probe(finalOrigin, p, proxy, opts.probeTimeoutMs)] as const),
      corsProbe(finalUrl, proxy, opts.probeTimeoutMs),
      finalAsUrl.protocol === 'https:'
        ? probeTls(finalAsUrl, proxy.port, { timeoutMs: opts.probeTimeoutMs, trustedSpki: opts.trustedSpki ?? [], now: Date.now() })
        : null,
    ])
    const probes = Object.fromEntries(probeList)
    mark('probes', tProbe)
    const [loaded, httpChain] = await Promise.all([pageP, httpP])
    const mapUrls = sourceMapUrls(loaded.scripts, loaded.page?.requests ?? [], finalOrigin)
    const sourceMaps = await Promise.all(mapUrls.map((u) => probe(finalOrigin, new URL(u).pathname + new URL(u).search, proxy, opts.probeTimeoutMs)))
    opts.progress?.(80, 'page loaded; judging')
    const artifacts: Artifacts = {
      target: { url: target.href, finalUrl, origin: finalOrigin, scheme: finalUrl.startsWith('https:') ? 'https' : 'http' },
      mainResponse: main.last.res,
      redirectChain: main.chain,
      httpRedirect: httpChain ? httpChain.chain : target.protocol === 'http:' ? main.chain : null,
      page: loaded.page,
      scripts: loaded.scripts,
      probes,
      sourceMaps,
      cors,
      tls,
      accessibility: loaded.accessibility,
      performance: loaded.performance,
    }
    timings.gather = Math.round(performance.now() - t0)
    return { artifacts, timings }
  } finally {
    await proxy.stop().catch(() => {})
  }
}
