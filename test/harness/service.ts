// Boots the real service for a test file: the embedded default (PGlite + in-process queue) or the
// production path (a fresh PostgreSQL database and a Redis key prefix of its own), on port 0.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Services } from '../../api/services.ts'
import { boot, type Running } from '../../server/boot.ts'
import { loadConfig } from '../../shared/config.ts'
import { createAccount, createApiKey, type Plan } from '../../shared/db/accounts.ts'
import { postgresClient } from '../../shared/db/index.ts'
import { randomBytes } from 'node:crypto'
import { createClient } from '@redis/client'
import { createLogger } from '../../shared/lib/log.ts'

export type Mode = 'embedded' | 'production'

export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

export interface TestService {
  mode: Mode
  /** What boot() returned; a crawler-only service's `services` throw when read (it loads no api). */
  running: Running & { services: Services }
  url: string
  mcpUrl: string
  /** A new account of the plan, with a new key; returns the key's plaintext. */
  key(plan?: Plan): Promise<string>
  stop(): Promise<void>
}

/** What a crawler-only service has for `services`: nothing, said when a test reaches for it. */
function noApiServices(): Services {
  return new Proxy({} as Services, {
    get(_, name) {
      throw new Error(`a crawler-only service loads no api, so it has no services.${String(name)}`)
    },
  })
}

/** A throwaway PostgreSQL database; dropped by the returned function. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `appaudit_test_${randomBytes(6).toString('hex')}`
  const admin = postgresClient(PG_ADMIN_URL, 1)
  await admin.unsafe(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`)
  return {
    url,
    async drop() {
      const a = postgresClient(PG_ADMIN_URL, 1)
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
      await a.end()
    },
  }
}

/** Deletes every key under a harness prefix (test:...), bounded in rounds and time. */
export async function dropRedisPrefix(url: string, prefix: string): Promise<number> {
  if (!prefix.startsWith('test:')) return 0
  const client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: 3_000, reconnectStrategy: false } })
  await client.connect()
  let deleted = 0
  try {
    const deadline = Date.now() + 10_000
    let cursor = '0'
    for (let round = 0; round < 10_000 && Date.now() < deadline; round++) {
      const r = await client.scan(cursor, { MATCH: `${prefix}*`, COUNT: 500 })
      if (r.keys.length) deleted += await client.del(r.keys)
      cursor = String(r.cursor)
      if (cursor === '0') break
    }
  } finally {
    await client.quit().catch(() => {})
  }
  return deleted
}

export async function startService(mode: Mode, env: Record<string, string> = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'appaudit-test-'))
  const db = mode === 'production' ? await freshDatabase() : null
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ALLOW_PRIVATE_TARGETS: 'true',
    DATA_DIR: dataDir,
    DATABASE_URL: db?.url ?? '',
    REDIS_URL: mode === 'production' ? REDIS_URL : '',
    REDIS_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
    PROBE_TIMEOUT_MS: '3000',
    NAV_TIMEOUT_MS: '5000',
    // A scan takes about a second on a quiet machine; a test's scans wait far longer, so a machine several
    // times slower (a crawl test beside, four scans at once) still gets its reports. Tests of the wait
    // itself set their own.
    SCAN_TIMEOUT_MS: '90000',
    // Request-rate limits are tested on their own (test/api/rate-limits.test.ts); elsewhere a test's bursts
    // of calls are not what is being measured.
    MCP_RATE_LIMIT_SCALE: '0',
    // The crawler's warm-up scan at start (crawler/warm-up.ts) is tested on its own and in the processes the
    // child-process harnesses start; here it would add a scan to each of the suite's service starts.
    WARM_UP: 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    ...env,
  })
  const booted = await boot(config, createLogger(config.LOG_LEVEL))
  const running = { ...booted, services: booted.services ?? noApiServices() }
  const url = `http://127.0.0.1:${running.port}`
  return {
    mode,
    running,
    url,
    mcpUrl: `${url}/api/mcp`,
    async key(plan: Plan = 'free') {
      const account = await createAccount(running.services.db.sql, plan)
      return (await createApiKey(running.services.db.sql, account.id)).plaintext
    },
    async stop() {
      await running.stop()
      if (config.REDIS_URL) await dropRedisPrefix(config.REDIS_URL, config.REDIS_PREFIX).catch(() => 0)
      await db?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
