// The operator command and the start command, as real processes.
import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { findPrincipalByApiKey, localAccountId } from '../../shared/db/accounts.ts'
import { openDatabase } from '../../shared/db/index.ts'
import { initializeBody, MCP_HEADERS } from '../harness/client.ts'
import { freshDatabase } from '../harness/service.ts'
import { cleanup, seededDataDir } from '../harness/embedded-process.ts'
import { within } from '../harness/wait.ts'

const ROOT = join(import.meta.dir, '..', '..')
const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const c of cleanups) await c()
  await cleanup()
})

async function run(args: string[], env: Record<string, string>) {
  // Bun kills a child that outlives `timeout`, so a hung command fails its test instead of hanging the suite.
  const p = Bun.spawn(['bun', 'run', 'admin', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 60_000,
  })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { out, err, code }
}

describe('bun run admin create-key', () => {
  test('prints a new act_ key for a new account of the plan, stored only as a hash', async () => {
    const pg = await freshDatabase()
    cleanups.push(() => pg.drop())
    const r = await run(['create-key', '--plan', 'launch'], { DATABASE_URL: pg.url })
    expect(r.code).toBe(0)
    const key = r.out.trim()
    expect(key).toMatch(/^act_[0-9A-Za-z]{43}$/)
    const db = await openDatabase({ databaseUrl: pg.url, dataDir: '/tmp' })
    try {
      expect((await findPrincipalByApiKey(db.sql, key))?.account.plan).toBe('launch')
      const rows = await db.sql`SELECT key_hash FROM api_keys`
      expect(JSON.stringify(rows)).not.toContain(key)
    } finally {
      await db.close()
    }
  })

  test("says that a new account's scans are not the local user's, and how to get a key of the local account", async () => {
    const pg = await freshDatabase()
    cleanups.push(() => pg.drop())
    const fresh = await run(['create-key'], { DATABASE_URL: pg.url })
    expect(fresh.code).toBe(0)
    expect(fresh.err).toContain("not on the local user's dashboard")
    expect(fresh.err).toContain('create-key --account local')
    expect(fresh.err).toContain('Settings → Agents and MCP → Create key')
    // A database the embedded default never started in has no local account: refused, none is made.
    const none = await run(['create-key', '--account', 'local'], { DATABASE_URL: pg.url })
    expect(none.code).toBe(1)
    expect(none.err).toContain('no local account')
    expect(none.out).toBe('')
    const db = await openDatabase({ databaseUrl: pg.url, dataDir: '/tmp' })
    try {
      const local = await localAccountId(db.sql)
      const r = await run(['create-key', '--account', 'local', '--name', 'laptop'], { DATABASE_URL: pg.url })
      expect(r.code).toBe(0)
      expect(r.err).toContain('the local account')
      expect((await findPrincipalByApiKey(db.sql, r.out.trim()))?.account.id).toBe(local)
    } finally {
      await db.close()
    }
  })

  test.each([[['--help']], [['-h']], [['help']], [['create-key', '--help']]])('%p prints the usage on stdout and exits 0', async (args) => {
    const r = await run(args, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
    expect(r.code).toBe(0)
    expect(r.out).toContain('usage: bun run admin create-key')
    expect(r.out).toContain('create-key --account local')
    expect(r.err).not.toContain('unknown command')
  })

  test.each([
    [['create-key', '--account', 'local', '--plan', 'launch'], 'do not go together'],
    [['create-key', '--account', 'act_x'], 'takes only "local"'],
    [['create-key', '--plan', 'gold'], 'free, launch, scale'],
    [['drop-everything'], 'unknown command'],
    [[], 'usage'],
    [['create-key', '--bogus'], 'usage'],
  ])('%p is refused with exit 2 and says why', async (args, says) => {
    const r = await run(args as string[], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
    expect(r.code).toBe(2)
    expect(r.err).toContain(says)
  })
})

describe('bun run start (embedded default)', () => {
  /** Starts the service, reads its banner (stdout is a pipe here, not a terminal) and returns it with the process. */
  async function start(dir: string) {
    const p = Bun.spawn(['bun', 'run', 'start'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', DATA_DIR: dir, ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' },
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 300_000,
    })
    cleanups.push(() => void p.kill('SIGKILL'))
    const reader = p.stdout.getReader()
    let text = ''
    const t0 = Date.now()
    // A first PGlite start takes seconds, far more on a busy machine: a generous but finite wait.
    while (!/password:.*\n/.test(text) && Date.now() - t0 < 150_000) {
      const { value, done } = await within(reader.read(), Math.max(1, 150_000 - (Date.now() - t0)), 'start-up output')
      if (done) break
      text += new TextDecoder().decode(value)
    }
    reader.releaseLock()
    return { p, text, base: /base URL:\s+(\S+)/.exec(text)?.[1] }
  }

  const initialize = (base: string, key: string) =>
    fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify(initializeBody()),
    })

  test('prints where the local key and password are (never the secrets themselves when stdout is not a terminal) and how to stop it; stops on SIGTERM and on Ctrl-C with exit 0', async () => {
    // A copy of a new, migrated database (the harness makes one once), so start-up is quick.
    const dir = await seededDataDir()
    const first = await start(dir)
    expect(first.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const keyFile = join(dir, 'local-api-key')
    expect(first.text).toContain(`API key:      in ${keyFile}`)
    expect(first.text).toContain(`password:     in ${join(dir, 'local-signin-password')}`)
    const key = readFileSync(keyFile, 'utf8').trim()
    expect(key).toMatch(/^act_/)
    expect(first.text).not.toContain(key)
    expect(first.text).not.toContain(readFileSync(join(dir, 'local-signin-password'), 'utf8').trim())
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    expect((await initialize(first.base!, key)).status).toBe(200)
    expect(first.text).toContain(`Stop it with Ctrl-C (or: kill `)
    first.p.kill('SIGTERM')
    expect(await within(first.p.exited, 30_000, 'exit after SIGTERM')).toBe(0)
    // The local identity provider's warnings that nobody can act on (Bun is "unsupported", its store is in memory).
    expect(await new Response(first.p.stderr).text()).not.toContain('oidc-provider WARNING')

    // A restart keeps the key, so MCP clients configured with it keep working.
    const second = await start(dir)
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(key)
    expect((await initialize(second.base!, key)).status).toBe(200)
    // Ctrl-C at a terminal: SIGINT ends it as cleanly, exit 0 (not 130).
    second.p.kill('SIGINT')
    expect(await within(second.p.exited, 30_000, 'exit after SIGINT')).toBe(0)
  }, 300_000)

  test('a bad configuration stops start-up with every bad field listed', async () => {
    const p = Bun.spawn(['bun', 'run', 'start'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'x', ROLE: 'nope' },
      stdout: 'ignore',
      stderr: 'pipe',
      timeout: 60_000,
    })
    const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited])
    expect(code).toBe(2)
    expect(err).toContain('PORT')
    expect(err).toContain('ROLE')
  })
})
