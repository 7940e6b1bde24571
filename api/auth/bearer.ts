// Bearer authentication for /api/mcp: act_ API keys and mca_ OAuth tokens, interchangeable, looked up by hash.
import { findPrincipalByApiKey, touchApiKey, type Principal } from '../../shared/db/accounts.ts'
import type { Sql } from '../../shared/db/index.ts'
import { findPrincipalByOAuthToken, touchOAuthToken } from '../../shared/db/oauth.ts'
import { API_KEY_PREFIX, looksLikeCredential, OAUTH_TOKEN_PREFIX } from '../../shared/lib/keys.ts'

export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'missing' | 'invalid' }

/** A verified credential is remembered this long, so hot paths do not hit the database per request. */
const CACHE_MS = 5_000
const CACHE_MAX = 10_000

export class BearerAuth {
  private cache = new Map<string, { principal: Principal; expires: number }>()

  constructor(private sql: Sql) {}

  async authenticate(header: string | null): Promise<AuthResult> {
    if (!header) return { ok: false, reason: 'missing' }
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
    if (!m) return { ok: false, reason: 'missing' }
    const token = m[1]!
    if (!looksLikeCredential(token)) return { ok: false, reason: 'invalid' }
    // Keyed by the credential itself, which the request holds anyway: a hash per request costs more than
    // the rest of the lookup. The database is looked up by hash.
    const hit = this.cache.get(token)
    if (hit && hit.expires > Date.now()) return { ok: true, principal: hit.principal }
    const principal = token.startsWith(API_KEY_PREFIX)
      ? await findPrincipalByApiKey(this.sql, token)
      : token.startsWith(OAUTH_TOKEN_PREFIX)
        ? await findPrincipalByOAuthToken(this.sql, token)
        : null
    if (!principal) {
      this.cache.delete(token)
      return { ok: false, reason: 'invalid' }
    }
    if (this.cache.size >= CACHE_MAX) this.cache.clear()
    this.cache.set(token, { principal, expires: Date.now() + CACHE_MS })
    const touch = principal.kind === 'oauth' ? touchOAuthToken : touchApiKey
    touch(this.sql, principal.credentialId).catch(() => {})
    return { ok: true, principal }
  }

  /** Forget every cached credential at once (after a revocation). */
  forgetAll() {
    this.cache.clear()
  }
}
