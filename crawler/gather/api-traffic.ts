// The page's own API traffic, recorded while it loads: each fetch/XHR with the answer it got, and the
// WebSockets it opened. The map of the app's API comes from what the page does, not from guessing; the
// answers are judged as they are (no request of ours). Bounded: GATHER_LIMITS.apiCalls calls, apiBody bytes
// each, apiTotal in all; an answer still streaming when the page has been read is kept without its body.
import type { Request as PwRequest, Response as PwResponse, WebSocket } from 'playwright-core'
import { within } from '../../shared/lib/async.ts'
import type { ApiCall, ApiTraffic } from '../../shared/checks/types.ts'
import { GATHER_LIMITS } from './limits.ts'

const API_TYPES = new Set(['fetch', 'xhr'])
/** Answers whose body is read: text of some kind (JSON, HTML error pages, GraphQL), not images or media. */
const TEXTUAL = /json|text|html|xml|graphql|javascript|problem/i
const GRAPHQL_BODY = /"query"\s*:\s*"\s*(?:query\b|mutation\b|subscription\b|\{)|"operationName"\s*:/

/** Whether a request is a GraphQL operation: application/graphql, a JSON body with a query, or ?query={...}. */
export function isGraphqlRequest(contentType: string | null, postData: string | null, url: string): boolean {
  if (contentType && /application\/graphql/i.test(contentType)) return true
  if (postData && GRAPHQL_BODY.test(postData.slice(0, 4_096))) return true
  return /[?&]query=(?:%7B|\{|query|mutation)/i.test(url)
}

export class ApiRecorder {
  private readonly calls: ApiCall[] = []
  private readonly reads: Promise<void>[] = []
  private readonly websockets: string[] = []
  private unlisted = 0
  private bytes = 0
  private closed = false

  /** Called for every response the page's own document got while it is recorded. */
  onResponse(res: PwResponse): void {
    const req = res.request()
    if (!API_TYPES.has(req.resourceType())) return
    if (this.calls.length >= GATHER_LIMITS.apiCalls) {
      this.unlisted++
      return
    }
    const headers = res.headers()
    const requestContentType = req.headers()['content-type'] ?? null
    const call: ApiCall = {
      url: req.url(),
      method: req.method(),
      resourceType: req.resourceType(),
      requestContentType,
      credentialed: 'authorization' in req.headers(),
      authorization: 'authorization' in req.headers(),
      graphql: isGraphqlRequest(requestContentType, req.postData(), req.url()),
      status: res.status(),
      headers,
      body: '',
      bodyTruncated: false,
    }
    this.calls.push(call)
    this.reads.push(this.fill(call, req, res, TEXTUAL.test(headers['content-type'] ?? '')))
  }

  onWebSocket(ws: WebSocket): void {
    if (this.websockets.length < GATHER_LIMITS.websockets) this.websockets.push(ws.url())
  }

  /** Cookies are only in the raw request headers; the body only once the answer has ended. */
  private async fill(call: ApiCall, req: PwRequest, res: PwResponse, textual: boolean): Promise<void> {
    const all = await req.allHeaders().catch(() => ({}) as Record<string, string>)
    if (!this.closed && ('cookie' in all || 'authorization' in all)) call.credentialed = true
    if (!this.closed && 'authorization' in all) call.authorization = true
    if (!textual || res.status() === 204) return
    const buf = await res.body().catch(() => null)
    if (!buf || this.closed || this.bytes >= GATHER_LIMITS.apiTotal) return
    const cut = buf.subarray(0, Math.min(GATHER_LIMITS.apiBody, GATHER_LIMITS.apiTotal - this.bytes))
    this.bytes += cut.length
    call.body = cut.toString('utf8')
    call.bodyTruncated = cut.length < buf.length
  }

  /** The traffic recorded, after at most GATHER_LIMITS.apiReadMs more for answers still being read. */
  async traffic(): Promise<ApiTraffic> {
    await within(Promise.all(this.reads), GATHER_LIMITS.apiReadMs, [])
    this.closed = true
    return { calls: this.calls, unlisted: this.unlisted, websockets: this.websockets }
  }
}
