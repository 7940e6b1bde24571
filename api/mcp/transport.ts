// Anything the steps before did not answer goes to the MCP SDK: a fresh stateless transport and server per
// request (the SDK keeps sessions in process memory; ours live in the shared store, session-gate.ts). The
// SDK makes its own checks (406, 415, protocol version). Its answer is JSON unless progress was asked for;
// an SSE answer of a long tool is kept in the shared event log so it can be resumed on any replica.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Principal } from '../../shared/db/accounts.ts'
import { CORS_EXPOSE } from '../http/cors.ts'
import type { Services } from '../services.ts'
import { type Envelope, hasMethod, type Message } from './envelope.ts'
import { McpEventStore } from './events.ts'
import { callsLoggingTool, passes, sessionLogLevel } from './logging.ts'
import { unavailable } from './rpc-error.ts'
import { createMcpServer, type SessionContext } from './server.ts'
import type { Admitted, SessionGate } from './session-gate.ts'

/**
 * The SDK's answer to the request, with the session named on it (a new one after initialize) and CORS.
 * A GET stream is primed so its headers leave at once, and gives its session's stream back when it ends.
 */
export async function sdkAnswer(
  services: Services,
  req: Request,
  envelope: Envelope,
  principal: Principal,
  admitted: Admitted,
  sessions: SessionGate,
): Promise<Response> {
  const { endStream } = admitted
  const wantsProgress = envelope.messages.some(
    (m) => typeof m === 'object' && m !== null && (m as Message).params?._meta?.progressToken !== undefined,
  )
  // A session that set a logging level gets its logging tools' messages: their answer is a stream then too.
  const { sessionId } = admitted
  const logLevel =
    sessionId && callsLoggingTool(envelope.messages)
      ? await sessionLogLevel(services.infra.kv, sessionId, services.config.MCP_SESSION_TTL_S)
      : null
  const session: SessionContext = { sessionId, logLevel }
  const sse = wantsProgress || passes('info', logLevel)
  const res = await serve(services, req, envelope.body, principal, sse, session).catch((e) => {
    endStream()
    throw e
  })

  // The SDK's Response is ours to change: set headers on it rather than copy it into a new one.
  const sseOpen = res.status === 200 && req.method === 'GET' && res.body
  const headers = sseOpen ? new Headers(res.headers) : res.headers
  if (!(await sessions.label(headers, res.status, envelope, admitted, principal))) return unavailable('the session store')
  headers.set('access-control-allow-origin', '*')
  headers.set('access-control-expose-headers', CORS_EXPOSE)
  if (!sseOpen) {
    endStream()
    return res
  }
  return new Response(primed(res.body!, endStream), { status: res.status, statusText: res.statusText, headers })
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

async function serve(
  services: Services,
  req: Request,
  parsedBody: unknown,
  principal: Principal,
  sse: boolean,
  session: SessionContext,
): Promise<Response> {
  const server = createMcpServer(services, session)
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
