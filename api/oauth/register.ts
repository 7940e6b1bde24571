// POST /oauth/register: RFC 7591 dynamic client registration. Rules enforced:
//   - the body is a JSON object with client_name (1-200 characters) and redirect_uris (1-20), else
//     invalid_client_metadata; client_name holds no control or bidirectional formatting characters (a
//     right-to-left override would make the consent page show a name other than the one registered);
//   - every redirect URI passes redirect-uris.ts, else invalid_redirect_uri;
//   - token_endpoint_auth_method, when sent, is none: public clients only, no secret is ever issued;
//   - grant_types and response_types, when sent, include authorization_code and code (the only ones
//     served; the answer lists what the client actually gets);
//   - 201 with the registered client.
// The per-IP rate limit is applied by the route before this step.
import { Value } from '@sinclair/typebox/value'
import { createClient } from '../../shared/db/oauth.ts'
import type { Sql } from '../../shared/db/index.ts'
import { oauthError, type OAuthError } from './errors.ts'
import { RegisterRequest, type RegisteredClient } from './model.ts'
import { redirectUriProblem } from './redirect-uris.ts'

/** Control characters (C0, C1) and the bidirectional formatting ones (LRM, RLM, ALM, embeddings, overrides, isolates). */
const HIDDEN_CHARACTERS = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

export async function register(sql: Sql, body: unknown): Promise<RegisteredClient | OAuthError> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return oauthError('invalid_client_metadata', 'the body must be a JSON object')
  const b = body as Record<string, unknown>
  if (!Array.isArray(b.redirect_uris) || b.redirect_uris.length === 0)
    return oauthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array')
  for (const uri of b.redirect_uris) {
    const problem = redirectUriProblem(uri)
    if (problem) return oauthError('invalid_redirect_uri', problem)
  }
  if (!Value.Check(RegisterRequest, b)) {
    const first = [...Value.Errors(RegisterRequest, b)][0]
    return oauthError('invalid_client_metadata', first ? `${first.path.slice(1) || 'body'}: ${first.message}` : 'invalid client metadata')
  }
  if (b.token_endpoint_auth_method !== undefined && b.token_endpoint_auth_method !== 'none') {
    return oauthError('invalid_client_metadata', 'token_endpoint_auth_method must be none: clients are public and use PKCE')
  }
  if (b.grant_types && !b.grant_types.includes('authorization_code'))
    return oauthError('invalid_client_metadata', 'grant_types must include authorization_code')
  if (b.response_types && !b.response_types.includes('code'))
    return oauthError('invalid_client_metadata', 'response_types must include code')
  const clientName = b.client_name.trim()
  if (!clientName) return oauthError('invalid_client_metadata', 'client_name must not be blank')
  if (HIDDEN_CHARACTERS.test(clientName))
    return oauthError('invalid_client_metadata', 'client_name must not contain control or bidirectional formatting characters')
  const client = await createClient(sql, clientName, [...new Set(b.redirect_uris)])
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }
}
