// POST /oauth/token: exchanges an authorization code and its PKCE verifier for an mca_ token. Rules
// enforced, in this order:
//   - grant_type is authorization_code (unsupported_grant_type);
//   - no parameter appears twice; code, client_id, redirect_uri and code_verifier are present
//     (invalid_request) and the verifier is 43-128 characters of [A-Za-z0-9._~-] (invalid_grant);
//   - resource, when sent, is this server's MCP resource (invalid_target, RFC 8707);
//   - client_id names a registered client (invalid_client);
//   - the code is consumed atomically: a code seen before is refused and every token issued from it is
//     revoked (RFC 6749 4.1.2, RFC 9700 4.5); an unknown code is invalid_grant;
//   - the code belongs to this client, has not expired (10 minutes), was issued for this exact
//     redirect_uri and resource, and the verifier's S256 equals its challenge (constant time);
//   - the answer is an mca_ token valid 90 days, Bearer, with expires_in; it is stored as its SHA-256
//     hash with the client (the agent) that obtained it. The route sends it with Cache-Control: no-store.
import { consumeCode, createToken, getClient, revokeTokensOfCode } from '../../shared/db/oauth.ts'
import type { Sql } from '../../shared/db/index.ts'
import { oauthError, type OAuthError } from './errors.ts'
import type { TokenResponse } from './model.ts'
import { mcpResource } from './authorize.ts'
import { repeatedParams } from './params.ts'
import { VERIFIER_RE, verifierMatches } from './pkce.ts'

export const TOKEN_TTL_SECONDS = 90 * 24 * 3600

export interface ExchangeDeps {
  sql: Sql
  baseUrl: string
  now: () => Date
  /** Told when a replayed code revoked tokens, so cached credentials are forgotten. */
  onRevoked: () => void
}

export async function exchange(deps: ExchangeDeps, form: URLSearchParams): Promise<TokenResponse | OAuthError> {
  if (form.get('grant_type') !== 'authorization_code') return oauthError('unsupported_grant_type', 'grant_type must be authorization_code')
  const [repeated] = repeatedParams(form)
  if (repeated !== undefined) return oauthError('invalid_request', `${repeated} is repeated`)
  const code = form.get('code')
  const clientId = form.get('client_id')
  const redirectUri = form.get('redirect_uri')
  const verifier = form.get('code_verifier')
  const resource = form.get('resource')
  if (!code) return oauthError('invalid_request', 'code is required')
  if (!clientId) return oauthError('invalid_request', 'client_id is required (clients are public)')
  if (!redirectUri) return oauthError('invalid_request', 'redirect_uri is required')
  if (!verifier) return oauthError('invalid_request', 'code_verifier is required (PKCE)')
  if (!VERIFIER_RE.test(verifier)) return oauthError('invalid_grant', 'code_verifier must be 43-128 characters of [A-Za-z0-9._~-]')
  const expectedResource = mcpResource(deps.baseUrl)
  if (resource !== null && resource !== expectedResource) return oauthError('invalid_target', `resource must be ${expectedResource}`)
  const client = await getClient(deps.sql, clientId)
  if (!client) return oauthError('invalid_client', 'unknown client_id')

  const consumed = await consumeCode(deps.sql, code)
  if (consumed.kind === 'unknown') return oauthError('invalid_grant', 'the code is not valid')
  if (consumed.kind === 'reused') {
    if ((await revokeTokensOfCode(deps.sql, consumed.codeHash)) > 0) deps.onRevoked()
    return oauthError('invalid_grant', 'the code was already used; the token issued from it is revoked')
  }
  const c = consumed.code
  if (c.clientId !== client.id) return oauthError('invalid_grant', 'the code was issued to another client')
  if (c.expiresAt.getTime() <= deps.now().getTime()) return oauthError('invalid_grant', 'the code has expired')
  if (c.redirectUri !== redirectUri) return oauthError('invalid_grant', 'redirect_uri differs from the one of the authorization request')
  if (c.resource !== null && resource !== null && c.resource !== resource)
    return oauthError('invalid_target', 'resource differs from the one of the authorization request')
  if (!verifierMatches(verifier, c.codeChallenge)) return oauthError('invalid_grant', 'code_verifier does not match the code_challenge')

  const token = await createToken(deps.sql, {
    accountId: c.accountId,
    userId: c.userId,
    clientId: client.id,
    clientName: client.clientName,
    codeHash: c.codeHash,
    resource: expectedResource,
    expiresAt: new Date(deps.now().getTime() + TOKEN_TTL_SECONDS * 1000),
  })
  return { access_token: token.plaintext, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS }
}
