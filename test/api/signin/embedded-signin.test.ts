// The embedded default signs people in with no configuration: boot starts a real local OpenID provider
// with a development user, and the whole OAuth flow for agents works on top of it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { initializeBody, MCP_HEADERS } from '../../harness/client.ts'
import { exchangeCode, obtainCode } from '../../harness/oauth.ts'
import { startService, type TestService } from '../../harness/service.ts'
import { browse, CookieJar, DEV_USER, type SignInService } from '../../harness/signin.ts'
import { machineDeadline } from '../../harness/machine.ts'

let svc: TestService
let baseUrl: string

beforeAll(async () => {
  // No OIDC_ISSUER and no DATABASE_URL: the embedded default, which starts its own provider. On port 0, its
  // URL (the provider's callback among its links) is the one of the port it got.
  svc = await startService('embedded', { ROLE: 'api', LOCAL_IDP_USER: DEV_USER })
  baseUrl = svc.running.services.config.baseUrl
  expect(baseUrl).toBe(svc.url)
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

test('a production deployment without OIDC_ISSUER starts no provider, and says what to do instead of offering to try again', async () => {
  const prod = await startService('production', { ROLE: 'api' })
  try {
    expect(prod.running.localSignIn).toBeNull()
    const host = new URL(prod.running.services.config.baseUrl).host
    const res = await fetch(`${prod.url}/auth/login`, { redirect: 'manual', headers: { host } })
    expect(res.status).toBe(503)
    const page = await res.text()
    expect(page).toContain('No sign-in on this server')
    expect(page).toContain('get_audit')
    expect(page).toContain('OIDC_ISSUER')
    expect(page).not.toContain('Try again')
    // The live viewer's endings name the MCP call that reads the report, not a dashboard link that leads here.
    const viewer = await (await fetch(`${prod.url}/viewer/aud_abc123`, { headers: { host } })).text()
    expect(viewer).not.toContain('/dashboard/audits/')
    expect(viewer).toContain('get_audit {"auditId": "aud_abc123"}')
  } finally {
    await prod.stop()
  }
})

test('the embedded viewer links the report in the dashboard', async () => {
  const viewer = await (await fetch(`${baseUrl}/viewer/aud_abc123`)).text()
  expect(viewer).toContain('/dashboard/audits/aud_abc123')
})
