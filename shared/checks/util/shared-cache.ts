// Whether a shared cache (a CDN, a proxy) may store an answer to a credentialed call (RFC 9111 §3.5, §5.2.2).
import type { ApiCall } from '../types.ts'
import { headerValue } from './http.ts'

/** How a shared cache may treat an answer: explicitly allowed to store it, possibly stored, or not. */
export function sharedCacheability(call: ApiCall): 'allowed' | 'possible' | 'no' {
  const cc = (headerValue(call.headers, 'cache-control') ?? '').toLowerCase()
  if (/\b(?:no-store|private)\b/.test(cc)) return 'no'
  const sMaxAge = /\bs-maxage\s*=\s*"?(\d+)/.exec(cc)
  if (/\bpublic\b/.test(cc) || (sMaxAge && Number(sMaxAge[1]) > 0)) return 'allowed'
  const maxAge = /\bmax-age\s*=\s*"?(\d+)/.exec(cc)
  // Authorization: a shared cache must not store the answer without public, s-maxage or must-revalidate.
  if (call.authorization) return 'no'
  return maxAge && Number(maxAge[1]) > 0 ? 'possible' : 'no'
}
