// /api/mcp: the whole programmatic API, as an ordered list of steps. Each either answers (an error, or the
// answer) or hands the request on:
//   1. method        OPTIONS -> 204 with CORS (no auth); other than GET/POST/DELETE -> 405   admission.ts
//   2. authenticate  the bearer credential -> 401 + WWW-Authenticate                         admission.ts
//   3. rate limit    the request rate of the credential and its account -> 429 + Retry-After admission.ts
//   4. read body     over the limit -> 413; too wide or deep -> -32600; not JSON -> -32700  envelope.ts
//   5. envelope      an empty batch -> -32600; a batch spends one request a message; an
//                    initialize or a tools/call the SDK would answer badly -> -32602         envelope.ts
//   6. session       opened at initialize (429 past the limit), needed to continue one (400,
//                    404), ended by DELETE, one GET stream each (409)                        session-gate.ts
//      resume        a GET with Last-Event-ID: the rest of a stream from the shared log      resume.ts
//   7. tools/list    a plain one that passes the transport's checks: JSON serialised once    tool-list.ts
//   8. SDK transport anything else: a fresh SDK transport per request (406, 415 and
//                    protocol-version checks are its own)                                    transport.ts
// Sessions live in the shared store rather than the transport, so any replica serves any session.
import type { BearerAuth } from '../auth/bearer.ts'
import type { RateLimiter } from '../http/rate-limit.ts'
import { RequestLimiter } from '../http/request-limit.ts'
import type { Services } from '../services.ts'
import { answerMethod, authenticate, spendRequests } from './admission.ts'
import { checkEnvelope, readBody } from './envelope.ts'
import { resume } from './resume.ts'
import { SessionGate } from './session-gate.ts'
import { McpSessionStore } from './sessions.ts'
import { isToolListFastPath, toolListAnswer } from './tool-list.ts'
import { sdkAnswer } from './transport.ts'

export function createMcpHandler(services: Services, auth: BearerAuth, limiter: RateLimiter) {
  const { config, infra, log } = services
  const requests = new RequestLimiter(infra.kv, config.MCP_RATE_LIMIT_SCALE, log)
  const sessions = new SessionGate(new McpSessionStore(infra.kv, config.MCP_SESSION_TTL_S), limiter)

  return async function handle(req: Request): Promise<Response> {
    const method = answerMethod(req)
    if (method) return method
    const principal = await authenticate(auth, req, config.baseUrl, log)
    if (principal instanceof Response) return principal
    const limited = spendRequests(requests, principal)
    if (limited) return limited
    const read = await readBody(req, config.MAX_BODY_BYTES)
    if (read instanceof Response) return read
    const envelope = checkEnvelope(req, read.body, (count) => spendRequests(requests, principal, count))
    if (envelope instanceof Response) return envelope
    const admitted = await sessions.admit(req, envelope, principal)
    if (admitted instanceof Response) return admitted
    if (admitted.resumeFrom !== null) return resume(infra, req, admitted.resumeFrom, principal, admitted.sessionId)
    if (isToolListFastPath(req, envelope)) return toolListAnswer(envelope, admitted.sessionId)
    return sdkAnswer(services, req, envelope, principal, admitted, sessions)
  }
}
