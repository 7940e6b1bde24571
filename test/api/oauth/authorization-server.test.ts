// The OAuth 2.0 authorization server for agents (RFC 8414, 7591, 6749, 7636, 8707,
// 9207, 9700), against the real service and a person signed in through the real local provider.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { initializeBody, MCP_HEADERS } from '../../harness/client.ts'
import { answerConsent, authorizeUrl, exchangeCode, obtainCode, pkcePair, registerClient } from '../../harness/oauth.ts'
import { jarFetch, signIn, type CookieJar, type SignInService, startSignInService, CookieJar as Jar } from '../../harness/signin.ts'

let svc: SignInService
let jar: CookieJar

beforeAll(async () => {
  svc = await startSignInService('production', { TRUSTED_PROXY_HOPS: '1' })
  jar = await signIn(svc)
})
afterAll(() => svc?.stop())

const mcpStatus = async (token: string) =>
  (
    await fetch(`${svc.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: JSON.stringify(initializeBody()),
    })
  ).status

async function issueToken(opts: { clientName?: string } = {}) {
  const c = await obtainCode(svc, jar, opts)
  const { res, body } = await exchangeCode(svc, {
    grant_type: 'authorization_code',
    code: c.code,
    client_id: c.clientId,
    redirect_uri: c.redirectUri,
    code_verifier: c.verifier,
    resource: `${svc.baseUrl}/api/mcp`,
  })
  expect(res.status).toBe(200)
  return { ...c, token: body.access_token as string, res, body }
}

describe('RFC 8414 discovery', () => {
  test('the metadata names BASE_URL exactly as issuer, and only what is implemented', async () => {
    const res = await fetch(`${svc.baseUrl}/.well-known/oauth-authorization-server`)
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const doc = await res.json()
    expect(doc.issuer).toBe(svc.baseUrl)
    expect(doc.authorization_endpoint).toBe(`${svc.baseUrl}/oauth/authorize`)
    expect(doc.token_endpoint).toBe(`${svc.baseUrl}/oauth/token`)
    expect(doc.registration_endpoint).toBe(`${svc.baseUrl}/oauth/register`)
    expect(doc.response_types_supported).toEqual(['code'])
    expect(doc.grant_types_supported).toEqual(['authorization_code'])
    expect(doc.code_challenge_methods_supported).toEqual(['S256'])
    expect(doc.token_endpoint_auth_methods_supported).toEqual(['none'])
    expect(doc.authorization_response_iss_parameter_supported).toBe(true)
  })

  test('both protected-resource documents name the MCP resource and this server', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
      const doc = await (await fetch(svc.baseUrl + path)).json()
      expect(doc.resource).toBe(`${svc.baseUrl}/api/mcp`)
      expect(doc.authorization_servers).toEqual([svc.baseUrl])
    }
  })
})

describe('RFC 7591 registration', () => {
  test('registers a public client: 201, a client_id, auth method none, and no secret', async () => {
    const { res, body } = await registerClient(svc, { client_name: 'Claude Code', redirect_uris: ['http://localhost:33418/callback'] })
    expect(res.status).toBe(201)
    expect(body.client_id).toMatch(/^mcl_/)
    expect(body.client_name).toBe('Claude Code')
    expect(body.redirect_uris).toEqual(['http://localhost:33418/callback'])
    expect(body.token_endpoint_auth_method).toBe('none')
    expect(body.client_secret).toBeUndefined()
    expect(res.headers.get('cache-control')).toContain('no-store')
  })

  test.each([
    ['https on any host', 'https://app.example/cb'],
    ['http on 127.0.0.1', 'http://127.0.0.1/cb'],
    ['http on [::1]', 'http://[::1]:8080/cb'],
    ['a native app scheme (cursor://)', 'cursor://anysphere.cursor-retrieval/oauth/callback'],
    ['a native app scheme (vscode://)', 'vscode://vscode.github-authentication/did-authenticate'],
  ])('accepts %s', async (_n, uri) => {
    const { res } = await registerClient(svc, { redirect_uris: [uri] })
    expect(res.status).toBe(201)
  })

  test.each([
    ['http on a public host', 'http://app.example/cb'],
    ['a fragment', 'https://app.example/cb#x'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,hi'],
    ['a relative URI', '/callback'],
    ['a bare scheme', 'cursor://'],
  ])('refuses %s with invalid_redirect_uri', async (_n, uri) => {
    const { res, body } = await registerClient(svc, { redirect_uris: [uri] })
    expect(res.status).toBe(400)
    expect(body.error).toBe('invalid_redirect_uri')
  })

  test('refuses metadata without redirect URIs, without a name, or asking for a secret', async () => {
    expect((await registerClient(svc, { redirect_uris: [] })).body.error).toBe('invalid_redirect_uri')
    expect((await registerClient(svc, { client_name: undefined })).body.error).toBe('invalid_client_metadata')
    expect((await registerClient(svc, { token_endpoint_auth_method: 'client_secret_basic' })).body.error).toBe('invalid_client_metadata')
    expect((await registerClient(svc, { grant_types: ['client_credentials'] })).body.error).toBe('invalid_client_metadata')
    const notJson = await fetch(`${svc.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    })
    expect(notJson.status).toBe(400)
    expect((await notJson.json()).error).toBe('invalid_client_metadata')
  })
})

describe('authorization endpoint', () => {
  let clientId: string
  const redirectUri = 'http://127.0.0.1/callback'
  beforeAll(async () => {
    clientId = (
      await registerClient(svc, { client_name: 'Consent <Test> Agent', redirect_uris: [redirectUri, 'https://agent.example/cb'] })
    ).body.client_id
  })
  const params = (over: Record<string, string | undefined> = {}) => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:51234/callback',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    ...over,
  })

  test('without a session it sends the person to sign in first, then back here', async () => {
    const res = await fetch(authorizeUrl(svc, params()), { redirect: 'manual' })
    expect(res.status).toBe(302)
    const to = new URL(res.headers.get('location')!, svc.baseUrl)
    expect(to.pathname).toBe('/auth/login')
    expect(to.searchParams.get('return_to')).toStartWith('/oauth/authorize?')
  })

  test('the consent page names the client and its redirect host, cannot be framed, and has no CORS', async () => {
    const res = await jarFetch(jar, authorizeUrl(svc, params()), { headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Consent &lt;Test&gt; Agent')
    expect(html).toContain('127.0.0.1:51234')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect(res.headers.get('cache-control')).toContain('no-store')
  })

  test('a loopback redirect URI matches on any port; other URIs match exactly', async () => {
    expect((await jarFetch(jar, authorizeUrl(svc, params({ redirect_uri: 'http://127.0.0.1:1/callback' })))).status).toBe(200)
    expect((await jarFetch(jar, authorizeUrl(svc, params({ redirect_uri: 'https://agent.example/cb' })))).status).toBe(200)
    for (const bad of [
      'https://agent.example/cb/',
      'https://agent.example:444/cb',
      'http://127.0.0.1:5/other',
      'http://localhost:5/callback',
      'https://evil.example/cb',
    ]) {
      const res = await jarFetch(jar, authorizeUrl(svc, params({ redirect_uri: bad })))
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
    }
  })

  test('an unknown client is shown an error, never redirected', async () => {
    const res = await jarFetch(jar, authorizeUrl(svc, params({ client_id: 'mcl_unknown0000000000' })))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  test.each([
    ['PKCE missing', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['PKCE plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge method missing', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['another resource', { resource: 'https://other.example/api/mcp' }, 'invalid_target'],
  ])('%s is refused with a link back to the client carrying state and iss (never an automatic redirect)', async (_n, over, error) => {
    const res = await jarFetch(jar, authorizeUrl(svc, params(over as Record<string, string | undefined>)))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    const href = /id="return-to-client" href="([^"]+)"/.exec(await res.text())![1]!.replaceAll('&amp;', '&')
    const to = new URL(href)
    expect(to.origin + to.pathname).toBe('http://127.0.0.1:51234/callback')
    expect(to.searchParams.get('error')).toBe(error)
    expect(to.searchParams.get('state')).toBe('st-123')
    expect(to.searchParams.get('iss')).toBe(svc.baseUrl)
  })

  test('approving returns a code with state and iss (RFC 9207); denying returns access_denied', async () => {
    const page = await (await jarFetch(jar, authorizeUrl(svc, params()))).text()
    const ok = await answerConsent(svc, jar, page, 'approve')
    expect(ok.status).toBe(303)
    const to = new URL(ok.headers.get('location')!)
    expect(to.searchParams.get('code')).toMatch(/^mcc_/)
    expect(to.searchParams.get('state')).toBe('st-123')
    expect(to.searchParams.get('iss')).toBe(svc.baseUrl)
    const page2 = await (await jarFetch(jar, authorizeUrl(svc, params()))).text()
    const no = new URL((await answerConsent(svc, jar, page2, 'deny')).headers.get('location')!)
    expect(no.searchParams.get('error')).toBe('access_denied')
    expect(no.searchParams.get('code')).toBeNull()
  })

  test('the consent form is protected against CSRF: foreign Origin, missing token, other session, replay', async () => {
    const page = await (await jarFetch(jar, authorizeUrl(svc, params()))).text()
    expect((await answerConsent(svc, jar, page, 'approve', 'https://evil.example')).status).toBe(403)
    const noToken = await jarFetch(jar, `${svc.baseUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.baseUrl },
      body: new URLSearchParams({ request_id: /name="request_id" value="([^"]+)"/.exec(page)![1]!, decision: 'approve' }),
    })
    expect(noToken.status).toBe(403)
    const noSession = await answerConsent(svc, new Jar(), page, 'approve')
    expect(noSession.status).toBe(401)
    expect((await answerConsent(svc, jar, page, 'approve')).status).toBe(303)
    expect((await answerConsent(svc, jar, page, 'approve')).status).toBe(400)
  })
})

describe('token endpoint', () => {
  test('exchanges a code for an mca_ token valid 90 days, never cached, stored as a hash with the agent', async () => {
    const t = await issueToken({ clientName: 'Cursor' })
    expect(t.token).toMatch(/^mca_[0-9A-Za-z]{43}$/)
    expect(t.body.token_type).toBe('Bearer')
    expect(t.body.expires_in).toBe(90 * 24 * 3600)
    expect(t.res.headers.get('cache-control')).toContain('no-store')
    const [row] = await svc.running.services.db.sql<{ token_hash: string; client_name: string; expires_at: Date }[]>`
      SELECT token_hash, client_name, expires_at FROM oauth_tokens WHERE client_id = ${t.clientId}`
    expect(row!.token_hash).toBe(new Bun.CryptoHasher('sha256').update(t.token).digest('hex'))
    expect(row!.client_name).toBe('Cursor')
    expect(Math.abs(row!.expires_at.getTime() - Date.now() - 90 * 86_400_000)).toBeLessThan(60_000)
    const codes = await svc.running.services.db.sql<{ code_hash: string }[]>`SELECT code_hash FROM oauth_codes`
    expect(codes.every((c) => /^[0-9a-f]{64}$/.test(c.code_hash) && c.code_hash !== t.code)).toBe(true)
  })

  test('an mca_ token works on /api/mcp like an API key, with the account of the person who approved', async () => {
    const t = await issueToken()
    const init = await fetch(`${svc.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${t.token}` },
      body: JSON.stringify(initializeBody()),
    })
    expect(init.status).toBe(200)
    const session = init.headers.get('mcp-session-id')!
    const call = await fetch(`${svc.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${t.token}`, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    })
    expect(call.status).toBe(200)
    expect((await call.json()).result.tools.length).toBe(18)
  })

  test('a reused code is refused and the token issued from it is revoked at once', async () => {
    const t = await issueToken()
    expect(await mcpStatus(t.token)).toBe(200)
    const again = await exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: t.code,
      client_id: t.clientId,
      redirect_uri: t.redirectUri,
      code_verifier: t.verifier,
    })
    expect(again.res.status).toBe(400)
    expect(again.body.error).toBe('invalid_grant')
    expect(await mcpStatus(t.token)).toBe(401)
  })

  const exchangeWith = async (over: (c: Awaited<ReturnType<typeof obtainCode>>) => Record<string, string | undefined>) => {
    const c = await obtainCode(svc, jar)
    return exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
      ...over(c),
    })
  }

  test('a wrong verifier is refused', async () => {
    const { res, body } = await exchangeWith(() => ({ code_verifier: pkcePair().verifier }))
    expect(res.status).toBe(400)
    expect(body.error).toBe('invalid_grant')
  })

  test.each([
    ['too short', 'a'.repeat(42)],
    ['too long', 'a'.repeat(129)],
    ['outside the alphabet', `${'a'.repeat(43)}+`],
  ])('a verifier %s is refused', async (_n, verifier) => {
    const { body } = await exchangeWith(() => ({ code_verifier: verifier }))
    expect(body.error).toBe('invalid_grant')
  })

  test('a missing verifier is refused', async () => {
    const { body } = await exchangeWith(() => ({ code_verifier: undefined }))
    expect(body.error).toBe('invalid_request')
  })

  test("a redirect_uri other than the authorization request's is refused", async () => {
    const { body } = await exchangeWith(() => ({ redirect_uri: 'http://127.0.0.1:9998/callback' }))
    expect(body.error).toBe('invalid_grant')
  })

  test('an expired code (older than 10 minutes) is refused', async () => {
    const c = await obtainCode(svc, jar)
    const hash = new Bun.CryptoHasher('sha256').update(c.code).digest('hex')
    const [row] = await svc.running.services.db.sql<{ ttl: number }[]>`
      SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM oauth_codes WHERE code_hash = ${hash}`
    expect(row!.ttl).toBe(600)
    await svc.running.services.db.sql`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE code_hash = ${hash}`
    const r = await exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
    })
    expect(r.body.error).toBe('invalid_grant')
    expect(r.body.error_description).toContain('expired')
  })

  test("another client's code is refused", async () => {
    const other = (await registerClient(svc)).body.client_id
    const { body } = await exchangeWith(() => ({ client_id: other }))
    expect(body.error).toBe('invalid_grant')
  })

  test('an unknown client is invalid_client (401)', async () => {
    const { res, body } = await exchangeWith(() => ({ client_id: 'mcl_nobody000000000000' }))
    expect(res.status).toBe(401)
    expect(body.error).toBe('invalid_client')
  })

  test('resource (RFC 8707): absence is accepted, a wrong one is invalid_target', async () => {
    const absent = await exchangeWith(() => ({ resource: undefined }))
    expect(absent.res.status).toBe(200)
    const wrong = await exchangeWith(() => ({ resource: 'https://other.example/api/mcp' }))
    expect(wrong.body.error).toBe('invalid_target')
  })

  test('other grant types and non-form bodies are refused', async () => {
    expect((await exchangeCode(svc, { grant_type: 'client_credentials' })).body.error).toBe('unsupported_grant_type')
    const json = await fetch(`${svc.baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect((await json.json()).error).toBe('invalid_request')
  })

  test('a token stops working at once when its agent is revoked in settings', async () => {
    const t = await issueToken({ clientName: 'Revoked Agent' })
    expect(await mcpStatus(t.token)).toBe(200)
    const page = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/settings`)).text()
    expect(page).toContain('Revoked Agent')
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!
    const res = await jarFetch(jar, `${svc.baseUrl}/dashboard/api/agents/${t.clientId}/revoke`, {
      method: 'POST',
      headers: { origin: svc.baseUrl, 'x-csrf-token': csrf },
    })
    expect(res.status).toBe(200)
    // No wait: the 5 s credential cache of this process is cleared by the revocation.
    expect(await mcpStatus(t.token)).toBe(401)
  })

  test('an expired token is refused', async () => {
    const t = await issueToken()
    await svc.running.services.db.sql`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE client_id = ${t.clientId}`
    expect(await mcpStatus(t.token)).toBe(401)
  })
})

describe('rate limits', () => {
  test('registration is rate-limited per client address, with Retry-After', async () => {
    let limited: Response | null = null
    for (let i = 0; i < 30 && !limited; i++) {
      const { res } = await registerClient(svc, {}, '192.0.2.7')
      if (res.status === 429) limited = res
    }
    expect(limited).not.toBeNull()
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another address is not affected.
    expect((await registerClient(svc, {}, '192.0.2.8')).res.status).toBe(201)
  })
})
