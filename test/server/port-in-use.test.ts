// A port another process holds at start-up: the service says which setting chose it and what to do, exits 1,
// and prints no stack, for the api's PORT and for a crawler-only process's HEALTH_PORT, before the crawler's
// workers start. Real processes; the port is one this test holds (bound on port 0), so it is taken for
// certain. What that message advises, `PORT=0 ./scripts/start`, takes a free port and serves the URL of the
// port it got.
import { afterAll, expect, test } from 'bun:test'
import { createServer, type Server } from 'node:net'
import { cleanup, embeddedEnv, runCommand, seededDataDir, startEmbedded } from '../harness/embedded-process.ts'
import { machineDeadline } from '../harness/machine.ts'

const held: Server[] = []
afterAll(async () => {
  for (const s of held) await new Promise<void>((r) => s.close(() => r()))
  await cleanup()
})

/** A port on 127.0.0.1 this process listens on for the rest of the file. */
async function heldPort(): Promise<number> {
  const server = createServer()
  held.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return (server.address() as { port: number }).port
}

for (const [setting, extra] of [
  ['PORT', {}],
  ['HEALTH_PORT', { ROLE: 'crawler', PORT: '0', HEALTH_HOST: '127.0.0.1' }],
] as const) {
  test(
    `${setting} taken: one line naming ${setting} and what to do, exit 1, no stack`,
    async () => {
      const port = await heldPort()
      const env = embeddedEnv(await seededDataDir(), { HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extra, [setting]: String(port) })
      const r = await runCommand([process.execPath, 'server/main.ts'], env)
      expect(r.code).toBe(1)
      expect(r.err).toContain(
        `App Audit cannot start: port ${port} on 127.0.0.1 is taken by another process; set ${setting} to a free port, or to 0 for any free one.`,
      )
      expect(r.err).not.toContain('Bun.serve')
      expect(r.err).not.toMatch(/\n\s+at /)
      expect(r.out).not.toContain('App Audit is running')
      // Said before the crawler's browser and workers start, not a second or two into the start.
      expect(r.out).not.toContain('worker started')
    },
    machineDeadline(120_000),
  )
}

test(
  'PORT=0 ./scripts/start: a free port, and the base URL, the MCP endpoint and its metadata name the port it got',
  async () => {
    const svc = await startEmbedded(await seededDataDir(), { PORT: '0', BASE_URL: '' }, ['./scripts/start'])
    try {
      const port = Number(new URL(svc.base).port)
      expect(port).toBeGreaterThan(0)
      expect(svc.banner).toContain(`MCP endpoint: http://127.0.0.1:${port}/api/mcp`)
      const meta = await (await fetch(`${svc.base}/.well-known/oauth-protected-resource/api/mcp`)).json()
      expect(meta.resource).toBe(`http://127.0.0.1:${port}/api/mcp`)
    } finally {
      expect(await svc.stop()).toBe(0)
    }
  },
  machineDeadline(180_000),
)
