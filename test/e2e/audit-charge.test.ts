// What an audit costs when its start page is not there: audit_app asks the start URL first and refuses one
// that does not answer (target_unreachable, nothing charged); an audit whose start page then cannot be
// loaded by the crawler fails and is refunded at once. Real service, worker, PostgreSQL and Chromium.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

describe('audit charges when the start page is not there', () => {
  let svc: TestService
  let client: Client
  let accountId: string
  const servers: Array<{ stop(force?: boolean): unknown }> = []

  beforeAll(async () => {
    svc = await startService('production', { JOB_CLAIM_IDLE_MS: '6000' })
    const sql = svc.running.services.db.sql
    const account = await createAccount(sql, 'free')
    accountId = account.id
    client = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
  }, machineDeadline(60_000))
  afterAll(async () => {
    await client?.close()
    await svc?.stop()
    for (const s of servers) s.stop(true)
  }, 60_000)

  const ledger = async () => [
    ...(await svc.running.services.db.sql<{ delta: number; reason: string; audit_id: string | null }[]>`
      SELECT delta, reason, audit_id FROM ledger WHERE account_id = ${accountId} ORDER BY created_at, reason`),
  ]
  const account = async () => payload(await client.callTool({ name: 'get_account', arguments: {} })).audits
  const finished = (auditId: string) =>
    until(
      async () => {
        const a = payload(await client.callTool({ name: 'get_audit', arguments: { auditId } }))
        return (a.status === 'completed' || a.status === 'failed') && a
      },
      90_000,
      'the audit to finish',
      { everyMs: 250 },
    )

  test('a closed loopback port is refused with target_unreachable, and the allowance and ledger do not move', async () => {
    // A port that was just free: nothing listens on it.
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = probe.port
    probe.stop(true)
    const before = { ledger: await ledger(), account: await account(), balance: await getBalance(svc.running.services.db.sql, accountId) }
    const t0 = Date.now()
    const r = await client.callTool({ name: 'audit_app', arguments: { url: `http://127.0.0.1:${port}/` } })
    expect(Date.now() - t0).toBeLessThan(machineDeadline(8_000))
    expect(r.isError).toBe(true)
    const { error } = payload(r)
    expect(error.code).toBe('target_unreachable')
    expect(error.message).toContain('nothing was charged')
    expect(await ledger()).toEqual(before.ledger)
    expect(await account()).toEqual(before.account)
    expect(await getBalance(svc.running.services.db.sql, accountId)).toEqual(before.balance)
    expect(before.balance.used).toBe(0)
    const [n] = await svc.running.services.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE account_id = ${accountId}`
    expect(n!.n).toBe(0)
  }, 30_000)

  test('a start page that dies after audit_app accepted it fails the audit, refunded at once', async () => {
    // Answers audit_app's check, then goes away before the crawler gets to it.
    let answered = 0
    const dying = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch() {
        answered++
        setTimeout(() => dying.stop(true), 0)
        return new Response('<!doctype html><title>up for a moment</title>', { headers: { 'content-type': 'text/html' } })
      },
    })
    servers.push(dying)
    const started = payload(await client.callTool({ name: 'audit_app', arguments: { url: `http://127.0.0.1:${dying.port}/` } }))
    expect(started.auditId).toMatch(/^aud_/)
    expect((await account()).usedThisWeek).toBe(1)
    const a = await finished(started.auditId)
    expect(answered).toBe(1)
    expect(a.status).toBe('failed')
    expect(a.error.code).toBe('target_unreachable')
    expect(a.error.message).toMatch(/start page could not be loaded/i)
    expect(a.error.message).toMatch(/refunded/)
    expect(a.progress.refunded).toBe(true)
    expect(a.charge).toEqual({ from: 'allowance', refunded: true })
    const rows = (await ledger()).filter((l) => l.audit_id === started.auditId)
    expect(rows.map((l) => [l.reason, l.delta])).toEqual([
      ['audit', -1],
      ['refund', 1],
    ])
    expect((await account()).usedThisWeek).toBe(0)
  }, 120_000)

  test('a start page that answers only with errors fails the audit as nothing loaded, refunded', async () => {
    const broken = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () =>
        new Response('<!doctype html><title>Down for maintenance</title>', { status: 503, headers: { 'content-type': 'text/html' } }),
    })
    servers.push(broken)
    const started = payload(await client.callTool({ name: 'audit_app', arguments: { url: `http://127.0.0.1:${broken.port}/` } }))
    const a = await finished(started.auditId)
    expect(a.status).toBe('failed')
    expect(a.error.message).toMatch(/No page of the site could be loaded/)
    expect(a.error.message).toMatch(/refunded/)
    expect(a.progress.refunded).toBe(true)
    expect((await account()).usedThisWeek).toBe(0)
  }, 120_000)
})
