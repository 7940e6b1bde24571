// The embedded default as a person meets it: the key ./scripts/start prints (or files) and the local sign-in
// user are one account, so what an MCP client scans with the key shows on the dashboard; the key survives
// restarts until it is regenerated in settings, and then the new one is kept in DATA_DIR for the next start.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { LOCAL_IDENTITY_ISSUER, localSubject } from '../../api/signin/local-idp.ts'
import { LOCAL_ACCOUNT_NAME } from '../../shared/db/accounts.ts'
import { openDatabase } from '../../shared/db/index.ts'
import { upsertUser } from '../../shared/db/users.ts'
import { connectClient, initializeBody, MCP_HEADERS, ok } from '../harness/client.ts'
import { cleanup, type EmbeddedProcess, seededDataDir, startEmbedded } from '../harness/embedded-process.ts'
import { browse, CookieJar, DEV_USER, jarFetch } from '../harness/signin.ts'

afterAll(cleanup)

let site: ReturnType<typeof Bun.serve>
beforeAll(() => {
  // The developer's own app, on loopback (the embedded default may scan local apps).
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response('<!doctype html><html lang="en"><head><title>My app</title></head><body><h1>My app</h1></body></html>', {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      }),
  })
})
afterAll(() => site?.stop(true))

const mcpStatus = async (base: string, key: string) =>
  (
    await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify(initializeBody()),
    })
  ).status

/** Signs the local user in through the service's own local provider; the jar holds the session. */
async function signIn(svc: EmbeddedProcess): Promise<CookieJar> {
  const jar = new CookieJar()
  const { url } = await browse(jar, `${svc.base}/auth/login?return_to=/dashboard`, {
    stopAt: (u) => u.startsWith(svc.base) && !u.startsWith(`${svc.base}/auth/`),
  })
  expect(url).toBe(`${svc.base}/dashboard`)
  return jar
}

const page = async (jar: CookieJar, url: string) => {
  const res = await jarFetch(jar, url)
  expect(res.status).toBe(200)
  return res.text()
}

/** The settings page's rows: key id, shown prefix and label. */
async function keyRows(jar: CookieJar, svc: EmbeddedProcess) {
  const html = await page(jar, `${svc.base}/dashboard/settings`)
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(html)?.[1]
  const rows = [...html.matchAll(/<tr data-key="([^"]+)"><td><code>([^<…]+)…<\/code><\/td><td>([^<]*)<\/td>/g)].map((m) => ({
    id: m[1]!,
    prefix: m[2]!,
    label: m[3]!,
  }))
  return { csrf: csrf!, rows }
}

describe('one local identity, a stable key', () => {
  test('the filed key scans over MCP, the local user sees the app; a restart keeps the key; Regenerate replaces it, also for the next start', async () => {
    const dir = await seededDataDir()
    const keyFile = join(dir, 'local-api-key')
    const first = await startEmbedded(dir)
    expect(first.banner).toContain(`API key:      in ${keyFile}`)
    const key = first.fileKey()
    expect(key).toMatch(/^act_/)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)

    // An MCP client scans the developer's app with the key.
    const client = await connectClient(`${first.base}/api/mcp`, key)
    const report = await ok(client, 'scan_app', { url: site.url.href })
    await client.close()
    expect(typeof report.score).toBe('number')

    // The local user signs in and sees that app and scan: not "No apps yet".
    let jar = await signIn(first)
    const apps = await page(jar, `${first.base}/dashboard`)
    expect(apps).not.toContain('No apps yet')
    expect(apps).toContain(`127.0.0.1:${site.port}`)
    const { rows } = await keyRows(jar, first)
    const local = rows.find((r) => r.label === 'local-start')
    expect(local && key.startsWith(local.prefix)).toBe(true)
    expect(await first.stop()).toBe(0)

    // A restart keeps the key, so configured MCP clients keep working.
    const second = await startEmbedded(dir)
    expect(second.fileKey()).toBe(key)
    expect(await mcpStatus(second.base, key)).toBe(200)

    // Regenerate in settings: CSRF-protected; shows the new key once and keeps it in DATA_DIR.
    jar = await signIn(second)
    const { csrf, rows: rows2 } = await keyRows(jar, second)
    const localId = rows2.find((r) => r.label === 'local-start')!.id
    const regenerate = (headers: Record<string, string>) =>
      jarFetch(jar, `${second.base}/dashboard/api/keys/${localId}/regenerate`, {
        method: 'POST',
        headers: { origin: second.base, ...headers },
      })
    expect((await regenerate({})).status).toBe(403)
    expect((await regenerate({ 'x-csrf-token': 'not-the-token' })).status).toBe(403)
    expect(await mcpStatus(second.base, key)).toBe(200)
    const res = await regenerate({ 'x-csrf-token': csrf })
    expect(res.status).toBe(201)
    const fresh = (await res.json()) as { plaintext: string; label: string; savedTo?: string }
    expect(fresh.plaintext).toMatch(/^act_/)
    expect(fresh.plaintext).not.toBe(key)
    expect(fresh.label).toBe('local-start')
    expect(fresh.savedTo).toBe(keyFile)
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(fresh.plaintext)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    expect(await mcpStatus(second.base, key)).toBe(401)
    expect(await mcpStatus(second.base, fresh.plaintext)).toBe(200)
    // Shown once: the settings page lists its prefix, never the key.
    const settings = await page(jar, `${second.base}/dashboard/settings`)
    expect(settings).not.toContain(fresh.plaintext)
    expect(await second.stop()).toBe(0)

    // The next start uses the regenerated key; the old one stays dead.
    const third = await startEmbedded(dir)
    expect(third.fileKey()).toBe(fresh.plaintext)
    expect(await mcpStatus(third.base, fresh.plaintext)).toBe(200)
    expect(await mcpStatus(third.base, key)).toBe(401)
    expect(await third.stop()).toBe(0)
  }, 600_000)

  test('a local user who signed in under an earlier version (an account of its own) is moved to the local account', async () => {
    const dir = await seededDataDir()
    // What an earlier version left: the local provider's user with a free account of its own.
    let db = await openDatabase({ databaseUrl: '', dataDir: dir })
    const before = await upsertUser(db.sql, {
      issuer: LOCAL_IDENTITY_ISSUER,
      subject: localSubject(DEV_USER),
      email: DEV_USER,
      name: 'Local developer',
    })
    await db.close()

    const svc = await startEmbedded(dir)
    const key = svc.fileKey()
    const jar = await signIn(svc)
    const { rows } = await keyRows(jar, svc)
    // The signed-in user's settings list the local key: the same account.
    expect(rows.some((r) => r.label === 'local-start' && key.startsWith(r.prefix))).toBe(true)
    expect(await svc.stop()).toBe(0)

    db = await openDatabase({ databaseUrl: '', dataDir: dir })
    try {
      const users = await db.sql<{ id: string; account_id: string; name: string }[]>`
        SELECT u.id, u.account_id, a.name FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.subject = ${localSubject(DEV_USER)}`
      expect(users).toHaveLength(1)
      expect(users[0]!.id).toBe(before.id)
      expect(users[0]!.account_id).not.toBe(before.accountId)
      expect(users[0]!.name).toBe(LOCAL_ACCOUNT_NAME)
    } finally {
      await db.close()
    }
  }, 600_000)
})
