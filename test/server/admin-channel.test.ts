// `admin` on the embedded default, as real processes: while the service runs it runs the command itself
// (its admin channel, a Unix socket under DATA_DIR); with nobody running, admin holds DATA_DIR and opens the
// database; two holders never share it; a stale lock is recovered; hostile requests on the socket are
// refused and the service carries on. It never prints a key the service will not accept.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { holdDataDir, LOCK_FILE } from '../../server/data-dir-lock.ts'
import { initializeBody, MCP_HEADERS } from '../harness/client.ts'
import { admin, cleanup, embeddedEnv, ROOT, runCommand, seededDataDir, startEmbedded } from '../harness/embedded-process.ts'
import { within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

afterAll(cleanup)

const mcpStatus = async (base: string, key: string) =>
  (
    await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify(initializeBody()),
    })
  ).status

/** One raw exchange on the admin socket: what the service answers (bounded), after it reads what we send. */
function raw(path: string, send: (s: ReturnType<typeof connect>) => void, ms = 15_000): Promise<string> {
  return within(
    new Promise<string>((resolve, reject) => {
      const s = connect(path)
      let text = ''
      s.on('connect', () => send(s))
      s.on('data', (d) => {
        text += d.toString()
      })
      s.on('close', () => resolve(text))
      s.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? resolve(text) : reject(e)))
    }),
    ms,
    'an answer on the admin socket',
  )
}

describe('admin while the embedded service runs', () => {
  test('create-key is run by the service and the key works against it; hostile requests on the socket are refused and the service carries on', async () => {
    const dir = await seededDataDir()
    const svc = await startEmbedded(dir)
    const sock = join(dir, 'admin.sock')
    expect(statSync(sock).isSocket()).toBe(true)
    expect(statSync(sock).mode & 0o777).toBe(0o600)
    const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))
    expect(lock).toMatchObject({ pid: svc.p.pid, who: 'service' })

    const r = await admin(dir, ['create-key', '--plan', 'launch', '--name', 'ci'])
    expect(r.code).toBe(0)
    const key = r.out.trim()
    expect(key).toMatch(/^act_[0-9A-Za-z]{43}$/)
    expect(r.err).toContain('plan launch')
    expect(await mcpStatus(svc.base, key)).toBe(200)
    // Incidents go through the same channel.
    const opened = await admin(dir, ['incident', 'open', '--title', 'Slow scans'])
    expect(opened.code).toBe(0)
    const list = await admin(dir, ['incident', 'list'])
    expect(list.out).toContain(opened.out.trim())
    expect(list.out).toContain('Slow scans')

    // Hostile or broken requests: each refused with a reason, the connection closed.
    const refused = (text: string) => JSON.parse(text.trim()) as { ok: boolean; message: string }
    const big = refused(await raw(sock, (s) => s.write('x'.repeat(64 * 1024))))
    expect(big).toMatchObject({ ok: false })
    expect(big.message).toContain('larger than')
    expect(refused(await raw(sock, (s) => s.write('not json\n'))).message).toContain('not JSON')
    expect(refused(await raw(sock, (s) => s.write('{"argv":"create-key"}\n'))).message).toContain('argv')
    expect(refused(await raw(sock, (s) => s.write(`${JSON.stringify({ argv: Array(100).fill('x') })}\n`))).message).toContain('at most')
    const t0 = Date.now()
    const silent = refused(await raw(sock, () => {}))
    expect(silent.message).toContain('did not arrive')
    expect(Date.now() - t0).toBeLessThan(machineDeadline(30_000))
    // A usage error comes back as the command's own (exit 2), not a refusal.
    const usage = refused(await raw(sock, (s) => s.write(`${JSON.stringify({ argv: ['create-key', '--plan', 'gold'] })}\n`)))
    expect(usage).toMatchObject({ ok: true, code: 2 })

    // The service is fine: it answers MCP and runs the next admin command.
    expect(await mcpStatus(svc.base, key)).toBe(200)
    const again = await admin(dir, ['create-key'])
    expect(again.code).toBe(0)
    expect(await mcpStatus(svc.base, again.out.trim())).toBe(200)

    // A service that holds DATA_DIR but cannot be reached (its socket gone): refused, and no key printed.
    rmSync(sock)
    const blind = await admin(dir, ['create-key'])
    expect(blind.code).toBe(1)
    expect(blind.out).toBe('')
    expect(blind.err).toContain(`The service is running on ${dir}`)
    expect(blind.err).toContain(`pid ${svc.p.pid}`)

    expect(await svc.stop()).toBe(0)
    // Stopped cleanly: lock and socket gone.
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
  }, 600_000)
})

describe('admin with the service stopped', () => {
  test('opens the database itself; the next start accepts the key; ./scripts/admin works without bun on PATH', async () => {
    const dir = await seededDataDir()
    // As on a fresh machine: no bun on PATH, only what scripts/setup.sh finds or installs.
    const env = { ...embeddedEnv(dir), PATH: '/usr/local/bin:/usr/bin:/bin' }
    const r = await runCommand([join(ROOT, 'scripts', 'admin'), 'create-key', '--plan', 'scale'], env)
    expect(r.err).toContain('plan scale')
    expect(r.code).toBe(0)
    const key = r.out.trim()
    expect(key).toMatch(/^act_/)
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)

    const svc = await startEmbedded(dir)
    expect(await mcpStatus(svc.base, key)).toBe(200)
    expect(await svc.stop()).toBe(0)
  }, 600_000)

  test('another admin holding DATA_DIR: a clear refusal, nothing printed on stdout; the service refuses to start too', async () => {
    const dir = await seededDataDir()
    // This test process holds DATA_DIR as an admin command does.
    const held = holdDataDir(dir, 'admin')
    if (!held.ok) throw new Error(held.message)
    try {
      const r = await admin(dir, ['create-key'])
      expect(r.code).toBe(1)
      expect(r.out).toBe('')
      expect(r.err).toContain(`Another admin command holds ${dir} (pid ${process.pid}`)
      expect(r.err).toContain('run this one again when it has finished')

      const start = await runCommand(['bun', 'server/main.ts'], embeddedEnv(dir, { PORT: '0' }))
      expect(start.code).toBe(1)
      expect(start.err).toContain(`App Audit cannot start: An admin command holds ${dir} (pid ${process.pid}`)
      // It stopped before touching the database: no local key was made.
      expect(existsSync(join(dir, 'local-api-key'))).toBe(false)
    } finally {
      held.release()
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
    const after = await admin(dir, ['incident', 'list'])
    expect(after.code).toBe(0)
  }, 600_000)

  test('a stale lock (its process gone, or its pid reused) is recovered', async () => {
    const dir = await seededDataDir()
    const lockPath = join(dir, LOCK_FILE)
    // A process that has exited: its pid names nobody.
    const gone = Bun.spawn(['true'])
    await within(gone.exited, 10_000, 'exit of true')
    writeFileSync(
      lockPath,
      JSON.stringify({ pid: gone.pid, who: 'service', host: hostname(), since: '2026-01-01T00:00:00.000Z', start: null }),
    )
    const r1 = await admin(dir, ['create-key'])
    expect(r1.err).not.toContain('holds')
    expect(r1.code).toBe(0)
    expect(existsSync(lockPath)).toBe(false)

    // A live process whose start time differs from the lock's: the pid was reused by another process.
    const sleeper = Bun.spawn(['sleep', '30'])
    try {
      writeFileSync(
        lockPath,
        JSON.stringify({ pid: sleeper.pid, who: 'admin', host: hostname(), since: '2026-01-01T00:00:00.000Z', start: '1' }),
      )
      const r2 = await admin(dir, ['incident', 'list'])
      expect(r2.code).toBe(0)
      expect(existsSync(lockPath)).toBe(false)

      // The same live process with no start time to compare: it may be the holder, so the lock is respected.
      writeFileSync(
        lockPath,
        JSON.stringify({ pid: sleeper.pid, who: 'admin', host: hostname(), since: '2026-01-01T00:00:00.000Z', start: null }),
      )
      const r3 = await admin(dir, ['incident', 'list'])
      expect(r3.code).toBe(1)
      expect(r3.err).toContain(`pid ${sleeper.pid}`)
    } finally {
      sleeper.kill('SIGKILL')
      await within(sleeper.exited, 10_000, 'exit of sleep')
    }
    // And once that process is gone, the service starts over its lock.
    const svc = await startEmbedded(dir)
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(svc.p.pid)
    expect(await svc.stop()).toBe(0)
  }, 600_000)
})
