// The dashboard session: an HttpOnly, Secure, SameSite=Lax cookie whose SHA-256 hash is stored in
// PostgreSQL with its user. Used by the dashboard, the consent page and the dashboard routes.
// Rules enforced for state-changing requests (csrfProblem):
//   - the Origin header is present and is BASE_URL's origin (SameSite=Lax already keeps the cookie off
//     cross-site POSTs; the Origin check also covers same-site, cross-origin ones);
//   - the request carries the session's anti-CSRF token (form field or x-csrf-token), compared in
//     constant time.
import { timingSafeEqual } from 'node:crypto'
import type { Sql } from '../../shared/db/index.ts'
import { findSession, type SignInSession } from '../../shared/db/users.ts'
import { readCookie } from '../http/cookies.ts'

export const SESSION_COOKIE = 'aa_session'

export async function currentSession(sql: Sql, req: Request): Promise<SignInSession | null> {
  const cookie = readCookie(req, SESSION_COOKIE)
  return cookie ? findSession(sql, cookie) : null
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Null when a state-changing request is the dashboard's own, else why not. */
export function csrfProblem(req: Request, baseUrl: string, session: SignInSession, token: string | null): string | null {
  const origin = req.headers.get('origin')
  if (!origin || origin !== new URL(baseUrl).origin) return 'the request does not come from this site (Origin)'
  if (!token || !same(token, session.csrfToken)) return 'the anti-CSRF token is missing or wrong'
  return null
}
