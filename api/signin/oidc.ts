// The service as an OpenID Connect relying party: authorization-code flow with PKCE (S256) against any
// identity provider named by configuration. Rules enforced:
//   - the provider's discovery document must name the configured issuer exactly;
//   - each sign-in has its own state, nonce and PKCE verifier, kept server-side for 10 minutes, used once;
//   - the ID token is verified with jose against the provider's JWKS: signature, issuer, audience
//     (our client id), expiry, and the nonce of this sign-in;
//   - when the provider sends iss in the callback (RFC 9207), it must be the configured issuer.
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose'
import { createHash, randomBytes } from 'node:crypto'
import { errorMessage } from '../../shared/errors.ts'

export interface OidcSettings {
  issuer: string
  /**
   * The issuer users are recorded under (with their subject); by default `issuer`. The embedded default's
   * local provider listens on a new port at each start, so its issuer URL changes while its user does not.
   */
  identityIssuer?: string
  clientId: string
  clientSecret: string
  scopes: string
  redirectUri: string
}

interface Discovery {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  token_endpoint_auth_methods_supported?: string[]
}

export interface SignInStart {
  url: string
  state: string
  nonce: string
  verifier: string
}

export interface Identity {
  issuer: string
  subject: string
  email: string
  name: string
}

export type SignInError = {
  error: 'provider_unavailable' | 'token_exchange_failed' | 'invalid_id_token' | 'issuer_mismatch'
  message: string
}

const random = () => randomBytes(32).toString('base64url')

export class OidcClient {
  private discovery: Promise<Discovery> | null = null
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null

  constructor(readonly settings: OidcSettings) {}

  private discover(): Promise<Discovery> {
    this.discovery ??= (async () => {
      const res = await fetch(`${this.settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(10_000),
      })
      if (!res.ok) throw new Error(`discovery answered ${res.status}`)
      const doc = (await res.json()) as Discovery
      if (doc.issuer !== this.settings.issuer) throw new Error(`discovery names issuer ${doc.issuer}, configured ${this.settings.issuer}`)
      this.jwks = createRemoteJWKSet(new URL(doc.jwks_uri))
      return doc
    })()
    // A failed discovery is tried again on the next sign-in rather than remembered.
    this.discovery.catch(() => (this.discovery = null))
    return this.discovery
  }

  async start(): Promise<SignInStart | SignInError> {
    let d: Discovery
    try {
      d = await this.discover()
    } catch (e) {
      return { error: 'provider_unavailable', message: errorMessage(e) }
    }
    const state = random()
    const nonce = random()
    const verifier = random()
    const u = new URL(d.authorization_endpoint)
    u.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.settings.clientId,
      redirect_uri: this.settings.redirectUri,
      scope: this.settings.scopes,
      state,
      nonce,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString()
    return { url: u.toString(), state, nonce, verifier }
  }

  async finish(params: { code: string; iss: string | null; nonce: string; verifier: string }): Promise<Identity | SignInError> {
    let d: Discovery
    try {
      d = await this.discover()
    } catch (e) {
      return { error: 'provider_unavailable', message: errorMessage(e) }
    }
    if (params.iss !== null && params.iss !== this.settings.issuer)
      return { error: 'issuer_mismatch', message: 'the callback names another issuer' }
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.code,
      redirect_uri: this.settings.redirectUri,
      code_verifier: params.verifier,
      client_id: this.settings.clientId,
    })
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
    if (this.settings.clientSecret) {
      const methods = d.token_endpoint_auth_methods_supported ?? ['client_secret_basic']
      if (methods.includes('client_secret_basic')) {
        const enc = (s: string) => encodeURIComponent(s)
        headers.authorization = `Basic ${Buffer.from(`${enc(this.settings.clientId)}:${enc(this.settings.clientSecret)}`).toString('base64')}`
      } else {
        form.set('client_secret', this.settings.clientSecret)
      }
    }
    let idToken: unknown
    try {
      const res = await fetch(d.token_endpoint, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(10_000) })
      const body = (await res.json().catch(() => ({}))) as { id_token?: unknown; error?: string }
      if (!res.ok) return { error: 'token_exchange_failed', message: `the provider answered ${res.status} ${body.error ?? ''}`.trim() }
      idToken = body.id_token
    } catch (e) {
      return { error: 'provider_unavailable', message: errorMessage(e) }
    }
    if (typeof idToken !== 'string') return { error: 'invalid_id_token', message: 'the provider returned no ID token' }
    let claims: JWTPayload
    try {
      ;({ payload: claims } = await jwtVerify(idToken, this.jwks!, {
        issuer: this.settings.issuer,
        audience: this.settings.clientId,
        clockTolerance: 30,
        requiredClaims: ['sub', 'exp', 'iat'],
      }))
    } catch (e) {
      return { error: 'invalid_id_token', message: errorMessage(e) }
    }
    if (claims.nonce !== params.nonce) return { error: 'invalid_id_token', message: 'the ID token carries another nonce' }
    const str = (v: unknown) => (typeof v === 'string' ? v : '')
    return {
      issuer: this.settings.identityIssuer ?? this.settings.issuer,
      subject: claims.sub!,
      email: str(claims.email),
      name: str(claims.name) || str(claims.preferred_username),
    }
  }
}
