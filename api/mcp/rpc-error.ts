// The transport's own answers: a JSON-RPC error body with an HTTP status, always with CORS, never plain text.
import type { LimitDecision } from '../http/request-limit.ts'
import { withCors } from '../http/cors.ts'

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

/** Over the request rate of the credential or of its account: 429, and when to come back. */
export const tooManyRequests = (rate: Extract<LimitDecision, { ok: false }>) =>
  rpcErrorResponse(
    429,
    -32000,
    `Too many requests from this ${rate.scope === 'credential' ? 'key or token' : 'account'}; retry in ${rate.retryAfterSeconds} s`,
    { 'retry-after': String(rate.retryAfterSeconds) },
  )

/** A store we depend on is down: say so, and when to come back. Nothing was changed. */
export const unavailable = (what: string) =>
  rpcErrorResponse(503, -32603, `Service temporarily unavailable: ${what} cannot be reached. Nothing was changed; retry shortly.`, {
    'retry-after': '5',
  })
