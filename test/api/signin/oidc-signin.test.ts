// Sign-in for people through a real OpenID provider (the local oidc-provider, configured as production
// configures any issuer): authorization code with PKCE, ID token verified against the provider's JWKS.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { browse, CookieJar, DEV_USER, jarFetch, signIn, startSignInService, type SignInService } from '../../harness/signin.ts'

let svc: SignInService

beforeAll(async () => {
  svc = await startSignInService('production')
})
afterAll(() => svc?.stop())

describe('OpenID Connect sign-in', () => {
  test('login redirects to the provider with code, PKCE S256, state and nonce', async () => {
    const jar = new CookieJar()
    const res = await jarFetch(jar, `${svc.baseUrl}/auth/login`)
    expect(res.status).toBe(302)
    const to = new URL(res.headers.get('location')!)
    expect(to.origin).toBe(svc.idp.issuer)
    expect(to.searchParams.get('response_type')).toBe('code')
    expect(to.searchParams.get('code_challenge_method')).toBe('S256')
    expect(to.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(to.searchParams.get('state')!.length).toBeGreaterThan(20)
    expect(to.searchParams.get('nonce')!.length).toBeGreaterThan(20)
    expect(to.searchParams.get('redirect_uri')).toBe(`${svc.baseUrl}/auth/callback`)
  })

  test('the development user signs in and gets an HttpOnly, Secure, SameSite=Lax session cookie', async () => {
    const jar = await signIn(svc)
    const line = jar.seen.find((l) => l.startsWith('aa_session='))!
    expect(line).toContain('HttpOnly')
    expect(line).toContain('Secure')
    expect(line).toContain('SameSite=Lax')
    const page = await jarFetch(jar, `${svc.baseUrl}/dashboard`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(DEV_USER)
  })

  test('a new subject gets a user linked to a new free account; signing in again reuses it', async () => {
    await signIn(svc)
    await signIn(svc)
    const rows = await svc.running.services.db.sql<{ account_id: string; plan: string; email: string }[]>`
      SELECT u.account_id, a.plan, u.email FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.issuer = ${svc.idp.issuer}`
    expect(rows.length).toBe(1)
    expect(rows[0]!.plan).toBe('free')
    expect(rows[0]!.email).toBe(DEV_USER)
  })

  test('the session cookie is stored only as a SHA-256 hash', async () => {
    const jar = await signIn(svc)
    const cookie = jar.get('127.0.0.1', 'aa_session')!
    const rows = await svc.running.services.db.sql<{ token_hash: string }[]>`SELECT token_hash FROM user_sessions`
    expect(rows.some((r) => r.token_hash === new Bun.CryptoHasher('sha256').update(cookie).digest('hex'))).toBe(true)
    expect(rows.some((r) => r.token_hash === cookie)).toBe(false)
  })

  test('a wrong password at the provider signs nobody in', async () => {
    const jar = new CookieJar()
    const { res } = await browse(jar, `${svc.baseUrl}/auth/login`, { password: 'wrong' })
    expect(await res.text()).toContain('Wrong email or password')
    expect(jar.get('127.0.0.1', 'aa_session')).toBeUndefined()
  })

  test('a callback whose state was not started in this browser is refused (login CSRF)', async () => {
    const attacker = new CookieJar()
    const start = await jarFetch(attacker, `${svc.baseUrl}/auth/login`)
    const state = new URL(start.headers.get('location')!).searchParams.get('state')
    const victim = new CookieJar()
    const res = await jarFetch(victim, `${svc.baseUrl}/auth/callback?code=abc&state=${state}`)
    expect(res.status).toBe(400)
    expect(victim.get('127.0.0.1', 'aa_session')).toBeUndefined()
  })

  test('a callback with a forged code is refused by the provider and opens no session', async () => {
    const jar = new CookieJar()
    const start = await jarFetch(jar, `${svc.baseUrl}/auth/login`)
    const state = new URL(start.headers.get('location')!).searchParams.get('state')
    const res = await jarFetch(jar, `${svc.baseUrl}/auth/callback?code=forged&state=${state}&iss=${encodeURIComponent(svc.idp.issuer)}`)
    expect(res.status).toBe(400)
    expect(jar.get('127.0.0.1', 'aa_session')).toBeUndefined()
  })

  test('a callback naming another issuer (RFC 9207) is refused', async () => {
    const jar = new CookieJar()
    const start = await jarFetch(jar, `${svc.baseUrl}/auth/login`)
    const state = new URL(start.headers.get('location')!).searchParams.get('state')
    const res = await jarFetch(jar, `${svc.baseUrl}/auth/callback?code=x&state=${state}&iss=https://evil.example`)
    expect(res.status).toBe(400)
  })

  test('return_to never leaves the site (no open redirect)', async () => {
    for (const bad of ['https://evil.example/', '//evil.example/', '/\\evil.example']) {
      const jar = new CookieJar()
      const { url } = await browse(jar, `${svc.baseUrl}/auth/login?return_to=${encodeURIComponent(bad)}`, {
        stopAt: (u) => !u.startsWith(svc.idp.issuer) && !u.startsWith(`${svc.baseUrl}/auth/`),
      })
      expect(url).toBe(`${svc.baseUrl}/dashboard`)
    }
  })

  test('logout needs the anti-CSRF token and then ends the session', async () => {
    const jar = await signIn(svc)
    const page = await (await jarFetch(jar, `${svc.baseUrl}/dashboard`)).text()
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!
    const forged = await jarFetch(jar, `${svc.baseUrl}/auth/logout`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${csrf}`,
    })
    expect(forged.status).toBe(403)
    const res = await jarFetch(jar, `${svc.baseUrl}/auth/logout`, {
      method: 'POST',
      headers: { origin: svc.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${csrf}`,
    })
    expect(res.status).toBe(303)
    expect((await jarFetch(jar, `${svc.baseUrl}/dashboard`)).status).toBe(302)
  })
})
