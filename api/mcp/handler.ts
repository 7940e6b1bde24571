// /api/mcp: the whole programmatic API. The steps, in order:
//   1. OPTIONS -> 204 with CORS (no auth).
//   2. a method other than GET/POST/DELETE -> 405.
//   3. the bearer credential -> 401 + WWW-Authenticate; then the request rate of the credential and its
//      account -> 429 + Retry-After.
//   4. a body over the limit -> 413; not JSON -> -32700; an empty batch -> -32600; an initialize or a
//      tools/call the SDK would answer badly -> -32602.
//   5. the session: initialize opens one (limited per credential, 429); a POST without Mcp-Session-Id is
//      served on its own; one with it, and GET and DELETE, need a live session of this account (missing
//      400, unknown/ended/another account's 404); one GET stream per session (409).
//      A GET with Last-Event-ID resumes a POST's SSE stream from the shared event log (events.ts).
//   6. a plain tools/list that passes the transport's checks: answered from JSON serialised once.
//   7. anything else: a fresh SDK transport per request (406, 415 and protocol-version checks are its own).
// Sessions live in the shared store rather than the transport, so any replica serves any session.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Principal } from '../../shared/db/accounts.ts'
import type { BearerAuth } from '../auth/bearer.ts'
import { CallToolRequestSchema, isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import { CORS_EXPOSE, corsPreflight, withCors } from '../http/cors.ts'
import type { RateLimiter } from '../http/rate-limit.ts'
import { type LimitDecision, RequestLimiter } from '../http/request-limit.ts'
import { readRequestText } from '../../shared/lib/http-body.ts'
import { jsonShapeProblem, MCP_JSON_SHAPE } from '../../shared/lib/json-shape.ts'
import type { Services } from '../services.ts'
import { claimResume, followStream, McpEventStore, resumableStream } from './events.ts'
import { createMcpServer, TOOL_LIST_JSON } from './server.ts'
import { McpSessionStore } from './sessions.ts'
import { errorMessage } from '../../shared/errors.ts'

export function rpcErrorResponse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: string | number | null = null,
): Response {
  return withCors(
    new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    }),
  )
}

const tooManyRequests = (rate: Extract<LimitDecision, { ok: false }>) =>
  rpcErrorResponse(
    429,
    -32000,
    `Too many requests from this ${rate.scope === 'credential' ? 'key or token' : 'account'}; retry in ${rate.retryAfterSeconds} s`,
    { 'retry-after': String(rate.retryAfterSeconds) },
  )

/** A store we depend on is down: say so, and when to come back. Nothing was changed. */
const unavailable = (what: string) =>
  rpcErrorResponse(503, -32603, `Service temporarily unavailable: ${what} cannot be reached. Nothing was changed; retry shortly.`, {
    'retry-after': '5',
  })

export function wwwAuthenticate(baseUrl: string, reason: 'missing' | 'invalid'): string {
  const description = reason === 'missing' ? 'No authorization provided' : 'The access token is invalid, expired or revoked'
  return `Bearer error="invalid_token", error_description="${description}", resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`
}

/**
 * An SSE stream that starts with a comment, so the client gets headers at once, not at the first event.
 * onEnd runs once, when the stream ends or the client goes away.
 */
function primed(body: ReadableStream<Uint8Array>, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(': stream open\n\n'))
    },
    async pull(c) {
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch (e) {
        onEnd()
        throw e
      }
      if (chunk.done) {
        onEnd()
        c.close()
      } else c.enqueue(chunk.value)
    },
    cancel(reason) {
      onEnd()
      return reader.cancel(reason)
    },
  })
}

/**
 * Tools whose calls last long enough that a lost connection is worth resuming: only their streams are kept
 * in the event log (a few progress events and one report), not every tool's answer.
 */
const RESUMABLE_TOOLS = new Set(['scan_app', 'check_data_exposure'])
const isResumable = (body: unknown) =>
  !Array.isArray(body) &&
  hasMethod(body, 'tools/call') &&
  RESUMABLE_TOOLS.has(String((body as { params?: { name?: unknown } }).params?.name))

type Message = { method?: unknown; id?: unknown; params?: { _meta?: { progressToken?: unknown }; protocolVersion?: unknown } }

const hasMethod = (m: unknown, method: string): m is Message => typeof m === 'object' && m !== null && (m as Message).method === method
/** The SDK's own test (params with protocolVersion, capabilities and clientInfo), so a session is opened exactly when the SDK initializes. */
const isInitialize = (m: unknown): m is Message => hasMethod(m, 'initialize') && isInitializeRequest(m)
const idOf = (m: Message): string | number | null => (typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null)

/**
 * A message the SDK would answer badly: an initialize it does not recognise (it would answer an error yet we
 * would open a session; as a notification in a batch it let the batch's tool call run without one), or a
 * tools/call whose params are not {name, arguments?} (the SDK answers -32603 with its schema library's dump).
 */
function malformed(messages: unknown[]): { message: Message; error: string } | null {
  for (const m of messages) {
    if (hasMethod(m, 'initialize') && !isInitialize(m)) {
      return { message: m, error: 'Invalid params: initialize needs params {protocolVersion, capabilities, clientInfo}' }
    }
    if (hasMethod(m, 'tools/call') && !CallToolRequestSchema.safeParse(m).success) {
      return { message: m, error: 'Invalid params: tools/call needs params {name: string, arguments?: object}' }
    }
  }
  return null
}

/** A single tools/list request, no progress token: its answer never changes. */
function isPlainToolsList(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false
  const r = m as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown }
  if (r.jsonrpc !== '2.0' || r.method !== 'tools/list') return false
  if (!(typeof r.id === 'string' || (typeof r.id === 'number' && Number.isInteger(r.id)))) return false
  if (r.params === undefined) return true
  if (typeof r.params !== 'object' || r.params === null) return false
  const keys = Object.keys(r.params)
  return keys.length === 0
}

const utf8 = new TextEncoder()
/** tools/list's answer up to its id, encoded once: an answer is these bytes and its id. */
const TOOL_LIST_HEAD = utf8.encode(`{"result":${TOOL_LIST_JSON},"jsonrpc":"2.0","id":`)
/**
 * One buffer for every answer: the head, then the id written in place. `new Response` copies a buffer body
 * as it is made (the Fetch standard's "extract a body" takes a copy of a BufferSource; a test holds Bun to
 * it), so the buffer is free again as soon as the Response exists. Building the 63 KB answer anew per
 * request, as a string or a Blob, cost the server more CPU (docs/decisions.md, MCP transport).
 */
const toolListBuffer = new Uint8Array(TOOL_LIST_HEAD.length + 256)
toolListBuffer.set(TOOL_LIST_HEAD)

/** The answer's bytes for this id, to hand to `new Response` at once; a Blob when the id is too long for the buffer. */
function toolListBody(id: string | number): Uint8Array<ArrayBuffer> | Blob {
  const tail = `${JSON.stringify(id)}}`
  const { read, written } = utf8.encodeInto(tail, toolListBuffer.subarray(TOOL_LIST_HEAD.length))
  if (read === tail.length) return toolListBuffer.subarray(0, TOOL_LIST_HEAD.length + written)
  return new Blob([TOOL_LIST_HEAD, utf8.encode(tail)])
}

const SUPPORTED = new Set(SUPPORTED_PROTOCOL_VERSIONS)
/** The checks the SDK transport makes before it answers (406, 415, protocol version); anything else goes to it. */
function passesTransportChecks(req: Request): boolean {
  const accept = req.headers.get('accept') ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return false
  const ct = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (ct !== 'application/json') return false
  const v = req.headers.get('mcp-protocol-version')
  return v === null || SUPPORTED.has(v)
}

export function createMcpHandler(services: Services, auth: BearerAuth, limiter: RateLimiter) {
  const { config } = services
  const requests = new RequestLimiter(services.infra.kv, config.MCP_RATE_LIMIT_SCALE, services.log)
  const sessions = new McpSessionStore(services.infra.kv, config.MCP_SESSION_TTL_S)

  return async function handle(req: Request): Promise<Response> {
    if (req.method === 'OPTIONS') return corsPreflight()
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      return rpcErrorResponse(405, -32000, `Method ${req.method} not allowed`, { allow: 'GET, POST, DELETE, OPTIONS' })
    }

    let authResult: Awaited<ReturnType<BearerAuth['authenticate']>>
    try {
      authResult = await auth.authenticate(req.headers.get('authorization'))
    } catch (e) {
      services.log.error('credential lookup failed', { error: errorMessage(e) })
      return unavailable('the credential store')
    }
    if (!authResult.ok) {
      return rpcErrorResponse(
        401,
        -32001,
        authResult.reason === 'missing' ? 'Unauthorized: no bearer credential' : 'Unauthorized: invalid bearer credential',
        {
          'www-authenticate': wwwAuthenticate(config.baseUrl, authResult.reason),
        },
      )
    }
    const principal = authResult.principal
    const rate = requests.take(principal.credentialId, principal.account.id)
    if (!rate.ok) return tooManyRequests(rate)

    let parsedBody: unknown
    if (req.method === 'POST') {
      const text = await readRequestText(req, config.MAX_BODY_BYTES)
      if (text === null) return rpcErrorResponse(413, -32600, `Request body larger than ${config.MAX_BODY_BYTES} bytes`)
      // Before it is parsed or validated: both cost time per key of a wide object (see json-shape.ts).
      const shape = jsonShapeProblem(text, MCP_JSON_SHAPE)
      if (shape) return rpcErrorResponse(400, -32600, `Invalid Request: ${shape}`)
      try {
        parsedBody = JSON.parse(text)
      } catch {
        return rpcErrorResponse(400, -32700, 'Parse error: the body is not valid JSON')
      }
    }

    if (Array.isArray(parsedBody) && parsedBody.length === 0) return rpcErrorResponse(400, -32600, 'Invalid Request: the batch is empty')
    const messages = Array.isArray(parsedBody) ? parsedBody : [parsedBody]
    // A batch costs one request per message (the first was spent before the body was read).
    if (messages.length > 1) {
      const more = requests.take(principal.credentialId, principal.account.id, messages.length - 1)
      if (!more.ok) return tooManyRequests(more)
    }
    const bad = req.method === 'POST' ? malformed(messages) : null
    if (bad) return rpcErrorResponse(400, -32602, bad.error, {}, idOf(bad.message))
    const initializing = req.method === 'POST' && messages.some(isInitialize)
    const sessionId = req.headers.get('mcp-session-id')
    // Mcp-Session-Id is needed "only to continue a session": a POST without one is served on its own,
    // whatever its method. GET (a session's stream) and DELETE (ending one) name a session by nature.
    // A GET with Last-Event-ID resumes a POST's stream, which may have had no session either.
    const lastEventId = req.method === 'GET' ? req.headers.get('last-event-id') : null
    const sessionless = !initializing && !sessionId && (req.method === 'POST' || lastEventId !== null)
    if (!initializing && !sessionless) {
      if (!sessionId) return rpcErrorResponse(400, -32000, 'Bad Request: Mcp-Session-Id header is required for GET and DELETE')
      const session = await sessions.get(sessionId).catch(() => undefined)
      if (session === undefined) return unavailable('the session store')
      if (!session || session.accountId !== principal.account.id) return rpcErrorResponse(404, -32001, 'Session not found')
      if (req.method === 'DELETE') {
        if (
          !(await sessions.end(sessionId).then(
            () => true,
            () => false,
          ))
        )
          return unavailable('the session store')
        return withCors(new Response(null, { status: 204 }))
      }
    }

    if (lastEventId !== null) return resume(req, lastEventId, principal, sessionId)

    // One GET stream per session (the MCP spec lets a server refuse a second with 409): each holds a
    // connection and a transport for as long as the client keeps it open.
    let endStream = () => {}
    if (req.method === 'GET' && (req.headers.get('accept') ?? '').includes('text/event-stream')) {
      const claimed = await sessions.claimStream(sessionId!).catch(() => undefined)
      if (claimed === undefined) return unavailable('the session store')
      if (!claimed) return rpcErrorResponse(409, -32000, 'Conflict: this session already has an open GET stream (one per session)')
      endStream = claimed
    }
    // Sessions live a day: opening them is limited per credential, which bounds the live ones too.
    if (initializing) {
      const limit = await limiter.hit('mcpSessions', principal.credentialId).catch(() => null)
      if (!limit) return unavailable('the session store')
      if (!limit.ok) {
        return rpcErrorResponse(
          429,
          -32000,
          `Too many sessions opened with this credential; retry in ${limit.retryAfterSeconds} s, or reuse an open session`,
          { 'retry-after': String(limit.retryAfterSeconds) },
        )
      }
    }

    if (!initializing && req.method === 'POST' && isPlainToolsList(parsedBody) && passesTransportChecks(req)) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'access-control-allow-origin': '*',
        'access-control-expose-headers': CORS_EXPOSE,
      }
      if (sessionId) headers['mcp-session-id'] = sessionId
      return new Response(toolListBody((parsedBody as { id: string | number }).id), { status: 200, headers })
    }

    const wantsProgress = messages.some(
      (m) => typeof m === 'object' && m !== null && (m as Message).params?._meta?.progressToken !== undefined,
    )
    const res = await serve(req, parsedBody, principal, wantsProgress).catch((e) => {
      endStream()
      throw e
    })

    // The SDK's Response is ours to change: set headers on it rather than copy it into a new one.
    const sseOpen = res.status === 200 && req.method === 'GET' && res.body
    const headers = sseOpen ? new Headers(res.headers) : res.headers
    if (initializing && res.status === 200) {
      const version = String((messages.find(isInitialize) as Message).params?.protocolVersion ?? '')
      const id = await sessions.create(principal.account.id, version).catch(() => null)
      if (!id) return unavailable('the session store')
      headers.set('mcp-session-id', id)
    } else if (sessionId && !initializing) {
      headers.set('mcp-session-id', sessionId)
    }
    headers.set('access-control-allow-origin', '*')
    headers.set('access-control-expose-headers', CORS_EXPOSE)
    if (!sseOpen) {
      endStream()
      return res
    }
    return new Response(primed(res.body!, endStream), { status: res.status, statusText: res.statusText, headers })
  }

  /** GET with Last-Event-ID: the rest of a stream of this account, from the shared event log (events.ts). */
  async function resume(req: Request, lastEventId: string, principal: Principal, sessionId: string | null): Promise<Response> {
    if (!(req.headers.get('accept') ?? '').includes('text/event-stream')) {
      return rpcErrorResponse(406, -32000, 'Not Acceptable: a resumed stream is text/event-stream')
    }
    const { kv, events } = services.infra
    const stream = await resumableStream(kv, events, lastEventId, principal.account.id).catch(() => undefined)
    if (stream === undefined) return unavailable('the event store')
    if (!stream) {
      return rpcErrorResponse(404, -32001, 'Nothing to resume: the Last-Event-ID names no stream of this account (or it expired)')
    }
    const release = await claimResume(kv, stream.streamId).catch(() => undefined)
    if (release === undefined) return unavailable('the event store')
    if (!release) return rpcErrorResponse(409, -32000, 'Conflict: this stream is already being resumed (one reader at a time)')
    const headers: Record<string, string> = {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': CORS_EXPOSE,
    }
    if (sessionId) headers['mcp-session-id'] = sessionId
    return new Response(followStream(events, stream.streamId, stream.entryId, release, req.signal), { headers })
  }

  async function serve(req: Request, parsedBody: unknown, principal: Principal, sse: boolean): Promise<Response> {
    const server = createMcpServer(services)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !sse,
      keepAliveMs: 15_000,
      // An SSE answer (progress, then the result) is kept in the shared event log, so a client that loses
      // the connection resumes it with Last-Event-ID on any replica.
      eventStore:
        sse && req.method === 'POST' && isResumable(parsedBody)
          ? new McpEventStore(services.infra.events, services.infra.kv, principal.account.id)
          : undefined,
    })
    await server.connect(transport)
    const res = await transport.handleRequest(req, {
      parsedBody,
      authInfo: { token: '', clientId: principal.credentialId, scopes: [], extra: { principal } },
    })
    // A JSON answer is complete here; an SSE stream (progress, or GET) ends with its own response.
    if (req.method === 'POST' && !sse) server.close().catch(() => {})
    return res
  }
}
