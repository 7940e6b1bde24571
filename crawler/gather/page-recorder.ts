// What a page does while it loads, recorded from Playwright's events: requests, script bodies, console errors,
// and the traffic the quiet window waits on. Shared by the scan and the site crawler.
import type { ConsoleMessage, Frame, Page, Request as PwRequest, Response as PwResponse } from 'playwright-core'
import type { BrowserRequest, ScriptArtifact } from '../../shared/checks/types.ts'
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
      url: r.url(),
      method: r.method(),
      resourceType: r.resourceType(),
      status: 0,
      failure: null,
      headers: {},
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
    if (opts.setCookies && rec.recording && rec.setCookieNames.length < SET_COOKIE_RESPONSES) {
      rec.setCookieNames.push(res.headerValue('set-cookie').then(setCookieNamesOf, () => []))
    }
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
    requests,
    scriptBodies,
    consoleErrors,
    traffic,
    recording: true,
    setCookieNames: [],
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
