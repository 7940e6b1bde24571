// Recovery re-dispatches exactly the unfinished scans whose job the queue lost, and fails abandoned ones.
import { afterAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { recoverAudits, recoverScans } from '../../crawler/recovery-loop.ts'
import { createAccount } from '../../shared/db/accounts.ts'
import { createAudit, getAuditById } from '../../shared/db/audits.ts'
import { openDatabase } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { createScan, getScanById } from '../../shared/db/scans.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { createMemoryInfra } from '../../shared/infra/memory.ts'
import { createRedisInfra } from '../../shared/infra/redis.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { freshDatabase, REDIS_URL } from '../harness/service.ts'

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

const TUNING = { claimIdleMs: 60_000, heartbeatMs: 15_000 }

describe.each([
  ['memory', async () => createMemoryInfra(TUNING)],
  ['redis', async () => createRedisInfra(REDIS_URL, TUNING, `test:${randomBytes(4).toString('hex')}:`)],
] as Array<[string, () => Promise<Infra>]>)('recovery with the %s queue', (_n, make) => {
  test('dispatches lost scans once, leaves held and young ones, fails abandoned ones', async () => {
    const pg = await freshDatabase()
    const db = await openDatabase({ databaseUrl: pg.url, dataDir: '/tmp' })
    const infra = await make()
    cleanups.push(async () => {
      await infra.close()
      await db.close()
      await pg.drop()
    })
    const account = await createAccount(db.sql, 'free')
    const scan = (age: number) =>
      createScan(db.sql, account.id, 'https://www.example.com/').then(async (s) => {
        await db.sql`UPDATE scans SET created_at = now() - make_interval(secs => ${age}) WHERE id = ${s.id}`
        return s.id
      })
    const lost = await scan(60)
    const held = await scan(60)
    const young = await scan(1)
    const abandoned = await scan(4_000)
    const done = await scan(60)
    await db.sql`UPDATE scans SET status = 'completed' WHERE id = ${done}`
    await infra.queue.enqueue({ kind: 'scan', ref: held })

    const log = createLogger('error')
    const first = await recoverScans(db.sql, infra.queue, log, { graceSeconds: 15, abandonSeconds: 600 })
    expect(first).toEqual({ failed: 1, redispatched: 1 })
    expect([...(await infra.queue.heldRefs('scan'))].sort()).toEqual([held, lost].sort())
    expect((await getScanById(db.sql, abandoned))?.status).toBe('failed')
    expect((await getScanById(db.sql, young))?.status).toBe('queued')
    // Running it again changes nothing: the lost scan is held now.
    expect(await recoverScans(db.sql, infra.queue, log, { graceSeconds: 15, abandonSeconds: 600 })).toEqual({ failed: 0, redispatched: 0 })
  })
  test('dispatches audits no worker holds, leaves leased, queued-up and young ones, fails and refunds abandoned ones', async () => {
    const pg = await freshDatabase()
    const db = await openDatabase({ databaseUrl: pg.url, dataDir: '/tmp' })
    const infra = await make()
    cleanups.push(async () => {
      await infra.close()
      await db.close()
      await pg.drop()
    })
    const account = await createAccount(db.sql, 'scale')
    const audit = (age: number) =>
      createAudit(db.sql, account.id, 'https://www.example.com/', { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 }).then(async (a) => {
        await db.sql`UPDATE audits SET created_at = now() - make_interval(secs => ${age}) WHERE id = ${a.id}`
        return a.id
      })
    const lost = await audit(60)
    const expired = await audit(60)
    const leased = await audit(60)
    const held = await audit(60)
    const young = await audit(1)
    const abandoned = await audit(7_200)
    await db.sql`UPDATE audits SET status = 'running', worker = 'dead', lease_until = now() - interval '5 seconds' WHERE id = ${expired}`
    await db.sql`UPDATE audits SET status = 'running', worker = 'alive', lease_until = now() + interval '1 minute' WHERE id = ${leased}`
    await infra.queue.enqueue({ kind: 'audit', ref: held })
    expect((await getBalance(db.sql, account.id)).used).toBe(6)

    const log = createLogger('error')
    const opts = { graceSeconds: 15, abandonSeconds: 3_600 }
    expect(await recoverAudits(db.sql, infra, log, opts)).toEqual({ failed: 1, redispatched: 2 })
    expect([...(await infra.queue.heldRefs('audit'))].sort()).toEqual([expired, held, lost].sort())
    const gone = await getAuditById(db.sql, abandoned)
    expect(gone).toMatchObject({ status: 'failed', refunded: true, error: { code: 'audit_failed' } })
    expect((await getBalance(db.sql, account.id)).used).toBe(5)
    expect((await getAuditById(db.sql, young))?.status).toBe('queued')
    expect((await getAuditById(db.sql, leased))?.worker).toBe('alive')
    // Again: nothing to do, and the refund is not repeated.
    expect(await recoverAudits(db.sql, infra, log, opts)).toEqual({ failed: 0, redispatched: 0 })
    expect((await getBalance(db.sql, account.id)).used).toBe(5)
  })
})
