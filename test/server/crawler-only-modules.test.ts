// A crawler-only process on a database (production's crawler pods) loads none of the api's modules: the app,
// MCP, OAuth and reports were about 24 MB of its resident set at rest, and such a process serves none of
// them. Each case boots the service in a child process whose Bun plugin notes every file of api/ it loads;
// the process with the api beside its crawler shows the plugin sees them.
import { afterAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { dropRedisPrefix, freshDatabase, REDIS_URL } from '../harness/service.ts'
import { machineDeadline } from '../harness/machine.ts'

const ROOT = join(import.meta.dir, '../..')

/** Boots the service with `role`, stops it, and prints the api/ files it loaded as its last line (JSON). */
const CHILD = `
const loaded = new Set()
Bun.plugin({
  name: 'api-files',
  setup(build) {
    build.onLoad({ filter: /[\\\\/]api[\\\\/].*\\.ts$/ }, async ({ path }) => {
      if (path.startsWith(process.cwd() + '/api/')) loaded.add(path.slice(process.cwd().length + 1))
      return { contents: await Bun.file(path).text(), loader: 'ts' }
    })
  },
})
const { loadConfig } = await import('./shared/config.ts')
const { createLogger } = await import('./shared/lib/log.ts')
const { boot } = await import('./server/boot.ts')
const running = await boot(loadConfig(process.env), createLogger('error'))
const services = running.services !== null
await running.stop()
console.log(JSON.stringify({ services, loaded: [...loaded] }))
process.exit(0)
`

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups) await c().catch(() => {})
})

async function bootIn(role: string): Promise<{ services: boolean; loaded: string[] }> {
  const db = await freshDatabase()
  const prefix = `t${randomBytes(4).toString('hex')}:`
  cleanups.push(db.drop, () => dropRedisPrefix(REDIS_URL, prefix))
  const child = Bun.spawn([process.execPath, '-e', CHILD], {
    cwd: ROOT,
    env: {
      ...process.env,
      ROLE: role,
      DATABASE_URL: db.url,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      PORT: '0',
      HEALTH_PORT: '0',
      WARM_UP: 'false',
      LOG_LEVEL: 'error',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), machineDeadline(60_000))
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  clearTimeout(timer)
  if (code !== 0) throw new Error(`the ${role} process exited with ${code}: ${err.slice(-2_000)}`)
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}')
}

describe('which modules a process loads', () => {
  test(
    'a crawler-only process loads no module of api/ and has no api services',
    async () => {
      const crawler = await bootIn('crawler')
      expect(crawler).toEqual({ services: false, loaded: [] })
    },
    machineDeadline(90_000),
  )

  test(
    'beside the api, the same plugin sees the api modules load',
    async () => {
      const both = await bootIn('all')
      expect(both.services).toBe(true)
      expect(both.loaded).toContain('api/services.ts')
      expect(both.loaded).toContain('api/app.ts')
    },
    machineDeadline(90_000),
  )
})
