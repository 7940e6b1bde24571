// The ID token is verified with jose against the provider's JWKS: signature, issuer, audience, expiry
// and nonce. A provider stand-in on port 0 hands out tokens that break one rule each.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import { OidcClient } from '../../../api/signin/oidc.ts'

let server: ReturnType<typeof Bun.serve>
let issuer: string
let nextToken = ''
let signingKey: CryptoKey
let strangerKey: CryptoKey

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true })
  signingKey = pair.privateKey
  strangerKey = (await generateKeyPair('RS256')).privateKey
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/.well-known/openid-configuration') {
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
        })
      }
      if (path === '/jwks') return Response.json({ keys: [jwk] })
      if (path === '/token') return Response.json({ id_token: nextToken, access_token: 'x', token_type: 'Bearer' })
      return new Response('no', { status: 404 })
    },
  })
  issuer = `http://127.0.0.1:${server.port}`
})
afterAll(() => server?.stop(true))

const client = () =>
  new OidcClient({ issuer, clientId: 'dashboard', clientSecret: 's', scopes: 'openid', redirectUri: 'http://127.0.0.1/cb' })

async function token(claims: JWTPayload, opts: { key?: CryptoKey; expiresIn?: string | number } = {}) {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ nonce: 'n-1', email: 'a@example.test', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuedAt(now)
    .setExpirationTime(opts.expiresIn ?? now + 300)
    .setIssuer((claims.iss as string) ?? issuer)
    .setAudience((claims.aud as string) ?? 'dashboard')
    .setSubject('user-1')
    .sign(opts.key ?? signingKey)
}

const finish = () => client().finish({ code: 'c', iss: null, nonce: 'n-1', verifier: 'v'.repeat(43) })

describe('ID token verification', () => {
  test('a valid token gives the identity', async () => {
    nextToken = await token({})
    expect(await finish()).toEqual({ issuer, subject: 'user-1', email: 'a@example.test', name: '' })
  })

  test.each([
    ['another issuer', () => token({ iss: 'https://evil.example' })],
    ['another audience', () => token({ aud: 'someone-else' })],
    ['another nonce', () => token({ nonce: 'replayed' })],
    ['an expired token', () => token({}, { expiresIn: Math.floor(Date.now() / 1000) - 3600 })],
    ['a signature by a key outside the JWKS', () => token({}, { key: strangerKey })],
  ])('%s is refused', async (_n, make) => {
    nextToken = await make()
    const r = await finish()
    expect('error' in r && r.error).toBe('invalid_id_token')
  })

  test('an unsigned token (alg none) is refused', async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
    nextToken = `${b64({ alg: 'none' })}.${b64({ iss: issuer, aud: 'dashboard', sub: 'u', nonce: 'n-1', iat: 1, exp: 9999999999 })}.`
    const r = await finish()
    expect('error' in r && r.error).toBe('invalid_id_token')
  })

  test('a discovery document naming another issuer is refused', async () => {
    const c = new OidcClient({
      issuer: `${issuer}/`,
      clientId: 'dashboard',
      clientSecret: '',
      scopes: 'openid',
      redirectUri: 'http://127.0.0.1/cb',
    })
    const r = await c.start()
    expect('error' in r && r.error).toBe('provider_unavailable')
  })
})
