// audit_authenticated end to end: whole-site audits of an app behind a login (a form, a session cookie, a
// bearer header), through the MCP SDK client, the real service, PostgreSQL, Redis and Chromium. A unique
// secret is planted in every credential and searched for afterwards in the service's logs, every table of
// the database and every answer; the credentials must be sealed while the audit runs and gone once it ends,
// never reach a third-party origin, never follow a logout link, and a lost session must be reported.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { LOCAL_SECRETS_KEY_FILE, localSecretsKey } from '../../server/local-secrets.ts'
import { connectClient, errorOf, ok } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { captureLogLines } from '../harness/logs.ts'
import { until } from '../harness/wait.ts'
import { startLoginSite, type LoginSite } from '../fixtures/login-site.ts'
import { shareReport } from '../../shared/db/shares.ts'
import { machineDeadline } from '../harness/machine.ts'

/** In every credential of this file: it must appear nowhere the service writes. */
const SECRET = `plant${randomBytes(12).toString('hex')}`
const SECRETS_KEY = randomBytes(32).toString('base64')

let logs: ReturnType<typeof captureLogLines>

let svc: TestService
const sites: LoginSite[] = []
const clients: Client[] = []
/** Every answer of every call, to search for the secret. */
const answers: string[] = []

beforeAll(async () => {
  logs = captureLogLines()
  svc = await startService('production', { ROLE: 'all', SECRETS_KEY, LOG_LEVEL: 'debug', NAV_TIMEOUT_MS: '20000' })
}, machineDeadline(120_000))

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {})
  await svc?.stop()
  for (const s of sites) await s.stop()
  logs?.restore()
}, 60_000)

function site(opts: Parameters<typeof startLoginSite>[0] = {}) {
  const s = startLoginSite({ secret: SECRET, ...opts })
  sites.push(s)
  return s
}

async function scaleAccount(plan: 'free' | 'launch' | 'scale' = 'scale') {
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, plan)
  const c = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
  clients.push(c)
  return { accountId: account.id, c }
}

async function call(c: Client, name: string, args: Record<string, unknown>) {
  const body = await ok(c, name, args)
  answers.push(JSON.stringify(body))
  return body
}

function finished(c: Client, auditId: string) {
  return until(
    async () => {
      const a = await call(c, 'get_audit', { auditId })
      return (a.status === 'completed' || a.status === 'failed') && a
    },
    150_000,
    'the audit to finish',
    { everyMs: 300 },
  )
}

const sealedOf = async (auditId: string) =>
  (await svc.running.services.db.sql<{ auth_sealed: string | null }[]>`SELECT auth_sealed FROM audits WHERE id = ${auditId}`)[0]!
    .auth_sealed

describe('audit_authenticated', () => {
  test('with a login form: audits the pages behind it, never logs out, and the credentials stay sealed, then are wiped', async () => {
    const app = site()
    const { c } = await scaleAccount()
    const started = await call(c, 'audit_authenticated', {
      url: app.url,
      login: { url: `${app.origin}/login`, fields: { email: app.email, password: app.password } },
      options: { maxPages: 8, maxDepth: 2 },
    })
    expect(started.authenticated).toBe(true)
    expect(started.auditId).toMatch(/^aud_/)
    // While it runs, the database holds ciphertext only.
    const sealed = await sealedOf(started.auditId)
    if (sealed !== null) {
      expect(sealed).toMatch(/^v1\./)
      expect(sealed).not.toContain(SECRET)
    }
    const done = await finished(c, started.auditId)
    expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: undefined })
    expect(done.authenticated).toBe(true)
    expect(done.result.session).toEqual({ authenticated: true, lost: false, lostAt: null })
    expect(done.result.stoppedBy).toBe('done')
    // The pages behind the login were crawled with the session, and no logout link was followed.
    const appPages = app.requests.filter((r) => r.method === 'GET' && /^\/app\/\d+$/.test(r.path))
    expect(new Set(appPages.map((r) => r.path)).size).toBe(4)
    expect(appPages.every((r) => r.authed)).toBe(true)
    expect(app.requests.some((r) => r.path.startsWith('/logout') || r.path.startsWith('/account/sign-out'))).toBe(false)
    const pages = await call(c, 'get_audit', { auditId: started.auditId, section: 'pages', limit: 50 })
    const urls = pages.items.map((p: { url: string }) => p.url)
    expect(urls).toContain(`${app.origin}/app/1`)
    expect(urls.some((u: string) => u.includes('logout') || u.includes('sign-out'))).toBe(false)
    // The third party's script loaded without the session cookie.
    expect(app.thirdPartyRequests.length).toBeGreaterThan(0)
    expect(app.thirdPartyRequests.every((r) => r.cookie === null && r.authorization === null)).toBe(true)
    // Once ended, the credentials are gone.
    expect(await sealedOf(started.auditId)).toBeNull()
  }, 200_000)

  test('with a session cookie and with a bearer header; the header goes to the audited origin only', async () => {
    const app = site()
    const { c } = await scaleAccount()
    const byCookie = await call(c, 'audit_authenticated', {
      url: app.url,
      cookies: [{ name: 'sid', value: app.presetSession }],
      options: { maxPages: 3, maxDepth: 1 },
    })
    const cookieDone = await finished(c, byCookie.auditId)
    expect(cookieDone.status).toBe('completed')
    expect(cookieDone.result.pagesScanned).toBeGreaterThanOrEqual(2)

    const before = app.requests.length
    const byHeader = await call(c, 'audit_authenticated', {
      url: app.url,
      headers: { Authorization: `Bearer ${app.bearer}` },
      options: { maxPages: 8, maxDepth: 1 },
    })
    const headerDone = await finished(c, byHeader.auditId)
    expect(headerDone.status).toBe('completed')
    // The site-level checks read the start page without credentials (as anyone would see it); the crawl's pages carried the header.
    const pageHits = app.requests.slice(before).filter((r) => r.path.startsWith('/app') && r.authorization !== null)
    expect(pageHits.length).toBeGreaterThanOrEqual(2)
    expect(pageHits.every((r) => r.authed)).toBe(true)
    const crawled = await call(c, 'get_audit', { auditId: byHeader.auditId, section: 'pages' })
    expect(crawled.items.map((p: { url: string }) => p.url)).toContain(app.url)
    expect(crawled.items.every((p: { finalUrl?: string; url: string }) => !(p.finalUrl ?? p.url).includes('/login'))).toBe(true)
    expect(app.thirdPartyRequests.every((r) => r.authorization === null && r.cookie === null)).toBe(true)
    // Including the page a link of the app redirected to: the header did not follow the redirect there.
    expect(app.thirdPartyRequests.some((r) => r.path === '/landing')).toBe(true)
  }, 200_000)

  test('a session that ends mid-crawl stops the crawl and says where', async () => {
    const app = site({ expireAfterPages: 2, pages: 6 })
    const { c } = await scaleAccount()
    const started = await call(c, 'audit_authenticated', {
      url: app.url,
      login: { url: `${app.origin}/login`, fields: { email: app.email, password: app.password } },
      options: { maxPages: 10, maxDepth: 2 },
    })
    const done = await finished(c, started.auditId)
    expect(done.status).toBe('completed')
    expect(done.result.stoppedBy).toBe('sessionLost')
    expect(done.result.session.lost).toBe(true)
    expect(done.result.session.lostAt).toStartWith(`${app.origin}/app`)
    expect(await sealedOf(started.auditId)).toBeNull()
  }, 200_000)

  test('a wrong password fails the audit with login_failed, refunded, without echoing anything typed', async () => {
    const app = site()
    const { accountId, c } = await scaleAccount()
    const before = await getBalance(svc.running.services.db.sql, accountId)
    const started = await call(c, 'audit_authenticated', {
      url: app.url,
      login: { url: `${app.origin}/login`, fields: { email: app.email, password: `wrong-${SECRET}` } },
    })
    const done = await finished(c, started.auditId)
    expect(done.status).toBe('failed')
    expect(done.error.code).toBe('login_failed')
    expect(done.error.message).toContain('login form')
    expect(done.progress.refunded).toBe(true)
    expect((await getBalance(svc.running.services.db.sql, accountId)).used).toBe(before.used)
    expect(await sealedOf(started.auditId)).toBeNull()
  }, 200_000)

  test('cookies that do not log in (the start page redirects to the login page) fail with login_failed', async () => {
    const app = site()
    const { c } = await scaleAccount()
    const started = await call(c, 'audit_authenticated', { url: app.url, cookies: [{ name: 'sid', value: `stale-${SECRET}` }] })
    const done = await finished(c, started.auditId)
    expect(done.status).toBe('failed')
    expect(done.error.code).toBe('login_failed')
  }, 200_000)

  test('refuses what it cannot do, with a clear error that never repeats a credential', async () => {
    const app = site()
    const free = await scaleAccount('free')
    expect((await errorOf(free.c, 'audit_authenticated', { url: app.url, cookies: [{ name: 'sid', value: SECRET }] })).code).toBe(
      'plan_required',
    )
    const { accountId, c } = await scaleAccount()
    const refused = async (args: Record<string, unknown>) => {
      const e = await errorOf(c, 'audit_authenticated', { url: app.url, ...args })
      expect(JSON.stringify(e)).not.toContain(SECRET)
      return e
    }
    expect((await refused({})).code).toBe('invalid_params')
    expect((await refused({ cookies: [] })).code).toBe('invalid_params')
    expect((await refused({ headers: { Host: `x${SECRET}` } })).message).toContain('set by the browser')
    expect((await refused({ headers: { Cookie: `sid=${SECRET}` } })).message).toContain('cookies')
    expect((await refused({ headers: { 'X-Token': `a\r\nInjected: ${SECRET}` } })).code).toBe('invalid_params')
    expect((await refused({ cookies: [{ name: 'sid', value: `${SECRET}; Path=/` }] })).code).toBe('invalid_params')
    expect((await refused({ cookies: [{ name: 'sid', value: SECRET, domain: 'evil.example' }] })).message).toContain('127.0.0.1')
    expect((await refused({ login: { url: 'http://127.0.0.2/login', fields: { password: SECRET } } })).message).toContain(app.origin)
    expect((await refused({ login: { url: `${app.origin}/login`, fields: {} } })).code).toBe('invalid_params')
    expect((await refused({ cookies: [{ name: 'sid', value: SECRET }], extra: 1 })).code).toBe('invalid_params')
    expect((await refused({ cookies: Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, value: SECRET })) })).code).toBe(
      'invalid_params',
    )
    expect((await refused({ cookies: [{ name: 'sid', value: 'x'.repeat(5000) }] })).code).toBe('invalid_params')
    // Nothing was started or charged by any of these.
    const [n] = await svc.running.services.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE account_id = ${accountId}`
    expect(n!.n).toBe(0)
  }, 60_000)

  test('a site that echoes the credentials encoded (query, header, HTML, JSON, base64) gets them back in no output', async () => {
    const sql = svc.running.services.db.sql
    const runs = [
      {
        app: site({ echo: true }),
        args: (a: LoginSite) => ({ cookies: [{ name: 'sid', value: a.presetSession }], headers: { Authorization: `Bearer ${a.bearer}` } }),
      },
      {
        app: site({ echo: true }),
        args: (a: LoginSite) => ({ login: { url: `${a.origin}/login`, fields: { email: a.email, password: a.password } } }),
      },
    ]
    for (const { app, args } of runs) {
      const { accountId, c } = await scaleAccount()
      const started = await call(c, 'audit_authenticated', { url: app.url, ...args(app), options: { maxPages: 8, maxDepth: 2 } })
      const done = await finished(c, started.auditId)
      expect(done.status).toBe('completed')
      // The link that carried the session id was crawled: its URL is in the report, scrubbed.
      expect(app.requests.some((r) => r.path.startsWith('/app/list?'))).toBe(true)
      const outputs: string[] = []
      for (const section of ['pages', 'findings', 'checks', 'thirdParties'])
        outputs.push(JSON.stringify(await call(c, 'get_audit', { auditId: started.auditId, section, limit: 100 })))
      for (const format of ['html', 'sarif', 'junit', 'markdown']) {
        const e = await call(c, 'export_report', { auditId: started.auditId, format })
        outputs.push(e.content ?? (await (await fetch(`${svc.url}${new URL(e.url).pathname}`)).text()))
      }
      const share = await shareReport(sql, accountId, 'audit', started.auditId)
      outputs.push(await (await fetch(`${svc.url}/r/${share!.slug}`)).text())
      const urls = JSON.parse(outputs[0]!).items.map((p: { url: string }) => p.url) as string[]
      expect(urls.some((u) => u.includes('/app/list?') && /[?&]sid=(\[redacted\]|%5Bredacted%5D)/.test(u))).toBe('cookies' in args(app))
      // Every form of every credential: the raw SECRET inside the percent, HTML and JSON forms, and base64.
      const forms = [
        SECRET,
        ...[app.presetSession, app.bearer, `${app.email}:${app.password}`].map((v) => Buffer.from(v).toString('base64')),
      ]
      for (const form of forms) expect(outputs.filter((o) => o.includes(form)).length).toBe(0)
      answers.push(...outputs)
    }
  }, 400_000)

  test('the planted secret is nowhere: not in the logs, not in any table, not in any answer', async () => {
    expect(logs.lines.length).toBeGreaterThan(10)
    expect(logs.lines.filter((l) => l.includes(SECRET))).toEqual([])
    expect(answers.filter((a) => a.includes(SECRET))).toEqual([])
    const sql = svc.running.services.db.sql
    const tables = await sql<{ name: string }[]>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`
    expect(tables.length).toBeGreaterThan(10)
    const found: string[] = []
    for (const { name } of tables) {
      const [row] = await sql.unsafe<{ hit: boolean }[]>(
        `SELECT coalesce(bool_or(t::text LIKE '%' || $1 || '%'), false) AS hit FROM "${name}" t`,
        [SECRET],
      )
      if (row?.hit) found.push(name)
    }
    expect(found).toEqual([])
    // And no audit of this file kept its credentials.
    const [left] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE auth_sealed IS NOT NULL`
    expect(left!.n).toBe(0)
  })
})

describe('audit_authenticated on the embedded default', () => {
  test('works out of the box: a secrets key of its own is made in DATA_DIR, owner-only, and the next start reads the same', async () => {
    const embedded = await startService('embedded', { ROLE: 'all', NAV_TIMEOUT_MS: '20000' })
    try {
      const app = site()
      const c = await connectClient(embedded.mcpUrl, await embedded.key('scale'))
      clients.push(c)
      const started = await ok(c, 'audit_authenticated', {
        url: app.url,
        cookies: [{ name: 'sid', value: app.presetSession }],
        options: { maxPages: 2, maxDepth: 1 },
      })
      expect(started.authenticated).toBe(true)
      const done = await until(
        async () => {
          const a = await ok(c, 'get_audit', { auditId: started.auditId })
          return (a.status === 'completed' || a.status === 'failed') && a
        },
        150_000,
        'the embedded audit to finish',
        { everyMs: 300 },
      )
      expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: undefined })
      const keyFile = join(embedded.running.services.config.DATA_DIR, LOCAL_SECRETS_KEY_FILE)
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      expect(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64').length).toBe(32)
      expect(embedded.running.services.config.SECRETS_KEY).toBe(readFileSync(keyFile, 'utf8').trim())
      expect(localSecretsKey(embedded.running.services.config.DATA_DIR)).toBe(embedded.running.services.config.SECRETS_KEY)
    } finally {
      await embedded.stop()
    }
  }, 200_000)
})
