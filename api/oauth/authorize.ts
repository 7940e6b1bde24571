// GET and POST /oauth/authorize: the authorization-code grant with PKCE. Rules enforced:
//   - an unknown client_id, or a redirect_uri that matches none registered, is shown to the user and
//     never redirected to (RFC 6749 4.1.2.1: an open redirector otherwise);
//   - redirect_uri is matched exactly, any port on loopback (redirect-uris.ts); absent, it is the
//     client's only registered URI;
//   - no parameter appears twice (RFC 6749 3.1);
//   - response_type is code (unsupported_response_type otherwise);
//   - PKCE: code_challenge_method S256 and a well-formed code_challenge (invalid_request otherwise);
//   - resource (RFC 8707), when sent, is this server's MCP resource (invalid_target otherwise);
//   - an error of a request from a known client is never redirected automatically (RFC 9700 4.11.2:
//     clients register themselves); the route offers it to a signed-in person as a link;
//   - every answer sent to the client carries state (when sent) and iss (RFC 9207);
//   - a code lives 10 minutes and is bound to client, redirect URI, challenge, resource and user.
// Sign-in, the consent page, CSRF and framing are the route's concern (index.ts).
import { createCode, getClient } from '../../shared/db/oauth.ts'
import type { Sql } from '../../shared/db/index.ts'
import type { AuthorizeRequest } from './model.ts'
import { CHALLENGE_RE } from './pkce.ts'
import { repeatedParams } from './params.ts'
import { matchRedirectUri } from './redirect-uris.ts'

export const CODE_TTL_MS = 10 * 60 * 1000

export type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizeRequest }
  /** Shown to the user: there is no trustworthy place to send the error. */
  | { kind: 'show'; description: string }
  /**
   * The error goes back to the client at this URL, never automatically (RFC 9700 4.11.2: the client is
   * registered by anyone): the route shows it as a link, with the client's name, to a signed-in person.
   */
  | { kind: 'redirect'; url: string; description: string; clientName: string; redirectUri: string }

export function responseUrl(redirectUri: string, params: Record<string, string | null>): string {
  const u = new URL(redirectUri)
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.set(k, v)
  return u.toString()
}

export const mcpResource = (baseUrl: string) => `${baseUrl}/api/mcp`

export async function checkAuthorizeRequest(sql: Sql, baseUrl: string, q: URLSearchParams): Promise<AuthorizeCheck> {
  const one = (name: string) => q.get(name)
  const clientId = one('client_id')
  if (!clientId) return { kind: 'show', description: 'The request names no client (client_id is missing).' }
  const client = await getClient(sql, clientId)
  if (!client) return { kind: 'show', description: 'The application that sent you here is not registered with this service.' }
  const requested = one('redirect_uri')
  let redirectUri: string | null
  if (requested === null) redirectUri = client.redirectUris.length === 1 ? client.redirectUris[0]! : null
  else redirectUri = matchRedirectUri(client.redirectUris, requested) ? requested : null
  if (!redirectUri) return { kind: 'show', description: 'The redirect address of this request is not one the application registered.' }
  const repeated = repeatedParams(q)
  if (repeated.includes('redirect_uri') || repeated.includes('client_id')) {
    return { kind: 'show', description: 'The request repeats client_id or redirect_uri.' }
  }

  const state = one('state')
  const fail = (error: string, description: string): AuthorizeCheck => ({
    kind: 'redirect',
    url: responseUrl(redirectUri, { error, error_description: description, state, iss: baseUrl }),
    description,
    clientName: client.clientName,
    redirectUri,
  })
  const [first] = repeated
  if (first !== undefined) return fail(first === 'resource' ? 'invalid_target' : 'invalid_request', `${first} is repeated`)
  if (one('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code')
  const method = one('code_challenge_method')
  const challenge = one('code_challenge')
  if (!challenge) return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256')
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)')
  if (!CHALLENGE_RE.test(challenge))
    return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)')
  const resource = one('resource')
  if (resource !== null && resource !== mcpResource(baseUrl)) return fail('invalid_target', `resource must be ${mcpResource(baseUrl)}`)
  return {
    kind: 'ok',
    request: { clientId: client.id, clientName: client.clientName, redirectUri, codeChallenge: challenge, state, resource },
  }
}

/** The URL the browser goes to after the user's decision. */
export async function decide(
  sql: Sql,
  baseUrl: string,
  now: () => Date,
  request: AuthorizeRequest,
  user: { id: string; accountId: string },
  approved: boolean,
): Promise<string> {
  if (!approved) {
    return responseUrl(request.redirectUri, {
      error: 'access_denied',
      error_description: 'The user declined',
      state: request.state,
      iss: baseUrl,
    })
  }
  const code = await createCode(sql, {
    clientId: request.clientId,
    accountId: user.accountId,
    userId: user.id,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    resource: request.resource,
    expiresAt: new Date(now().getTime() + CODE_TTL_MS),
  })
  return responseUrl(request.redirectUri, { code, state: request.state, iss: baseUrl })
}
