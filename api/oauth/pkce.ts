// PKCE (RFC 7636) with S256 only. Rules enforced:
//   - code_challenge_method must be S256; plain or absent is refused (OAuth 2.1, RFC 9700 2.1.1);
//   - a challenge is the base64url SHA-256 of a verifier: exactly 43 characters of [A-Za-z0-9_-];
//   - a verifier is 43-128 characters of [A-Za-z0-9._~-] (RFC 7636 4.1);
//   - the comparison is constant-time.
import { createHash, timingSafeEqual } from 'node:crypto'

export const CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/
export const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/

export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER_RE.test(verifier) || !CHALLENGE_RE.test(challenge)) return false
  const a = Buffer.from(s256(verifier))
  const b = Buffer.from(challenge)
  return a.length === b.length && timingSafeEqual(a, b)
}
