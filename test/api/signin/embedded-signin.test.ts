// The embedded default signs people in with no configuration: boot starts a real local OpenID provider
// with a development user, and the whole OAuth flow for agents works on top of it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { initializeBody, MCP_HEADERS } from '../../harness/client.ts'
import { exchangeCode, obtainCode } from '../../harness/oauth.ts'
import { startService, type TestService } from '../../harness/service.ts'
import { browse, CookieJar, DEV_USER, freePort, type SignInService } from '../../harness/signin.ts'
import { machineDeadline } from '../../harness/machine.ts'

let svc: TestService
let baseUrl: string

beforeAll(async () => {
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  // No OIDC_ISSUER and no DATABASE_URL: the embedded default, which starts its own provider.
  svc = await startService('embedded', { ROLE: 'api', PORT: String(port), BASE_URL: baseUrl, LOCAL_IDP_USER: DEV_USER })
}, machineDeadline(90_000))
afterAll(() => svc?.stop())

test('the embedded default starts a local provider with a development user and a random password', () => {
  const local = svc.running.localSignIn!
  expect(local.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  expect(local.user).toBe(DEV_USER)
  expect(local.password.length).toBeGreaterThanOrEqual(16)
})

test("the development user signs in, approves an agent, and the agent's mca_ token works", async () => {
  const jar = new CookieJar()
  const { url } = await browse(jar, `${baseUrl}/auth/login`, {
    password: svc.running.localSignIn!.password,
    stopAt: (u) => u.startsWith(baseUrl) && !u.startsWith(`${baseUrl}/auth/`),
  })
  expect(url).toBe(`${baseUrl}/dashboard`)
  const asService = { baseUrl } as SignInService
  const c = await obtainCode(asService, jar)
  const { body } = await exchangeCode(asService, {
    grant_type: 'authorization_code',
    code: c.code,
    client_id: c.clientId,
    redirect_uri: c.redirectUri,
    code_verifier: c.verifier,
  })
  expect(body.access_token).toMatch(/^mca_/)
  const res = await fetch(`${baseUrl}/api/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${body.access_token}` },
    body: JSON.stringify(initializeBody()),
  })
  expect(res.status).toBe(200)
})

test('a production deployment without OIDC_ISSUER starts no provider and says sign-in is not configured', async () => {
  const prod = await startService('production', { ROLE: 'api' })
  try {
    expect(prod.running.localSignIn).toBeNull()
    const res = await fetch(`${prod.url}/auth/login`, {
      redirect: 'manual',
      headers: { host: new URL(prod.running.services.config.baseUrl).host },
    })
    expect(res.status).toBe(503)
  } finally {
    await prod.stop()
  }
})
