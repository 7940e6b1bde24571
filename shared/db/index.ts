// One database interface over two engines: PostgreSQL (DATABASE_URL) or embedded PGlite on disk.
// Both are spoken to with the same `postgres` client, so every query above this file is identical.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import type { Logger } from '../lib/log.ts'

export type Sql = postgres.Sql

export interface Database {
  sql: Sql
  kind: 'postgres' | 'pglite'
  close(): Promise<void>
}

export interface OpenOptions {
  databaseUrl: string
  dataDir: string
  log?: Logger
  /** Pool size for PostgreSQL. PGlite always uses one connection (more corrupt each other's state). */
  max?: number
}

const MIGRATIONS_DIR = join(import.meta.dir, 'migrations')

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const db = opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.max ?? 10) : await openPglite(opts.dataDir)
  try {
    const applied = await migrate(db.sql)
    if (applied.length) opts.log?.info('migrations applied', { engine: db.kind, applied })
  } catch (e) {
    await db.close()
    throw e
  }
  return db
}

/**
 * What every client here is opened with. `fetch_types: false`: by default postgres.js (3.4.9) asks each new
 * connection for the server's array types in a promise nobody awaits, so a connection lost during that
 * question (PostgreSQL restarting, a failover) ends in an unhandled rejection that can stop the process
 * (porsager/postgres#1192, #1223; test/shared/db/connection-lost.test.ts). No query here sends or reads an array
 * value; the answer only taught the client to parse and send arrays.
 */
const CLIENT_OPTIONS = { onnotice: () => {}, connect_timeout: 10, fetch_types: false } as const

/** A client of the PostgreSQL at `url`, with at most `max` connections, each closed after 30 s idle. */
export function postgresClient(url: string, max: number): Sql {
  return postgres(url, { ...CLIENT_OPTIONS, max, idle_timeout: 30 })
}

function openPostgres(url: string, max: number): Database {
  const sql = postgresClient(url, max)
  return { sql, kind: 'postgres', close: () => sql.end({ timeout: 5 }) }
}

async function openPglite(dataDir: string): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
  const dir = join(dataDir, 'pglite')
  mkdirSync(dir, { recursive: true })
  const pg = await PGlite.create(dir)
  const server = new PGLiteSocketServer({ db: pg, host: '127.0.0.1', port: 0, maxConnections: 1 })
  await server.start()
  const conn = server.getServerConn()
  const port = Number(conn.split(':').pop())
  const sql = postgres({
    host: '127.0.0.1',
    port,
    database: 'postgres',
    username: 'postgres',
    // Prepared statements are per connection; with one connection they stay valid.
    max: 1,
    ...CLIENT_OPTIONS,
  })
  return {
    sql,
    kind: 'pglite',
    async close() {
      await sql.end({ timeout: 5 })
      await server.stop()
      await pg.close()
    },
  }
}

/** Applies every migration not yet recorded, each in its own transaction, under an advisory lock. */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
  const applied: string[] = []
  await sql.begin(async (tx) => {
    // One migrator at a time across replicas starting together.
    await tx`SELECT pg_advisory_xact_lock(727274)`
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
    const done = new Set((await tx<{ version: number }[]>`SELECT version FROM schema_migrations`).map((r) => r.version))
    for (const file of files) {
      const version = Number(file.slice(0, 3))
      if (done.has(version)) continue
      await tx.unsafe(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'))
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${version}, ${file})`
      applied.push(file)
    }
  })
  return applied
}
