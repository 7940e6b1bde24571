// Migrations: applied at start, idempotent, and the same schema on PGlite and PostgreSQL.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate, openDatabase, type Database } from '../../shared/db/index.ts'
import { createAccount, createApiKey, findPrincipalByApiKey } from '../../shared/db/accounts.ts'
import { completeScan, createScan, getScan, markScanRunning } from '../../shared/db/scans.ts'
import { freshDatabase } from '../harness/service.ts'

const dir = mkdtempSync(join(tmpdir(), 'appaudit-db-'))
const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const c of cleanups) await c()
  rmSync(dir, { recursive: true, force: true })
})

async function both(): Promise<[Database, Database]> {
  const pg = await freshDatabase()
  const a = await openDatabase({ databaseUrl: pg.url, dataDir: dir })
  const b = await openDatabase({ databaseUrl: '', dataDir: dir })
  cleanups.push(async () => {
    await a.close()
    await b.close()
    await pg.drop()
  })
  return [a, b]
}

const schemaOf = (db: Database) => db.sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string }[]>`
  SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
  WHERE table_schema = 'public' ORDER BY table_name, column_name`

describe('migrations', () => {
  test('give PostgreSQL and PGlite the same tables and columns, and run again as a no-op', async () => {
    const [pg, lite] = await both()
    const [a, b] = await Promise.all([schemaOf(pg), schemaOf(lite)])
    expect(a.length).toBeGreaterThan(20)
    expect([...b]).toEqual([...a])
    expect(await migrate(pg.sql)).toEqual([])
    expect(await migrate(lite.sql)).toEqual([])
    for (const t of ['accounts', 'api_keys', 'apps', 'scans']) expect(a.some((c) => c.table_name === t)).toBe(true)
  })

  test('the same queries work on both engines', async () => {
    for (const db of await both()) {
      const account = await createAccount(db.sql, 'launch')
      const key = await createApiKey(db.sql, account.id)
      expect((await findPrincipalByApiKey(db.sql, key.plaintext))?.account.plan).toBe('launch')
      const scan = await createScan(db.sql, account.id, 'https://www.example.com/')
      expect(await markScanRunning(db.sql, scan.id, 'w1')).toBe(true)
      await completeScan(db.sql, scan.id, { score: 90, grade: 'A' })
      const row = await getScan(db.sql, account.id, scan.id)
      expect(row?.status).toBe('completed')
      expect(row?.report).toEqual({ score: 90, grade: 'A' })
      // A finished scan cannot be claimed again by a late redelivery.
      expect(await markScanRunning(db.sql, scan.id, 'w2')).toBe(false)
    }
  })

  test('the embedded database keeps its data across a reopen', async () => {
    const d = mkdtempSync(join(tmpdir(), 'appaudit-reopen-'))
    const first = await openDatabase({ databaseUrl: '', dataDir: d })
    const account = await createAccount(first.sql, 'free', 'kept')
    await first.close()
    const second = await openDatabase({ databaseUrl: '', dataDir: d })
    const [row] = await second.sql`SELECT name FROM accounts WHERE id = ${account.id}`
    await second.close()
    rmSync(d, { recursive: true, force: true })
    expect(row?.name).toBe('kept')
  })
})
