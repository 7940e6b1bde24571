// An authenticated crawl's credentials in the browser: a login form filled once before the crawl (its
// cookies and storage then open the lanes' context), cookies put in the lanes' jar for the audited
// host, and headers added to the requests that go to the audited origin only, never to a third party.
// Nothing here logs or returns a credential: errors are scrubbed by the caller's scrubber.
import type { BrowserContext } from 'playwright-core'
import type { AuditAuth, LoginForm } from '../../shared/protocol/audit-auth.ts'
import { AppError, errorMessage } from '../../shared/errors.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import type { BrowserPool } from '../browser.ts'
import { openLaneContext } from './page.ts'

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>

/** How long one field or the submit button may take to appear. */
const FIELD_TIMEOUT_MS = 5_000
/** One request of the audited origin fetched with the credentials' headers. */
const AUTH_FETCH_TIMEOUT_MS = 30_000
/** After the submit, how long the page may keep the network busy before it is read. */
const SETTLE_MS = 3_000

/**
 * Fills and submits the login form in a context of its own, and returns that context's cookies and storage.
 * login_failed (the target's fault: nothing was audited, so the audit is refunded) when a field is missing or
 * the page is still the login form after the submit.
 */
export async function logIn(
  pool: BrowserPool,
  proxy: EgressProxy,
  login: LoginForm,
  navTimeoutMs: number,
  scrub: (s: string) => string,
): Promise<StorageState> {
  const context = await openLaneContext(pool, proxy)
  const firstLine = (e: unknown) => scrub((errorMessage(e) ?? String(e)).split('\n')[0] ?? '')
  try {
    const page = await context.newPage()
    const res = await page.goto(login.url, { waitUntil: 'domcontentloaded', timeout: navTimeoutMs }).catch((e) => {
      throw new AppError('login_failed', `The login page ${login.url} did not load: ${firstLine(e)}`)
    })
    if (res && res.status() >= 400) throw new AppError('login_failed', `The login page ${login.url} answered HTTP ${res.status()}.`)
    for (const selector of Object.keys(login.fields)) {
      await page.fill(selector, login.fields[selector]!, { timeout: FIELD_TIMEOUT_MS }).catch(() => {
        throw new AppError('login_failed', `The login page has no field ${selector} that can be typed into.`)
      })
    }
    const before = page.url()
    await page.click(login.submit!, { timeout: FIELD_TIMEOUT_MS }).catch(() => {
      throw new AppError('login_failed', `The login page has no button ${login.submit} to click.`)
    })
    await page.waitForURL((u) => u.href !== before, { timeout: navTimeoutMs, waitUntil: 'load' }).catch(() => {})
    await page.waitForLoadState('networkidle', { timeout: SETTLE_MS }).catch(() => {})
    const onLoginPage = new URL(page.url()).pathname === new URL(login.url).pathname
    if (onLoginPage && (await page.locator('input[type=password]').count()) > 0) {
      throw new AppError(
        'login_failed',
        'After the form was submitted the page was still the login form: check the fields, the values and the submit button.',
      )
    }
    return await context.storageState()
  } finally {
    await context.close().catch(() => {})
  }
}

/** Puts the credentials into a lane's new context: its cookies for the audited host, its headers for the audited origin only. */
export async function applyAuth(context: BrowserContext, auth: AuditAuth, origin: string): Promise<void> {
  if (auth.cookies?.length) {
    const secure = origin.startsWith('https:')
    await context.addCookies(
      auth.cookies.map((c) =>
        c.domain
          ? { name: c.name, value: c.value, domain: `.${c.domain}`, path: '/', secure }
          : { name: c.name, value: c.value, url: `${origin}/`, secure },
      ),
    )
  }
  const headers = auth.headers ?? {}
  const names = new Set(Object.keys(headers).map((h) => h.toLowerCase()))
  if (names.size) {
    // Added to requests for the audited origin only, and never carried into a redirect: Chromium keeps
    // headers set on a request for the redirects it follows, so such a request is fetched here without
    // following redirects (through the context's proxy, the egress guard) and its answer handed to the page.
    // The browser then follows a redirect itself, as a new request that comes back through this route:
    // to another origin (a sign-in service, a CDN, an open redirect) it goes without them.
    await context.route('**/*', async (route) => {
      const request = route.request()
      const sent = request.headers()
      if (new URL(request.url()).origin !== origin) {
        if (!Object.keys(sent).some((h) => names.has(h.toLowerCase()))) return route.continue()
        return route.continue({ headers: Object.fromEntries(Object.entries(sent).filter(([h]) => !names.has(h.toLowerCase()))) })
      }
      try {
        const response = await route.fetch({ headers: { ...sent, ...headers }, maxRedirects: 0, timeout: AUTH_FETCH_TIMEOUT_MS })
        await route.fulfill({ response })
      } catch {
        await route.abort('failed').catch(() => {})
      }
    })
  }
}
