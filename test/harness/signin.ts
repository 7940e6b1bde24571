// Sign-in for tests: the service on port 0 (its URL is the one of the port it got), pointed by configuration at a
// real local OpenID provider (oidc-provider) exactly as production points at its own, plus a small
// cookie-keeping client that signs in through that provider over plain HTTP.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { startLocalIdp, type LocalIdp } from '../../api/signin/local-idp.ts'
import { createSession, upsertUser } from '../../shared/db/users.ts'
import { startService, type Mode, type TestService } from './service.ts'

export const DEV_USER = 'dev@example.test'
export const DEV_PASSWORD = 'correct horse battery staple'

export interface SignInService extends TestService {
  idp: LocalIdp
  /** The service's own URL (its config.baseUrl): http://127.0.0.1:PORT, the port it got. */
  baseUrl: string
  /** A session of a new user with its own account, made in the database (for tests needing several). */
  extraSession(name: string): Promise<{ cookie: string; csrfToken: string; accountId: string }>
}

export async function startSignInService(mode: Mode, env: Record<string, string> = {}): Promise<SignInService> {
  // The provider listens first (the service is pointed at its issuer); the service then starts on port 0
  // and the provider learns its callback from the URL the service got.
  let callbackOf!: (uris: string[]) => void
  const idp = await startLocalIdp({
    port: 0,
    user: DEV_USER,
    password: DEV_PASSWORD,
    clientId: 'appaudit-test',
    clientSecret: 'test-client-secret',
    redirectUris: new Promise<string[]>((resolve) => (callbackOf = resolve)),
  })
  let svc: TestService
  try {
    svc = await startService(mode, {
      ROLE: 'api',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: 'appaudit-test',
      OIDC_CLIENT_SECRET: 'test-client-secret',
      ...env,
    })
  } catch (e) {
    callbackOf([])
    await idp.stop()
    throw e
  }
  const baseUrl = svc.running.services.config.baseUrl
  callbackOf([`${baseUrl}/auth/callback`])
  await idp.ready
  const sql = svc.running.services.db.sql
  return {
    ...svc,
    idp,
    baseUrl,
    async extraSession(name) {
      const user = await upsertUser(sql, { issuer: 'https://other-idp.test', subject: name, email: `${name}@example.test`, name })
      const { cookie, session } = await createSession(sql, user.id, 3600)
      return { cookie, csrfToken: session.csrfToken, accountId: user.accountId }
    },
    async stop() {
      await svc.stop()
      await idp.stop()
    },
  }
}

/** Cookies per host (not port, as browsers keep them), with the attributes that matter here. */
export class CookieJar {
  private cookies = new Map<string, Map<string, string>>()
  /** Every Set-Cookie line seen, for attribute checks. */
  readonly seen: string[] = []

  store(url: string, res: Response) {
    const host = new URL(url).hostname
    for (const line of res.headers.getSetCookie()) {
      this.seen.push(line)
      const [pair, ...attrs] = line.split(';')
      const i = pair!.indexOf('=')
      const name = pair!.slice(0, i).trim()
      const value = pair!.slice(i + 1).trim()
      const jar = this.cookies.get(host) ?? new Map()
      this.cookies.set(host, jar)
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '') jar.delete(name)
      else jar.set(name, value)
    }
  }

  header(url: string): string {
    const jar = this.cookies.get(new URL(url).hostname)
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : ''
  }

  get(host: string, name: string): string | undefined {
    return this.cookies.get(host)?.get(name)
  }
}

/** One request with the jar's cookies; redirects are not followed. */
export async function jarFetch(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  const cookie = jar.header(url)
  if (cookie) headers.set('cookie', cookie)
  const res = await fetch(url, { ...init, headers, redirect: 'manual' })
  jar.store(url, res)
  return res
}

/**
 * Follows redirects from `start` the way a browser would, signing in at the local provider's login
 * form when it appears. Returns the first URL outside the service and provider, or the final service
 * URL (with its response).
 */
export async function browse(
  jar: CookieJar,
  start: string,
  opts: { stopAt?: (url: string) => boolean; password?: string } = {},
): Promise<{ url: string; res: Response }> {
  let url = start
  for (let step = 0; step < 25; step++) {
    if (opts.stopAt?.(url)) return { url, res: new Response(null) }
    const res = await jarFetch(jar, url)
    const location = res.headers.get('location')
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString()
      continue
    }
    const body = res.status === 200 && (res.headers.get('content-type') ?? '').includes('text/html') ? await res.clone().text() : ''
    const form = /<form method="post" action="(\/interaction\/[^"]+\/login)"/.exec(body)
    if (form) {
      const post = await jarFetch(jar, new URL(form[1]!, url).toString(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ login: DEV_USER, password: opts.password ?? DEV_PASSWORD }),
      })
      const next = post.headers.get('location')
      if (!next) return { url, res: post }
      url = new URL(next, url).toString()
      continue
    }
    return { url, res }
  }
  throw new Error(`too many redirects from ${start}`)
}

/** Signs the development user in through the real provider; returns the jar holding the session. */
export async function signIn(svc: SignInService, returnTo = '/dashboard'): Promise<CookieJar> {
  const jar = new CookieJar()
  const { url } = await browse(jar, `${svc.baseUrl}/auth/login?return_to=${encodeURIComponent(returnTo)}`, {
    stopAt: (u) => u.startsWith(svc.baseUrl) && !u.startsWith(`${svc.baseUrl}/auth/`),
  })
  if (!url.startsWith(svc.baseUrl + returnTo)) throw new Error(`sign-in ended at ${url}`)
  return jar
}

/**
 * A real Chromium with a person signed in to the dashboard: the provider's login form as the development
 * user, then back on /dashboard. The caller closes the browser.
 */
export async function browserSignedIn(svc: SignInService): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
  const page = await context.newPage()
  await page.goto(`${svc.baseUrl}/dashboard`)
  await page.fill('#login', DEV_USER)
  await page.fill('#password', DEV_PASSWORD)
  await page.click('#sign-in')
  await page.waitForURL(`${svc.baseUrl}/dashboard`)
  return { browser, context, page }
}
