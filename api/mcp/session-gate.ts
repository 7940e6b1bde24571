// The session rules of /api/mcp. Sessions live in the shared store (sessions.ts), not in the SDK's transport,
// so any replica serves any session.
// - initialize opens one; opening is limited per credential (429), which bounds the live ones too.
// - A POST without Mcp-Session-Id is served on its own, whatever its method: the header is needed "only to
//   continue a session". A POST with it, and GET (a session's stream) and DELETE (ending one), need a live
//   session of this account: missing 400, unknown, ended or another account's 404. DELETE ends it (204).
// - One GET stream per session (the MCP spec lets a server refuse a second with 409): each holds a
//   connection and a transport for as long as the client keeps it open.
// - A GET with Last-Event-ID resumes a POST's stream, which may have had no session either (resume.ts).
// The store out of reach is 503: nothing was changed.
import type { Principal } from '../../shared/db/accounts.ts'
import type { RateLimiter } from '../http/rate-limit.ts'
import { withCors } from '../http/cors.ts'
import { type Envelope, isInitialize, type Message } from './envelope.ts'
import { rpcErrorResponse, unavailable } from './rpc-error.ts'
import type { McpSessionStore } from './sessions.ts'

/** A request the session rules let through. */
export interface Admitted {
  /** The session the request names (Mcp-Session-Id), checked unless it opens a new one or resumes without one. */
  sessionId: string | null
  /** A GET with Last-Event-ID: the stream to resume from that event. */
  resumeFrom: string | null
  /** Gives back the session's GET stream when the answer ends; does nothing for other requests. */
  endStream: () => void
}

const noStream = () => {}

export class SessionGate {
  constructor(
    private sessions: McpSessionStore,
    private limiter: RateLimiter,
  ) {}

  /** The request's place among sessions, or the answer that ends it here (an error, or DELETE's 204). */
  async admit(req: Request, envelope: Envelope, principal: Principal): Promise<Admitted | Response> {
    const { initializing } = envelope
    const sessionId = req.headers.get('mcp-session-id')
    const resumeFrom = req.method === 'GET' ? req.headers.get('last-event-id') : null
    const sessionless = !initializing && !sessionId && (req.method === 'POST' || resumeFrom !== null)
    if (!initializing && !sessionless) {
      const answered = await this.continueSession(req, sessionId, principal)
      if (answered) return answered
    }
    if (resumeFrom !== null) return { sessionId, resumeFrom, endStream: noStream }
    let endStream = noStream
    if (req.method === 'GET' && (req.headers.get('accept') ?? '').includes('text/event-stream')) {
      const claimed = await this.sessions.claimStream(sessionId!).catch(() => undefined)
      if (claimed === undefined) return unavailable('the session store')
      if (!claimed) return rpcErrorResponse(409, -32000, 'Conflict: this session already has an open GET stream (one per session)')
      endStream = claimed
    }
    if (initializing) {
      const refused = await this.limitOpening(principal)
      if (refused) return refused
    }
    return { sessionId, resumeFrom: null, endStream }
  }

  /** The named session must be live and this account's; DELETE ends it. Null lets the request on. */
  private async continueSession(req: Request, sessionId: string | null, principal: Principal): Promise<Response | null> {
    if (!sessionId) return rpcErrorResponse(400, -32000, 'Bad Request: Mcp-Session-Id header is required for GET and DELETE')
    const session = await this.sessions.get(sessionId).catch(() => undefined)
    if (session === undefined) return unavailable('the session store')
    if (!session || session.accountId !== principal.account.id) return rpcErrorResponse(404, -32001, 'Session not found')
    if (req.method !== 'DELETE') return null
    const ended = await this.sessions.end(sessionId).then(
      () => true,
      () => false,
    )
    return ended ? withCors(new Response(null, { status: 204 })) : unavailable('the session store')
  }

  /** Sessions live a day: opening them is limited per credential. */
  private async limitOpening(principal: Principal): Promise<Response | null> {
    const limit = await this.limiter.hit('mcpSessions', principal.credentialId).catch(() => null)
    if (!limit) return unavailable('the session store')
    if (limit.ok) return null
    return rpcErrorResponse(
      429,
      -32000,
      `Too many sessions opened with this credential; retry in ${limit.retryAfterSeconds} s, or reuse an open session`,
      { 'retry-after': String(limit.retryAfterSeconds) },
    )
  }

  /**
   * Names the session on the SDK's answer: a new one for an initialize it answered, else the one the request
   * continues. False when the new session could not be stored.
   */
  async label(headers: Headers, status: number, envelope: Envelope, admitted: Admitted, principal: Principal): Promise<boolean> {
    if (envelope.initializing && status === 200) {
      const version = String((envelope.messages.find(isInitialize) as Message).params?.protocolVersion ?? '')
      const id = await this.sessions.create(principal.account.id, version).catch(() => null)
      if (!id) return false
      headers.set('mcp-session-id', id)
    } else if (admitted.sessionId && !envelope.initializing) {
      headers.set('mcp-session-id', admitted.sessionId)
    }
    return true
  }
}
