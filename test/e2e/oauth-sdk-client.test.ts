// A real MCP client connects with OAuth alone: the official SDK's OAuth support goes discovery ->
// dynamic registration -> authorization (Chromium signs in at the real local OpenID provider and
// approves the consent page) -> token -> tools/call, against the real service.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS } from '../../crawler/browser.ts'
import { payload } from '../harness/client.ts'
import { DEV_PASSWORD, DEV_USER, startSignInService, type SignInService } from '../harness/signin.ts'

let svc: SignInService
let browser: Browser
let callbackServer: ReturnType<typeof Bun.serve>
let codeArrived: (q: URLSearchParams) => void
const codes: Promise<URLSearchParams> = new Promise((r) => (codeArrived = r))

beforeAll(async () => {
  svc = await startSignInService('production')
  callbackServer = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      if (url.pathname !== '/callback') return new Response('not here', { status: 404 })
      codeArrived(url.searchParams)
      return new Response('Connected. You can close this tab.')
    },
  })
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, timeout: 30_000 })
})
afterAll(async () => {
  await browser?.close()
  callbackServer?.stop(true)
  await svc?.stop()
})

/** What a desktop MCP client keeps: its registration, its verifier and its tokens, in memory here. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  authorizationUrl: URL | null = null
  constructor(private redirect: string) {}
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK Test Agent',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(i: OAuthClientInformationMixed) {
    this.info = i
  }
  tokens() {
    return this.saved
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(v: string) {
    this.verifier = v
  }
  codeVerifier() {
    return this.verifier
  }
}

test('the MCP SDK client connects through discovery, registration, sign-in, consent and token, then calls a tool', async () => {
  const provider = new MemoryProvider(`http://127.0.0.1:${callbackServer.port}/callback`)
  const client = new Client({ name: 'sdk-oauth-test', version: '1.0.0' })
  const first = new StreamableHTTPClientTransport(new URL(`${svc.baseUrl}/api/mcp`), { authProvider: provider })
  const refused = await client.connect(first).then(
    () => null,
    (e) => e,
  )
  expect(refused).toBeInstanceOf(UnauthorizedError)
  expect(provider.info?.client_id).toMatch(/^mcl_/)
  const authUrl = provider.authorizationUrl!
  expect(authUrl.origin + authUrl.pathname).toBe(`${svc.baseUrl}/oauth/authorize`)
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256')

  // The person: signs in at the identity provider, then approves the consent page.
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(authUrl.toString())
  await page.waitForURL((u) => u.toString().startsWith(svc.idp.issuer))
  await page.fill('#login', DEV_USER)
  await page.fill('#password', DEV_PASSWORD)
  await page.click('#sign-in')
  await page.waitForSelector('#consent')
  expect(await page.textContent('#client-name')).toBe('SDK Test Agent')
  expect(await page.textContent('#redirect-host')).toBe(`127.0.0.1:${callbackServer.port}`)
  await page.click('#approve')
  const q = await codes
  await context.close()
  expect(q.get('iss')).toBe(svc.baseUrl)
  expect(q.get('code')).toMatch(/^mcc_/)

  await first.finishAuth(q.get('code')!)
  expect(provider.saved?.access_token).toMatch(/^mca_/)
  expect(provider.saved?.token_type).toBe('Bearer')

  const second = new StreamableHTTPClientTransport(new URL(`${svc.baseUrl}/api/mcp`), { authProvider: provider })
  await client.connect(second)
  const tools = await client.listTools()
  expect(tools.tools.length).toBe(18)
  const account = payload(await client.callTool({ name: 'get_account', arguments: {} }))
  expect(account.plan).toBe('free')
  await client.close()

  // Last use is recorded off the request path: read it until it lands (bounded).
  let row: { client_name: string; last_used_at: Date | null } | undefined
  for (let i = 0; i < 40; i++) {
    ;[row] = await svc.running.services.db.sql<{ client_name: string; last_used_at: Date | null }[]>`
      SELECT client_name, last_used_at FROM oauth_tokens WHERE client_id = ${provider.info!.client_id}`
    if (row?.last_used_at) break
    await Bun.sleep(50)
  }
  expect(row!.client_name).toBe('SDK Test Agent')
  expect(row!.last_used_at).not.toBeNull()
}, 60_000)
