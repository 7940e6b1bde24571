// The weekly audit allowance and credits under concurrency, on the real PostgreSQL and on embedded PGlite:
// every charge is a ledger row written under a lock on the account, so parallel calls never overspend.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAccount, createApiKey, type Plan, type Principal } from '../../shared/db/accounts.ts'
import { addCredits, getBalance, refundAudit, WEEKLY_AUDIT_ALLOWANCE } from '../../shared/db/ledger.ts'
import { type AppError, isAppError } from '../../shared/errors.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type Mode, type TestService } from '../harness/service.ts'
import { machineDeadline } from '../harness/machine.ts'

// Answers, so audit_app's check that the start page answers passes; no worker runs in these services
// (ROLE=api), so the audits stay queued and the site is never crawled.
const target = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') })
const TARGET = `http://127.0.0.1:${target.port}/`
afterAll(() => target.stop(true))

describe.each(['production', 'embedded'] as Mode[])('audit allowance and credits (%s)', (mode) => {
  let svc: TestService
  beforeAll(async () => {
    svc = await startService(mode, { ROLE: 'api' })
  }, machineDeadline(60_000))
  afterAll(async () => {
    await svc?.stop()
  })

  const principalOf = async (plan: Plan): Promise<Principal> => {
    const account = await createAccount(svc.running.services.db.sql, plan)
    return { account, credentialId: 'key_test', kind: 'api_key' }
  }
  const ledgerOf = async (accountId: string) => [
    ...(await svc.running.services.db.sql<{ source: string; delta: number; reason: string }[]>`
      SELECT source, delta, reason FROM ledger WHERE account_id = ${accountId} ORDER BY created_at`),
  ]

  test('50 concurrent audits on an allowance of 3 and no credits start exactly 3; the rest are allowance_exhausted', async () => {
    const p = await principalOf('free')
    expect(WEEKLY_AUDIT_ALLOWANCE.free).toBe(3)
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => svc.running.services.audits.start(p, TARGET)))
    const ok = results.filter((r) => r.status === 'fulfilled')
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    expect(ok).toHaveLength(3)
    expect(refused).toHaveLength(47)
    for (const r of refused) {
      expect(isAppError(r.reason)).toBe(true)
      const e = r.reason as AppError
      expect(e.code).toBe('allowance_exhausted')
      expect(e.details).toMatchObject({ allowance: 3, used: 3, credits: 0 })
      // Next Monday, 00:00 UTC.
      const resets = new Date(e.details.resetsAt as string)
      expect(resets.getUTCDay()).toBe(1)
      expect(resets.getUTCHours()).toBe(0)
      expect(resets.getTime()).toBeGreaterThan(Date.now())
      expect(resets.getTime() - Date.now()).toBeLessThanOrEqual(7 * 86_400_000)
    }
    const sql = svc.running.services.db.sql
    const [audits] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE account_id = ${p.account.id}`
    expect(audits!.n).toBe(3)
    expect(await ledgerOf(p.account.id)).toEqual(Array.from({ length: 3 }, () => ({ source: 'allowance', delta: -1, reason: 'audit' })))
    expect(await getBalance(sql, p.account.id)).toMatchObject({ allowance: 3, used: 3, credits: 0 })
  }, 60_000)

  test('past the allowance each audit spends one credit, and credits never go below zero', async () => {
    const p = await principalOf('free')
    const sql = svc.running.services.db.sql
    expect(await addCredits(sql, p.account.id, 2, 'grant', `test:${p.account.id}`)).toBe(true)
    // The same grant again (a retried webhook) adds nothing.
    expect(await addCredits(sql, p.account.id, 2, 'grant', `test:${p.account.id}`)).toBe(false)
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => svc.running.services.audits.start(p, TARGET)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5)
    const [row] = await sql<{ credits: number }[]>`SELECT credits FROM accounts WHERE id = ${p.account.id}`
    expect(row!.credits).toBe(0)
    const sources = (await sql<{ charged_from: string }[]>`SELECT charged_from FROM audits WHERE account_id = ${p.account.id}`)
      .map((r) => r.charged_from)
      .sort()
    expect(sources).toEqual(['allowance', 'allowance', 'allowance', 'credits', 'credits'])
    const [sum] = await sql<
      { s: number }[]
    >`SELECT sum(delta)::int AS s FROM ledger WHERE account_id = ${p.account.id} AND source = 'credits'`
    expect(sum!.s).toBe(0)
  }, 60_000)

  test('a refund gives the charge back exactly once, however often it is asked for', async () => {
    const p = await principalOf('free')
    const sql = svc.running.services.db.sql
    await addCredits(sql, p.account.id, 1, 'purchase', `test:buy:${p.account.id}`)
    const started = []
    for (let i = 0; i < 4; i++) started.push(await svc.running.services.audits.start(p, TARGET))
    const byCredit = started[3]!.auditId
    const byAllowance = started[0]!.auditId
    const refunds = await Promise.all([
      refundAudit(sql, byCredit),
      refundAudit(sql, byCredit),
      refundAudit(sql, byAllowance),
      refundAudit(sql, byAllowance),
    ])
    expect(refunds.filter(Boolean)).toHaveLength(2)
    expect(await getBalance(sql, p.account.id)).toMatchObject({ used: 2, credits: 1 })
    const [a] = await sql<{ refunded: boolean }[]>`SELECT refunded FROM audits WHERE id = ${byCredit}`
    expect(a!.refunded).toBe(true)
    // The refunded allowance is usable again.
    await svc.running.services.audits.start(p, TARGET)
    expect(await getBalance(sql, p.account.id)).toMatchObject({ used: 3, credits: 1 })
  }, 60_000)

  test('through MCP: 50 concurrent audit_app calls from one client start exactly 3', async () => {
    const account = await createAccount(svc.running.services.db.sql, 'free')
    const key = (await createApiKey(svc.running.services.db.sql, account.id)).plaintext
    const client = await connectClient(svc.mcpUrl, key)
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          client.callTool({ name: 'audit_app', arguments: { url: TARGET } }, undefined, { timeout: 60_000 }),
        ),
      )
      const ok = results.filter((r) => !r.isError).map(payload)
      const errors = results.filter((r) => r.isError).map((r) => payload(r).error)
      expect(ok).toHaveLength(3)
      for (const s of ok) expect(s.auditId).toMatch(/^aud_/)
      expect(errors).toHaveLength(47)
      for (const e of errors) expect(e).toMatchObject({ code: 'allowance_exhausted', allowance: 3, used: 3, credits: 0 })
      const acct = payload(await client.callTool({ name: 'get_account', arguments: {} }))
      expect(acct.audits).toMatchObject({ weeklyAllowance: 3, usedThisWeek: 3, credits: 0 })
    } finally {
      await client.close()
    }
  }, 90_000)
})
