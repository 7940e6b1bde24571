// The JSON-RPC envelope of a POST, read and checked before any session or tool sees it: a body over the
// limit is 413; a text wider or deeper than MCP_JSON_SHAPE is -32600 (before it is parsed: parsing and
// validating cost time per key of a wide object, see json-shape.ts); not JSON is -32700; an empty batch is -32600; a batch costs one request per message (429
// past the rate); an initialize, or a tools/call, completion/complete, prompts/get, resources/read or
// logging/setLevel the SDK would answer badly, is -32602. GET and DELETE carry
// no body and pass.
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { readRequestText } from '../../shared/lib/http-body.ts'
import { jsonShapeProblem, MCP_JSON_SHAPE } from '../../shared/lib/json-shape.ts'
import { rpcErrorResponse } from './rpc-error.ts'

export type Message = { method?: unknown; id?: unknown; params?: { _meta?: { progressToken?: unknown }; protocolVersion?: unknown } }

export const hasMethod = (m: unknown, method: string): m is Message =>
  typeof m === 'object' && m !== null && (m as Message).method === method
/** The SDK's own test (params with protocolVersion, capabilities and clientInfo), so a session is opened exactly when the SDK initializes. */
export const isInitialize = (m: unknown): m is Message => hasMethod(m, 'initialize') && isInitializeRequest(m)
const idOf = (m: Message): string | number | null => (typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null)

/** What a request carries: its parsed body (undefined for GET and DELETE) and the messages in it. */
export interface Envelope {
  body: unknown
  /** The batch's messages, or the one message (for GET and DELETE, one undefined). */
  messages: unknown[]
  /** A POST that opens a session (an initialize the SDK recognises). */
  initializing: boolean
}

/** The POST body parsed as JSON (undefined for GET and DELETE), or the 413 or -32700 that refuses it. */
export async function readBody(req: Request, maxBytes: number): Promise<{ body: unknown } | Response> {
  if (req.method !== 'POST') return { body: undefined }
  const text = await readRequestText(req, maxBytes)
  if (text === null) return rpcErrorResponse(413, -32600, `Request body larger than ${maxBytes} bytes`)
  const shape = jsonShapeProblem(text, MCP_JSON_SHAPE)
  if (shape) return rpcErrorResponse(400, -32600, `Invalid Request: ${shape}`)
  try {
    return { body: JSON.parse(text) }
  } catch {
    return rpcErrorResponse(400, -32700, 'Parse error: the body is not valid JSON')
  }
}

/**
 * The envelope of a parsed body, or the answer that refuses it. `spend(n)` charges a batch's further
 * messages to the request rate (the first was spent before the body was read) and answers 429 past it.
 */
export function checkEnvelope(req: Request, body: unknown, spend: (count: number) => Response | null): Envelope | Response {
  if (Array.isArray(body) && body.length === 0) return rpcErrorResponse(400, -32600, 'Invalid Request: the batch is empty')
  const messages = Array.isArray(body) ? body : [body]
  if (messages.length > 1) {
    const limited = spend(messages.length - 1)
    if (limited) return limited
  }
  const post = req.method === 'POST'
  const bad = post ? malformed(messages) : null
  if (bad) return rpcErrorResponse(400, -32602, bad.error, {}, idOf(bad.message))
  return { body, messages, initializing: post && messages.some(isInitialize) }
}

/** Methods whose params the SDK checks with its schema and, when they do not match, answers -32603 with the dump. */
const PARAMS: Record<string, [{ safeParse(m: unknown): { success: boolean } }, string]> = {
  'tools/call': [CallToolRequestSchema, '{name: string, arguments?: object}'],
  'completion/complete': [
    CompleteRequestSchema,
    '{ref: {type: "ref/prompt", name} or {type: "ref/resource", uri}, argument: {name, value}}',
  ],
  'prompts/get': [GetPromptRequestSchema, '{name: string, arguments?: {[name]: string}}'],
  'resources/read': [ReadResourceRequestSchema, '{uri: string}'],
  'logging/setLevel': [SetLevelRequestSchema, '{level: debug, info, notice, warning, error, critical, alert or emergency}'],
}

/**
 * A message the SDK would answer badly: an initialize it does not recognise (it would answer an error yet we
 * would open a session; as a notification in a batch it let the batch's tool call run without one), or a
 * request of PARAMS whose params do not match (the SDK answers -32603 with its schema library's dump).
 */
function malformed(messages: unknown[]): { message: Message; error: string } | null {
  for (const m of messages) {
    if (hasMethod(m, 'initialize') && !isInitialize(m)) {
      return { message: m, error: 'Invalid params: initialize needs params {protocolVersion, capabilities, clientInfo}' }
    }
    const method = typeof m === 'object' && m !== null ? (m as Message).method : undefined
    const checked = typeof method === 'string' && Object.hasOwn(PARAMS, method) ? PARAMS[method]! : null
    if (checked && !checked[0].safeParse(m).success)
      return { message: m as Message, error: `Invalid params: ${method} needs params ${checked[1]}` }
  }
  return null
}
