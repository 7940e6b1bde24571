// Who may knock, before anything is read: the method (OPTIONS is a CORS preflight, only GET, POST and
// DELETE are served: 405), the bearer credential (401 with WWW-Authenticate as SPEC.md section 5; 503 when
// the credential store cannot be reached) and the request rate of the credential and its account (429).
import type { Principal } from '../../shared/db/accounts.ts'
import { errorMessage } from '../../shared/errors.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { BearerAuth } from '../auth/bearer.ts'
import { corsPreflight } from '../http/cors.ts'
import type { RequestLimiter } from '../http/request-limit.ts'
import { rpcErrorResponse, tooManyRequests, unavailable } from './rpc-error.ts'

/** OPTIONS answered (no auth), a method other than GET, POST and DELETE refused; null lets the request on. */
export function answerMethod(req: Request): Response | null {
  if (req.method === 'OPTIONS') return corsPreflight()
  if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
    return rpcErrorResponse(405, -32000, `Method ${req.method} not allowed`, { allow: 'GET, POST, DELETE, OPTIONS' })
  }
  return null
}

export function wwwAuthenticate(baseUrl: string, reason: 'missing' | 'invalid'): string {
  const description = reason === 'missing' ? 'No authorization provided' : 'The access token is invalid, expired or revoked'
  return `Bearer error="invalid_token", error_description="${description}", resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`
}

/** The principal of the request's bearer credential, or the answer that refuses it. */
export async function authenticate(auth: BearerAuth, req: Request, baseUrl: string, log: Logger): Promise<Principal | Response> {
  let result: Awaited<ReturnType<BearerAuth['authenticate']>>
  try {
    result = await auth.authenticate(req.headers.get('authorization'))
  } catch (e) {
    log.error('credential lookup failed', { error: errorMessage(e) })
    return unavailable('the credential store')
  }
  if (result.ok) return result.principal
  return rpcErrorResponse(
    401,
    -32001,
    result.reason === 'missing' ? 'Unauthorized: no bearer credential' : 'Unauthorized: invalid bearer credential',
    { 'www-authenticate': wwwAuthenticate(baseUrl, result.reason) },
  )
}

/** Spends `count` requests of the credential and its account: null when allowed, else the 429. */
export function spendRequests(requests: RequestLimiter, principal: Principal, count = 1): Response | null {
  const rate = requests.take(principal.credentialId, principal.account.id, count)
  return rate.ok ? null : tooManyRequests(rate)
}
