// An error nothing in the service caught (a promise rejected with no handler, a throw in a callback) is said in
// one structured log line, then the service stops as on SIGTERM (its admin channel's socket, among what it
// undoes, is gone) and exits 1 for its supervisor to start it again. The error is planted in a real embedded
// service by a preloaded file (test/fixtures/planted-error.ts) on a signal, once the service runs.
import { afterAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, seededDataDir, startEmbedded } from '../harness/embedded-process.ts'
import { machineDeadline } from '../harness/machine.ts'
import { within } from '../harness/wait.ts'

afterAll(cleanup)

for (const [kind, event] of [
  ['rejection', 'unhandledRejection'],
  ['exception', 'uncaughtException'],
] as const) {
  test(
    `an unhandled ${kind}: one log line, stopped as on SIGTERM, exit 1`,
    async () => {
      const dataDir = await seededDataDir()
      const svc = await startEmbedded(dataDir, { PLANTED_ERROR: kind }, [
        process.execPath,
        '--preload',
        './test/fixtures/planted-error.ts',
        'server/main.ts',
      ])
      expect(existsSync(join(dataDir, 'admin.sock'))).toBe(true)
      svc.p.kill('SIGUSR2')
      const code = await within(svc.p.exited, machineDeadline(60_000), 'the exit after the planted error')
      const err = await within(svc.stderr, 5_000, 'stderr')
      expect(code).toBe(1)
      const lines = err.split('\n').filter((l) => l.includes('unexpected error'))
      expect(lines).toHaveLength(1)
      const logged = JSON.parse(lines[0] ?? '{}')
      expect(logged).toMatchObject({ level: 'error', msg: 'unexpected error; stopping', event, error: `planted ${kind}` })
      // Not the runtime's own report of the error (its message and a stack, line by line).
      expect(err).not.toMatch(/\n\s+at /)
      // The stop ran: the admin channel's socket is removed by it, and left by a process that just dies.
      expect(existsSync(join(dataDir, 'admin.sock'))).toBe(false)
    },
    machineDeadline(180_000),
  )
}
