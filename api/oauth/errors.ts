// One error type for every OAuth failure, with the codes of RFC 6749 5.2 / 4.1.2.1, RFC 7591 3.2.2 and
// RFC 8707. Steps return these as values; the routes map them once to HTTP.
export const OAUTH_ERRORS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  temporarily_unavailable: 503,
  slow_down: 429,
} as const

export type OAuthErrorCode = keyof typeof OAUTH_ERRORS

export interface OAuthError {
  error: OAuthErrorCode
  description: string
}

export const oauthError = (error: OAuthErrorCode, description: string): OAuthError => ({ error, description })

export const isOAuthError = (v: unknown): v is OAuthError =>
  typeof v === 'object' &&
  v !== null &&
  'error' in v &&
  typeof (v as OAuthError).error === 'string' &&
  (v as OAuthError).error in OAUTH_ERRORS

/** The JSON error body of the token and registration endpoints; never cached. */
export function oauthErrorResponse(e: OAuthError, headers: Record<string, string> = {}): Response {
  const extra: Record<string, string> = e.error === 'invalid_client' ? { 'www-authenticate': 'Bearer error="invalid_client"' } : {}
  return Response.json(
    { error: e.error, error_description: e.description },
    { status: OAUTH_ERRORS[e.error], headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...extra, ...headers } },
  )
}
