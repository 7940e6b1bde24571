// The production layout for the capacity bench: a throwaway PostgreSQL database and a Redis key prefix of the
// test harness's (test/harness/service.ts), an api process (`bun server/main.ts`, ROLE=api) and a crawler
// process (`bun server/crawler.ts`) started as the soak starts them (bench/soak-lib/procs.ts), accounts with
// API keys made in the database, and one official MCP SDK client per key. Everything is removed by stop().
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAccount, createApiKey, type Plan } from '../../shared/db/accounts.ts'
import { openDatabase, type Database } from '../../shared/db/index.ts'
import { connectClient } from '../../test/harness/client.ts'
import { dropRedisPrefix, freshDatabase, REDIS_URL } from '../../test/harness/service.ts'
import { type Slot, signalSlot, startSlot } from '../soak-lib/procs.ts'
import { withTimeout } from '../lib/stats.ts'

export interface Account {
  name: string
  key: string
  client: Client
}

export interface Layout {
  db: Database
  api: Slot
  crawler: Slot
  accounts: Account[]
  logDir: string
  /** Scans by status now ('queued', 'running'), from the database. */
  queue(): Promise<{ queued: number; running: number }>
  stop(): Promise<void>
}

export const pidOf = (slot: Slot): number => slot.lives.at(-1)?.pid ?? -1

/**
 * Starts the layout. `env` adds settings for both processes (e.g. WORKER_CONCURRENCY); `accounts` are the
 * plans of the accounts to make, one key and one client each.
 */
export async function startLayout(opts: { accounts: Plan[]; env?: Record<string, string>; readyMs?: number }): Promise<Layout> {
  const pg = await freshDatabase()
  const prefix = `test:${randomBytes(4).toString('hex')}:`
  const logDir = mkdtempSync(join(tmpdir(), 'appaudit-capacity-'))
  const slots: Slot[] = (['api', 'crawler'] as const).map((role) => ({ name: role, role, proc: null, mcpUrl: null, lives: [] }))
  let db: Database | null = null
  const clients: Client[] = []
  const stop = async () => {
    for (const c of clients) await withTimeout(c.close(), 5_000, 'client close').catch(() => {})
    await Promise.all(slots.map((s) => signalSlot(s, 'SIGTERM', 30_000).catch(() => 0)))
    await db?.close().catch(() => {})
    await dropRedisPrefix(REDIS_URL, prefix).catch(() => 0)
    await pg.drop().catch(() => {})
    rmSync(logDir, { recursive: true, force: true })
  }
  try {
    // Migrated here, once, before either process starts (each would otherwise take the migration lock in turn).
    db = await openDatabase({ databaseUrl: pg.url, dataDir: logDir, max: 3 })
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATABASE_URL: pg.url,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      ALLOW_PRIVATE_TARGETS: 'true',
      // The default, as deployed; the crawler's ready line is an info line.
      LOG_LEVEL: 'info',
      ...opts.env,
    }
    await Promise.all(slots.map((s) => startSlot(s, { env, logDir }, opts.readyMs ?? 120_000)))
    const mcpUrl = slots[0]!.mcpUrl
    if (!mcpUrl) throw new Error('the api printed no MCP endpoint')
    const accounts: Account[] = []
    for (const [i, plan] of opts.accounts.entries()) {
      const account = await createAccount(db.sql, plan, `capacity ${i + 1}`)
      const key = (await createApiKey(db.sql, account.id)).plaintext
      const client = await withTimeout(connectClient(mcpUrl, key), 30_000, 'MCP client connect')
      clients.push(client)
      accounts.push({ name: `${plan}-${i + 1}`, key, client })
    }
    const sql = db.sql
    return {
      db,
      api: slots[0]!,
      crawler: slots[1]!,
      accounts,
      logDir,
      async queue() {
        const rows = await sql<{ status: string; n: number }[]>`
          SELECT status, count(*)::int AS n FROM scans WHERE status IN ('queued', 'running') GROUP BY status`
        const n = (s: string) => rows.find((r) => r.status === s)?.n ?? 0
        return { queued: n('queued'), running: n('running') }
      },
      stop,
    }
  } catch (e) {
    await stop()
    throw e
  }
}
