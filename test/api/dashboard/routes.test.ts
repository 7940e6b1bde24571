// The dashboard routes and the settings actions: session cookie only (401 to any bearer
// token), one account never sees another's data (404), no CORS, no framing, CSRF-protected POSTs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAudit } from '../../../shared/db/audits.ts'
import { createScan } from '../../../shared/db/scans.ts'
import { initializeBody, MCP_HEADERS } from '../../harness/client.ts'
import { exchangeCode, obtainCode } from '../../harness/oauth.ts'
import { jarFetch, signIn, startSignInService, type CookieJar, type SignInService } from '../../harness/signin.ts'

let svc: SignInService
let jar: CookieJar
let accountId: string
let csrf: string

beforeAll(async () => {
  svc = await startSignInService('production', { TRUSTED_PROXY_HOPS: '1' })
  jar = await signIn(svc)
  const page = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/settings`)).text()
  csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!
  const [row] = await svc.running.services.db.sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
  accountId = row!.account_id
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

const act = (path: string, headers: Record<string, string> = {}) =>
  jarFetch(jar, `${svc.baseUrl}${path}`, { method: 'POST', headers: { origin: svc.baseUrl, 'x-csrf-token': csrf, ...headers } })

describe('dashboard routes', () => {
  test("GET /api/scans/{id} shows the signed-in account's scan", async () => {
    const scan = await createScan(svc.running.services.db.sql, accountId, 'https://app.example/')
    const res = await jarFetch(jar, `${svc.baseUrl}/api/scans/${scan.id}`)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.scanId).toBe(scan.id)
    expect(body.status).toBe('queued')
    expect(res.headers.get('cache-control')).toContain('no-store')
  })

  test("one account reading another account's scan gets 404, as for a scan that does not exist", async () => {
    const other = await svc.extraSession('mallory')
    const theirs = await createScan(svc.running.services.db.sql, other.accountId, 'https://mallory.example/')
    expect((await jarFetch(jar, `${svc.baseUrl}/api/scans/${theirs.id}`)).status).toBe(404)
    expect((await jarFetch(jar, `${svc.baseUrl}/api/scans/scn_doesnotexist000000000`)).status).toBe(404)
    const own = await fetch(`${svc.baseUrl}/api/scans/${theirs.id}`, { headers: { cookie: `aa_session=${other.cookie}` } })
    expect(own.status).toBe(200)
  })

  test("GET /api/audits/{id} shows the account's audit with its progress; another account's is 404", async () => {
    const sql = svc.running.services.db.sql
    const options = { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 }
    const mine = await createAudit(sql, accountId, 'https://app.example/', options)
    const res = await jarFetch(jar, `${svc.baseUrl}/api/audits/${mine.id}`)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.auditId).toBe(mine.id)
    expect(body.status).toBe('queued')
    expect(body.progress.pagesScanned).toBe(0)
    const other = await svc.extraSession('trudy')
    const theirs = await createAudit(sql, other.accountId, 'https://trudy.example/', options)
    expect((await jarFetch(jar, `${svc.baseUrl}/api/audits/${theirs.id}`)).status).toBe(404)
  })

  test.each(['/api/scans/scn_x', '/api/audits/aud_x', '/api/patches/pat_x', '/api/directory-runs/dir_x'])(
    '%s refuses any bearer token with 401, even a valid one next to a valid session',
    async (path) => {
      const key = await svc.key()
      for (const auth of [`Bearer ${key}`, `Bearer mca_${'a'.repeat(43)}`, 'Bearer anything']) {
        const res = await jarFetch(jar, `${svc.baseUrl}${path}`, { headers: { authorization: auth } })
        expect(res.status).toBe(401)
      }
    },
  )

  test('an mca_ token is refused on a dashboard route too', async () => {
    const c = await obtainCode(svc, jar)
    const { body } = await exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
    })
    const scan = await createScan(svc.running.services.db.sql, accountId, 'https://app.example/two')
    const res = await fetch(`${svc.baseUrl}/api/scans/${scan.id}`, { headers: { authorization: `Bearer ${body.access_token}` } })
    expect(res.status).toBe(401)
  })

  test('without a session the dashboard routes answer 401', async () => {
    for (const path of ['/api/scans/scn_x', '/api/audits/aud_x', '/api/patches/pat_x', '/api/directory-runs/dir_x']) {
      expect((await fetch(`${svc.baseUrl}${path}`)).status).toBe(401)
    }
  })

  test('patches and directory runs answer 404 for any id once signed in', async () => {
    expect((await jarFetch(jar, `${svc.baseUrl}/api/patches/pat_anything`)).status).toBe(404)
    expect((await jarFetch(jar, `${svc.baseUrl}/api/directory-runs/dir_anything`)).status).toBe(404)
  })

  test('dashboard routes and pages never send CORS headers', async () => {
    const scan = await createScan(svc.running.services.db.sql, accountId, 'https://app.example/cors')
    for (const path of [`/api/scans/${scan.id}`, '/dashboard', '/dashboard/settings']) {
      const res = await jarFetch(jar, `${svc.baseUrl}${path}`, { headers: { origin: 'https://evil.example' } })
      expect(res.status).toBe(200)
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    }
    const pre = await fetch(`${svc.baseUrl}/api/scans/${scan.id}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    })
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('dashboard pages cannot be framed and send the signed-out to sign in', async () => {
    const res = await jarFetch(jar, `${svc.baseUrl}/dashboard`)
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const out = await fetch(`${svc.baseUrl}/dashboard/settings`, { redirect: 'manual' })
    expect(out.status).toBe(302)
    expect(out.headers.get('location')).toBe('/auth/login?return_to=%2Fdashboard%2Fsettings')
  })
})

describe('settings: Agents and MCP', () => {
  test('creates an API key shown once, which works on /api/mcp and is listed by its prefix only', async () => {
    const res = await act('/dashboard/api/keys')
    expect(res.status).toBe(201)
    const key = await res.json()
    expect(key.plaintext).toMatch(/^act_/)
    expect(await mcpStatus(key.plaintext)).toBe(200)
    const page = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/settings`)).text()
    expect(page).toContain(key.displayPrefix)
    expect(page).not.toContain(key.plaintext)
  })

  test('regenerating a key replaces it: the old one stops at once, the new one works', async () => {
    const old = await (await act('/dashboard/api/keys')).json()
    expect(await mcpStatus(old.plaintext)).toBe(200)
    const res = await act(`/dashboard/api/keys/${old.id}/regenerate`)
    expect(res.status).toBe(201)
    const fresh = await res.json()
    expect(await mcpStatus(old.plaintext)).toBe(401)
    expect(await mcpStatus(fresh.plaintext)).toBe(200)
  })

  test('lists OAuth agents by client name with created and last-used times', async () => {
    const c = await obtainCode(svc, jar, { clientName: 'Windsurf Agent' })
    const { body } = await exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
    })
    expect(await mcpStatus(body.access_token)).toBe(200)
    // Last use is recorded off the request path: wait for it (bounded).
    for (let i = 0; i < 40; i++) {
      const [t] = await svc.running.services.db.sql`SELECT 1 FROM oauth_tokens WHERE client_id = ${c.clientId} AND last_used_at IS NOT NULL`
      if (t) break
      await Bun.sleep(50)
    }
    const page = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/settings`)).text()
    const row = new RegExp(`<tr data-agent="${c.clientId}">([\\s\\S]*?)</tr>`).exec(page)![1]!
    expect(row).toContain('Windsurf Agent')
    expect(row).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC[\s\S]*\d{4}-\d\d-\d\d \d\d:\d\d UTC/)
  })

  test("another account cannot revoke this account's agent or key (404)", async () => {
    const c = await obtainCode(svc, jar, { clientName: 'Mine' })
    const { body } = await exchangeCode(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
    })
    const other = await svc.extraSession('eve')
    const res = await fetch(`${svc.baseUrl}/dashboard/api/agents/${c.clientId}/revoke`, {
      method: 'POST',
      headers: { cookie: `aa_session=${other.cookie}`, origin: svc.baseUrl, 'x-csrf-token': other.csrfToken },
    })
    expect(res.status).toBe(404)
    expect(await mcpStatus(body.access_token)).toBe(200)
  })

  test('settings actions refuse a foreign Origin, a missing token and a bearer token', async () => {
    expect((await act('/dashboard/api/keys', { origin: 'https://evil.example' })).status).toBe(403)
    expect((await act('/dashboard/api/keys', { 'x-csrf-token': 'wrong' })).status).toBe(403)
    const noOrigin = await jarFetch(jar, `${svc.baseUrl}/dashboard/api/keys`, { method: 'POST', headers: { 'x-csrf-token': csrf } })
    expect(noOrigin.status).toBe(403)
    expect((await act('/dashboard/api/keys', { authorization: `Bearer ${await svc.key()}` })).status).toBe(401)
  })
})
