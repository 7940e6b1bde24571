// `bun run admin incident ...` as a real process: what it opens shows on the live status endpoint until it
// is resolved; usage errors exit 2 before the database is touched, an impossible request exits 1.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freshDatabase, startService } from '../harness/service.ts'
import { until, within } from '../harness/wait.ts'

const ROOT = join(import.meta.dir, '..', '..')
const NOWHERE = 'postgres://postgres@127.0.0.1:1/none'
const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

async function admin(args: string[], env: Record<string, string>) {
  // Bun kills a child that outlives `timeout`, so a hung command fails its test instead of hanging the suite.
  const p = Bun.spawn(['bun', 'run', 'admin', ...args], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 60_000,
  })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { out, err, code }
}

describe('bun run admin incident', () => {
  test('open shows the incident on /api/status/active, list names it, resolve takes it off once', async () => {
    const pg = await freshDatabase()
    cleanups.push(() => pg.drop())
    const env = { DATABASE_URL: pg.url }
    const opened = await admin(
      ['incident', 'open', '--title', 'Scans delayed', '--severity', 'major', '--message', 'A queue backlog.'],
      env,
    )
    expect(opened.code).toBe(0)
    const id = opened.out.trim()
    expect(id).toMatch(/^inc_[0-9A-Za-z]+$/)
    const minor = (await admin(['incident', 'open', '--title', 'Slow dashboard'], env)).out.trim()

    // The service reads the same database the command wrote.
    const svc = await startService('production', { ROLE: 'api', DATABASE_URL: pg.url })
    cleanups.push(() => svc.stop())
    const active = async () =>
      (
        (await (await within(fetch(`${svc.url}/api/status/active`), 10_000, 'status')).json()) as {
          incidents: Array<Record<string, unknown>>
        }
      ).incidents
    const shown = await active()
    expect(shown.map((i) => i.id)).toEqual([minor, id])
    expect(shown[1]).toMatchObject({ title: 'Scans delayed', severity: 'major', message: 'A queue backlog.' })
    expect(shown[0]).toMatchObject({ severity: 'minor', message: null })

    const listed = await admin(['incident', 'list'], env)
    expect(listed.code).toBe(0)
    const lines = listed.out.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[1]!.split('\t')).toEqual([id, 'major', expect.stringMatching(/^\d{4}-\d\d-\d\dT/), 'open', 'Scans delayed'])

    const resolved = await admin(['incident', 'resolve', id], env)
    expect(resolved.code).toBe(0)
    expect(resolved.err).toContain(`incident ${id} resolved`)
    const again = await admin(['incident', 'resolve', id], env)
    expect(again.code).toBe(0)
    expect(again.err).toContain('already resolved')

    expect((await admin(['incident', 'list'], env)).out.trim().split('\n')).toHaveLength(1)
    const all = await admin(['incident', 'list', '--all'], env)
    expect(all.out).toMatch(new RegExp(`${id}\\tmajor\\t\\S+\\tresolved \\d{4}-`))
    await until(async () => (await active()).every((i) => i.id !== id), 10_000, 'the resolved incident to leave the status endpoint', {
      everyMs: 250,
    })
  }, 120_000)

  test('resolving an incident that does not exist exits 1', async () => {
    const pg = await freshDatabase()
    cleanups.push(() => pg.drop())
    const r = await admin(['incident', 'resolve', 'inc_0000000000000000000000'], { DATABASE_URL: pg.url })
    expect(r.code).toBe(1)
    expect(r.err).toContain('no incident inc_0000000000000000000000')
  }, 60_000)

  test('a database that cannot be reached exits 1 and says so', async () => {
    const r = await admin(['incident', 'list'], { DATABASE_URL: NOWHERE })
    expect(r.code).toBe(1)
    expect(r.err).toContain('cannot open the database')
  }, 60_000)

  test('works on the embedded database under DATA_DIR', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'appaudit-incidents-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const env = { DATABASE_URL: '', DATA_DIR: dir }
    const id = (await admin(['incident', 'open', '--title', 'Local test', '--severity', 'critical'], env)).out.trim()
    expect(id).toMatch(/^inc_/)
    const listed = await admin(['incident', 'list'], env)
    expect(listed.code).toBe(0)
    expect(listed.out).toContain(`${id}\tcritical\t`)
  }, 90_000)

  test.each([
    ['no incident command', ['incident'], 'incident needs a command'],
    ['an unknown incident command', ['incident', 'close', 'inc_x'], 'unknown incident command "close"'],
    ['open without a title', ['incident', 'open'], '--title is required'],
    ['open with a blank title', ['incident', 'open', '--title', '   '], '--title is required'],
    ['an unknown severity', ['incident', 'open', '--title', 'x', '--severity', 'urgent'], 'minor, major, critical'],
    ['a 201-character title', ['incident', 'open', '--title', 'x'.repeat(201)], 'at most 200'],
    ['a title of two lines', ['incident', 'open', '--title', 'two\nlines'], 'one line'],
    ['a 2001-character message', ['incident', 'open', '--title', 'x', '--message', 'm'.repeat(2001)], 'at most 2000'],
    ['an unknown option', ['incident', 'open', '--title', 'x', '--bogus'], 'bogus'],
    ['resolve without an id', ['incident', 'resolve'], 'one incident id'],
    ['resolve with two ids', ['incident', 'resolve', 'a', 'b'], 'one incident id'],
    ['resolve with what is not an id', ['incident', 'resolve', '42'], 'not an incident id'],
    ['list with an argument', ['incident', 'list', 'extra'], 'extra'],
    ['no command at all (the usage names the incident commands)', [], 'bun run admin incident open --title TITLE'],
  ] as Array<[string, string[], string]>)(
    '%s is refused with exit 2, says why and shows the usage',
    async (_label, args, says) => {
      const r = await admin(args, { DATABASE_URL: NOWHERE })
      expect(r.code).toBe(2)
      expect(r.err).toContain(says)
      expect(r.err).toContain('usage: bun run admin')
    },
    60_000,
  )
})
