// The authorization server's logic on plain values; the routes (index.ts) do HTTP, cookies and pages.
// The steps live one per file: register.ts, authorize.ts, token.ts.
import { randomBytes } from 'node:crypto'
import { base62 } from '../../shared/lib/ids.ts'
import type { Sql } from '../../shared/db/index.ts'
import type { KeyValue } from '../../shared/infra/types.ts'
import { checkAuthorizeRequest, CODE_TTL_MS, decide } from './authorize.ts'
import { authorizationServerMetadata } from './metadata.ts'
import type { AuthorizeRequest } from './model.ts'
import { register } from './register.ts'
import { exchange } from './token.ts'

export interface OAuthDeps {
  sql: Sql
  kv: KeyValue
  baseUrl: string
  /** Injectable for tests of expiry. */
  now: () => Date
  /** A code replay revoked tokens: forget cached credentials everywhere. */
  onRevoked: () => void
}

type Pending = AuthorizeRequest & { sessionId: string }
const pendingKey = (id: string) => `oauth:pending:${id}`

export class OAuthService {
  constructor(private deps: OAuthDeps) {}

  metadata() {
    return authorizationServerMetadata(this.deps.baseUrl)
  }

  register(body: unknown) {
    return register(this.deps.sql, body)
  }

  checkAuthorize(query: URLSearchParams) {
    return checkAuthorizeRequest(this.deps.sql, this.deps.baseUrl, query)
  }

  /** Keeps a validated request while the consent page is shown; only the same session may answer it. */
  async holdRequest(request: AuthorizeRequest, sessionId: string): Promise<string> {
    const id = base62(randomBytes(18))
    const pending: Pending = { ...request, sessionId }
    await this.deps.kv.set(pendingKey(id), JSON.stringify(pending), CODE_TTL_MS / 1000)
    return id
  }

  /**
   * The held request, once: a second answer to the same consent page finds nothing. Only the session that
   * was shown the page can take it; another session's answer leaves it in place for its owner.
   */
  async takeRequest(id: string, sessionId: string): Promise<AuthorizeRequest | null> {
    if (!/^[0-9A-Za-z]{20,40}$/.test(id)) return null
    const raw = await this.deps.kv.get(pendingKey(id))
    if (!raw) return null
    const { sessionId: owner, ...request } = JSON.parse(raw) as Pending
    if (owner !== sessionId) return null
    return (await this.deps.kv.del(pendingKey(id))) ? request : null
  }

  decide(request: AuthorizeRequest, user: { id: string; accountId: string }, approved: boolean) {
    return decide(this.deps.sql, this.deps.baseUrl, this.deps.now, request, user, approved)
  }

  exchange(form: URLSearchParams) {
    return exchange(this.deps, form)
  }
}
