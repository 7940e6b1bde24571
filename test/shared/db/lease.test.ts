// The lease a process holds on a job's row (shared/db/lease.ts), on PostgreSQL, for both leased tables:
// one taker wins, only the holder renews or hands back, an expired lease can be taken over, and unheld rows
// are what recovery dispatches again.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAccount } from '../../../shared/db/accounts.ts'
import { createAudit, getAuditById } from '../../../shared/db/audits.ts'
import { insertDirectoryRun } from '../../../shared/db/directory-runs.ts'
import { type Database, openDatabase } from '../../../shared/db/index.ts'
import { claimLease, type LeasedTable, releaseLease, renewLease, unheldRows } from '../../../shared/db/lease.ts'
import { newId } from '../../../shared/lib/ids.ts'
import { freshDatabase } from '../../harness/service.ts'

const dir = mkdtempSync(join(tmpdir(), 'appaudit-lease-'))
let db: Database
let drop: () => Promise<void>
const rows: Record<LeasedTable, string> = { audits: '', directory_runs: '' }

beforeAll(async () => {
  const pg = await freshDatabase()
  drop = pg.drop
  db = await openDatabase({ databaseUrl: pg.url, dataDir: dir })
  const account = await createAccount(db.sql, 'scale')
  const options = { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 }
  rows.audits = (await createAudit(db.sql, account.id, 'https://app.example.com/', options)).id
  const run = await insertDirectoryRun(
    db.sql,
    { id: newId('dir'), accountId: account.id, credentialId: 'key', mode: 'scan', options: {}, urls: ['https://app.example.com/'] },
    2,
  )
  rows.directory_runs = run!.id
}, 60_000)
afterAll(async () => {
  await db?.close()
  await drop?.()
  rmSync(dir, { recursive: true, force: true })
})

describe.each(['audits', 'directory_runs'] as const)('the lease on %s', (table) => {
  test('one taker wins; only the holder renews; a handed-back row is queued and free for the next taker', async () => {
    const id = rows[table]
    const first = await claimLease<{ status: string; worker: string; attempts: number }>(db.sql, table, id, 'w1', 30_000)
    expect(first).toMatchObject({ status: 'running', worker: 'w1', attempts: 1 })
    expect(await claimLease(db.sql, table, id, 'w2', 30_000)).toBeUndefined()
    expect(await renewLease(db.sql, table, id, 'w2', 30_000)).toBe(false)
    expect(await renewLease(db.sql, table, id, 'w1', 30_000)).toBe(true)
    expect(await releaseLease(db.sql, table, id, 'w2')).toBe(false)
    expect(await releaseLease(db.sql, table, id, 'w1', table === 'audits' ? 'current_url' : undefined)).toBe(true)
    const [row] = await db.sql<{ status: string; worker: string | null; lease_until: Date | null }[]>`
      SELECT status, worker, lease_until FROM ${db.sql(table)} WHERE id = ${id}`
    expect(row).toEqual({ status: 'queued', worker: null, lease_until: null })
    expect(await claimLease(db.sql, table, id, 'w2', 30_000)).toMatchObject({ worker: 'w2', attempts: 2 })
  })

  test('an expired lease is taken over, and its old holder can no longer renew it', async () => {
    const id = rows[table]
    await db.sql`UPDATE ${db.sql(table)} SET lease_until = now() - interval '1 second' WHERE id = ${id}`
    expect(await unheldRows(db.sql, table, 0, 10)).toContain(id)
    expect(await claimLease(db.sql, table, id, 'w3', 30_000)).toMatchObject({ worker: 'w3' })
    expect(await renewLease(db.sql, table, id, 'w2', 30_000)).toBe(false)
    expect(await unheldRows(db.sql, table, 0, 10)).not.toContain(id)
  })
})

test('an audit handed back loses its current URL with its lease', async () => {
  const id = rows.audits
  await db.sql`UPDATE audits SET current_url = 'https://app.example.com/a' WHERE id = ${id}`
  expect(await releaseLease(db.sql, 'audits', id, 'w3', 'current_url')).toBe(true)
  expect((await getAuditById(db.sql, id))?.progress.currentUrl).toBeNull()
})
