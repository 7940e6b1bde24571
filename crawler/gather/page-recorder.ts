// What a page does while it loads, recorded from Playwright's events: requests, script bodies, console errors,
// and the traffic the quiet window waits on. Shared by the scan and the site crawler.
import type { ConsoleMessage, Frame, Page, Request as PwRequest, Response as PwResponse, WebSocket } from 'playwright-core'
import type { BrowserRequest, ScriptArtifact } from '../../shared/checks/types.ts'
import { ApiRecorder } from './api-traffic.ts'
import { GATHER_LIMITS } from './limits.ts'

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

/** What one page did while it loaded, as its listeners saw it. Shared with the site crawler. */
export interface PageRecorder {
  requests: Map<PwRequest, BrowserRequest>
  scriptBodies: Promise<ScriptArtifact | null>[]
  consoleErrors: string[]
  /** Requests in flight and when traffic last changed, for the quiet window. */
  traffic: { inflight: number; last: number }
  /** Only what the page itself did: recording stops before axe runs (it fetches stylesheets itself). */
  recording: boolean
  /**
   * Names of the cookies this page's own responses set (Set-Cookie on the document, its redirects and its
   * subresources), read while recording. Only when recordPage was asked for them (the site crawl): reading
   * raw headers costs a round trip per response.
   */
  setCookieNames: Promise<string[]>[]
  /** The page's own fetch/XHR calls with their answers, and its WebSockets. */
  api: ApiRecorder
  /** Removes the listeners: a crawl lane navigates one tab from page to page and records each visit anew. */
  detach(): void
}

/** Responses per page whose Set-Cookie headers are read. */
const SET_COOKIE_RESPONSES = 200

/** The cookie names in a Set-Cookie header value (one cookie per line, as Playwright joins them). */
export function setCookieNamesOf(value: string | null): string[] {
  if (!value) return []
  const names: string[] = []
  for (const line of value.split('\n')) {
    const pair = line.split(';', 1)[0] ?? ''
    const eq = pair.indexOf('=')
    const name = eq > 0 ? pair.slice(0, eq).trim() : ''
    if (name) names.push(name)
  }
  return names
}

/**
 * Attaches the listeners that record requests, script bodies, console errors and traffic. Call before
 * goto. Only the main frame's navigation requests are recorded until the new document commits: on a tab
 * that is reused, whatever the previous document still sends until then belongs to it, not to this page.
 */
export function recordPage(page: Page, opts: { setCookies?: boolean } = {}): PageRecorder {
  return new Recording(page, opts.setCookies ?? false)
}

class Recording implements PageRecorder {
  requests = new Map<PwRequest, BrowserRequest>()
  scriptBodies: Promise<ScriptArtifact | null>[] = []
  consoleErrors: string[] = []
  traffic = { inflight: 0, last: performance.now() }
  recording = true
  setCookieNames: Promise<string[]>[] = []
  api = new ApiRecorder()
  /** Requests of this page still in flight (finished or failed ones leave): the quiet window reads its size. */
  private readonly counted = new Set<PwRequest>()
  // waiting: no navigation yet; navigating: the main frame's navigation request is out but the old
  // document is still there (and may still send requests); started: the new document has committed.
  private phase: 'waiting' | 'navigating' | 'started' = 'waiting'
  private scriptBytes = 0

  constructor(
    private readonly page: Page,
    private readonly setCookies: boolean,
  ) {
    page.on('framenavigated', this.onNavigated)
    page.on('console', this.onConsole)
    page.on('request', this.onRequest)
    page.on('requestfinished', this.settle)
    page.on('requestfailed', this.onFailed)
    page.on('response', this.onResponse)
    page.on('websocket', this.onWebSocket)
  }

  detach(): void {
    this.page.off('framenavigated', this.onNavigated)
    this.page.off('console', this.onConsole)
    this.page.off('request', this.onRequest)
    this.page.off('requestfinished', this.settle)
    this.page.off('requestfailed', this.onFailed)
    this.page.off('response', this.onResponse)
    this.page.off('websocket', this.onWebSocket)
  }

  private readonly onWebSocket = (ws: WebSocket) => {
    if (this.phase === 'started' && this.recording) this.api.onWebSocket(ws)
  }

  private readonly onConsole = (m: ConsoleMessage) => {
    if (this.phase === 'started' && m.type() === 'error' && this.consoleErrors.length < 50) this.consoleErrors.push(m.text().slice(0, 500))
  }

  private readonly onRequest = (r: PwRequest) => {
    if (this.phase !== 'started') {
      if (!(r.isNavigationRequest() && r.frame() === this.page.mainFrame())) return
      this.phase = 'navigating'
    }
    this.counted.add(r)
    this.traffic.inflight = this.counted.size
    this.traffic.last = performance.now()
    if (!this.recording || this.requests.size >= GATHER_LIMITS.requests) return
    this.requests.set(r, {
      url: r.url(),
      method: r.method(),
      resourceType: r.resourceType(),
      status: 0,
      failure: null,
      headers: {},
      initiatorUrl: r.frame()?.url() ?? null,
    })
  }

  private readonly settle = (r: PwRequest) => {
    if (!this.counted.delete(r)) return
    this.traffic.inflight = this.counted.size
    this.traffic.last = performance.now()
  }

  private readonly onFailed = (r: PwRequest) => {
    this.settle(r)
    const req = this.requests.get(r)
    if (req) req.failure = r.failure()?.errorText ?? 'failed'
  }

  private readonly onResponse = (res: PwResponse) => {
    if (!this.counted.has(res.request())) return
    if (this.setCookies && this.recording && this.setCookieNames.length < SET_COOKIE_RESPONSES) {
      this.setCookieNames.push(res.headerValue('set-cookie').then(setCookieNamesOf, () => []))
    }
    if (this.recording) this.api.onResponse(res)
    const req = this.requests.get(res.request())
    if (req) {
      req.status = res.status()
      req.headers = res.headers()
    }
    if (
      this.recording &&
      res.request().resourceType() === 'script' &&
      this.scriptBodies.length < GATHER_LIMITS.scripts &&
      res.status() < 400
    ) {
      this.scriptBodies.push(
        res.body().then(
          (buf) => this.scriptBody(res.url(), buf),
          () => null,
        ),
      )
    }
  }

  /** A script's body, cut to its cap; null once the page's scripts reached theirs. */
  private scriptBody(url: string, buf: Buffer): ScriptArtifact | null {
    if (this.scriptBytes >= GATHER_LIMITS.scriptsTotal) return null
    const body = buf.subarray(0, GATHER_LIMITS.scriptBody).toString('utf8')
    this.scriptBytes += body.length
    return { url, inline: false, body }
  }

  private readonly onNavigated = (frame: Frame) => {
    if (this.phase === 'navigating' && frame === this.page.mainFrame()) this.phase = 'started'
  }
}
