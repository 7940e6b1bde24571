// What a person sees in a real browser (Chromium): the consent page names the agent and where it goes
// and cannot be framed; the settings page creates a key shown once with a copy button and revokes an
// agent; the apps page follows a running scan live.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { createAudit } from '../../shared/db/audits.ts'
import { completeScan, createScan } from '../../shared/db/scans.ts'
import { initializeBody, MCP_HEADERS } from '../harness/client.ts'
import { authorizeUrl, exchangeCode, obtainCode, pkcePair, registerClient } from '../harness/oauth.ts'
import { browserSignedIn, type CookieJar, signIn, startSignInService, type SignInService } from '../harness/signin.ts'

let svc: SignInService
let browser: Browser
let context: BrowserContext
let page: Page
let framer: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  svc = await startSignInService('production', { TRUSTED_PROXY_HOPS: '1' })
  framer = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new Response(`<!doctype html><iframe id="f" src="${new URL(req.url).searchParams.get('src')}" width="800" height="600"></iframe>`, {
        headers: { 'content-type': 'text/html' },
      }),
  })
  // Sign in once, as a person: the provider's login form, then back to the dashboard.
  ;({ browser, context, page } = await browserSignedIn(svc))
}, 30_000)
afterAll(async () => {
  await browser?.close()
  framer?.stop(true)
  await svc?.stop()
})

const mcpStatus = async (token: string) =>
  (
    await fetch(`${svc.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: JSON.stringify(initializeBody()),
    })
  ).status

describe('consent page', () => {
  test('names the agent and the host it will return to, and approving sends the code there', async () => {
    const redirect = 'https://agent.example/oauth/callback'
    const { body: client } = await registerClient(svc, { client_name: 'Claude Desktop', redirect_uris: [redirect] })
    const url = authorizeUrl(svc, {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirect,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      state: 's1',
    })
    await page.goto(url)
    await page.waitForSelector('#consent')
    const heading = await page.textContent('h1')
    expect(heading).toContain('Allow Claude Desktop to use App Audit?')
    expect(await page.textContent('#redirect-host')).toBe('agent.example')
    expect(await page.isVisible('#approve')).toBe(true)
    expect(await page.isVisible('#deny')).toBe(true)
    await page.screenshot({ path: '/tmp/appaudit-consent.png' })
    const [request] = await Promise.all([page.waitForRequest((r) => r.url().startsWith(redirect)), page.click('#approve')])
    const to = new URL(request.url())
    expect(to.searchParams.get('code')).toMatch(/^mcc_/)
    expect(to.searchParams.get('state')).toBe('s1')
  })

  test('cannot be shown inside a frame of another site', async () => {
    const { body: client } = await registerClient(svc, { client_name: 'Framed', redirect_uris: ['http://127.0.0.1/cb'] })
    const url = authorizeUrl(svc, {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1/cb',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    })
    const framing = await context.newPage()
    await framing.goto(`http://127.0.0.1:${framer.port}/?src=${encodeURIComponent(url)}`)
    await framing.waitForTimeout(1_000)
    const frame = framing.frames().find((f) => f !== framing.mainFrame())!
    expect(frame.url()).toStartWith('chrome-error:')
    const consentInside = await frame.$('#consent').catch(() => null)
    expect(consentInside).toBeNull()
    await framing.close()
  })
})

describe('settings page', () => {
  test('creates an API key shown once with a working copy button', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.baseUrl })
    await page.goto(`${svc.baseUrl}/dashboard/settings`)
    expect(await page.isVisible('#new-key')).toBe(false)
    await page.click('#create-key')
    await page.waitForSelector('#new-key:not([hidden])')
    const key = (await page.textContent('#new-key-value'))!
    expect(key).toMatch(/^act_/)
    expect(await page.textContent('#new-key')).toContain('shown only once')
    await page.click('#copy-key')
    await page.waitForSelector('#copied:has-text("Copied")')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key)
    expect(await mcpStatus(key)).toBe(200)
    await page.reload()
    expect(await page.content()).not.toContain(key)
  })

  test('lists an OAuth agent by name and revokes it, after which its token fails', async () => {
    // The agent's token, obtained over HTTP by the same person (its own cookie jar).
    const jar: CookieJar = await signIn(svc)
    const c = await obtainCode(svc, jar, { clientName: 'Cursor' })
    const { body } = await exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
    })
    expect(await mcpStatus(body.access_token)).toBe(200)
    await page.goto(`${svc.baseUrl}/dashboard/settings`)
    const row = page.locator(`tr[data-agent="${c.clientId}"]`)
    expect(await row.locator('.agent-name').textContent()).toBe('Cursor')
    expect(await row.textContent()).toMatch(/UTC/)
    await page.screenshot({ path: '/tmp/appaudit-settings.png', fullPage: true })
    page.once('dialog', (d) => void d.accept())
    await row.locator('.revoke-agent').click()
    await row.waitFor({ state: 'detached' })
    expect(await mcpStatus(body.access_token)).toBe(401)
  })
})

describe('apps page', () => {
  test('shows a running scan and follows it to completion without a reload', async () => {
    const sql = svc.running.services.db.sql
    const [u] = await sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
    const scan = await createScan(sql, u!.account_id, 'https://shop.example/')
    await page.goto(`${svc.baseUrl}/dashboard`)
    const row = page.locator(`tr[data-scan="${scan.id}"]`)
    expect(await row.locator('.status').textContent()).toBe('queued')
    await completeScan(sql, scan.id, { score: 87, grade: 'B+' })
    await page.waitForFunction((id) => document.querySelector(`tr[data-scan="${id}"] .status`)?.textContent === 'completed', scan.id, {
      timeout: 10_000,
    })
    expect(await row.locator('.score').textContent()).toBe('87 B+')
  })

  test('shows an audit with its page progress, updated while it runs', async () => {
    const sql = svc.running.services.db.sql
    const [u] = await sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
    const audit = await createAudit(sql, u!.account_id, 'https://shop.example/', { maxPages: 10, maxDepth: 2, maxDurationSeconds: 120 })
    await page.goto(`${svc.baseUrl}/dashboard`)
    const row = page.locator(`tr[data-audit="${audit.id}"]`)
    expect(await row.locator('.pages').textContent()).toBe('0 of 0')
    await sql`UPDATE audits SET status = 'running', pages_discovered = 7, pages_scanned = 3 WHERE id = ${audit.id}`
    await page.waitForFunction((id) => document.querySelector(`tr[data-audit="${id}"] .pages`)?.textContent === '3 of 7', audit.id, {
      timeout: 10_000,
    })
    expect(await row.locator('.status').textContent()).toBe('running')
    await page.screenshot({ path: '/tmp/appaudit-apps.png', fullPage: true })
  })
})
