// The fast path of /api/mcp: a plain tools/list whose answer never changes, answered from JSON serialised
// once when the request passes the checks the SDK transport would make; anything else goes to the SDK.
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import { CORS_EXPOSE } from '../http/cors.ts'
import type { Envelope } from './envelope.ts'
import { TOOL_LIST_JSON } from './tools/listing.ts'

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

/** A POST of one plain tools/list that the SDK would answer with the list: answered here instead. */
export function isToolListFastPath(req: Request, envelope: Envelope): boolean {
  return !envelope.initializing && req.method === 'POST' && isPlainToolsList(envelope.body) && passesTransportChecks(req)
}

const utf8 = new TextEncoder()
/** tools/list's answer up to its id, encoded once: an answer is these bytes and its id. */
const TOOL_LIST_HEAD = utf8.encode(`{"result":${TOOL_LIST_JSON},"jsonrpc":"2.0","id":`)
/**
 * One buffer for every answer: the head, then the id written in place. `new Response` copies a buffer body
 * as it is made (the Fetch standard's "extract a body" takes a copy of a BufferSource; a test holds Bun to
 * it), so the buffer is free again as soon as the Response exists. Building the answer (63 KB then) anew per
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

/** The list of every tool, as the SDK would answer it, for a request that passed isToolListFastPath. */
export function toolListAnswer(envelope: Envelope, sessionId: string | null): Response {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS_EXPOSE,
  }
  if (sessionId) headers['mcp-session-id'] = sessionId
  return new Response(toolListBody((envelope.body as { id: string | number }).id), { status: 200, headers })
}
