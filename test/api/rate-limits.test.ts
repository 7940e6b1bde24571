// Request-rate limits of /api/mcp (shared/rate-limits.ts): per credential, per account, shared between
// replicas, and the hourly cap on audit starts. Each limit is flooded; other accounts carry on untouched.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RequestLimiter } from '../../api/http/request-limit.ts'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import { createAudit } from '../../shared/db/audits.ts'
import type { AppError } from '../../shared/errors.ts'
import { createRedisInfra } from '../../shared/infra/redis.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { MCP_REQUEST_RATES } from '../../shared/rate-limits.ts'
import { MCP_HEADERS } from '../harness/client.ts'
import { dropRedisPrefix, REDIS_URL, startService, type TestService } from '../harness/service.ts'

let svc: TestService

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'api', MCP_RATE_LIMIT_SCALE: '1' })
})
afterAll(() => svc?.stop())

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent }

/** A plain tools/list, without a session: one request, one answer. */
const toolsList = (key: string) =>
  fetch(svc.mcpUrl, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })

async function keysOfOneAccount(n: number): Promise<string[]> {
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, 'free')
  const keys: string[] = []
  for (let i = 0; i < n; i++) keys.push((await createApiKey(sql, account.id)).plaintext)
  return keys
}

describe('per credential', () => {
  test('a flood from one key gets 429 with Retry-After and a JSON-RPC body after its burst; another account is untouched', async () => {
    const [flooder] = await keysOfOneAccount(1)
    const [bystander] = await keysOfOneAccount(1)
    const statuses: number[] = []
    const bystanderStatuses: number[] = []
    let refused: Response | null = null
    for (let i = 0; i < 100; i++) {
      const [res, other] = await Promise.all([toolsList(flooder!), i % 10 === 0 ? toolsList(bystander!) : null])
      statuses.push(res.status)
      if (res.status === 429 && !refused) refused = res
      else await res.body?.cancel()
      if (other) {
        bystanderStatuses.push(other.status)
        await other.body?.cancel()
      }
    }
    const burst = MCP_REQUEST_RATES.perCredential.burst
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(burst)
    // The bucket refills at 2 a second: the loop above takes well under the 20 s that 40 more would need.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(20)
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    const body = await refused!.json()
    expect(body.jsonrpc).toBe('2.0')
    expect(body.error.message).toContain('key or token')
    expect(bystanderStatuses.every((s) => s === 200)).toBe(true)
  })
})

describe('per account', () => {
  test("an account's keys together are held to the account's rate, each key under its own", async () => {
    const keys = await keysOfOneAccount(3)
    const perKey = MCP_REQUEST_RATES.perCredential.burst - 5
    const results = await Promise.all(
      keys.map(async (k) => {
        const out: number[] = []
        for (let i = 0; i < perKey; i++) {
          const res = await toolsList(k)
          out.push(res.status)
          await res.body?.cancel()
        }
        return out
      }),
    )
    const all = results.flat()
    const ok = all.filter((s) => s === 200).length
    // 3 x 55 = 165 requests against an account burst of 150 (plus what refills while they run).
    expect(all.filter((s) => s === 429).length).toBeGreaterThan(0)
    expect(ok).toBeLessThan(keys.length * perKey)
    expect(ok).toBeGreaterThanOrEqual(MCP_REQUEST_RATES.perAccount.burst)
  })
})

describe('between replicas', () => {
  test('two replicas sharing Redis refuse a key once their spending together passes its per-minute rate', async () => {
    const prefix = `test:${Math.random().toString(36).slice(2)}:`
    const infra = await createRedisInfra(REDIS_URL, { claimIdleMs: 60_000, heartbeatMs: 10_000 }, prefix)
    // The start of a shared per-minute window (1,000,000,020 s is a multiple of 60), so all 30 s fall in one.
    let now = 1_000_000_020_000
    const clock = () => now
    const a = new RequestLimiter(infra.kv, 1, silent, clock)
    const b = new RequestLimiter(infra.kv, 1, silent, clock)
    try {
      const { burst, perMinute } = MCP_REQUEST_RATES.perCredential
      let passed = 0
      // Each replica alone allows its burst then its refill; 30 s of steady traffic on both doubles that.
      for (let second = 0; second < 30; second++) {
        for (const r of [a, b]) for (let i = 0; i < 10; i++) if (r.take('cred', `acct-${second}-${i}`).ok) passed++
        await Promise.all([a.flush(), b.flush()])
        now += 1_000
      }
      // Without sharing: 2 x (60 + 30 x 2) = 240. Shared: the minute's rate plus one burst, and one second of lag.
      expect(passed).toBeLessThanOrEqual(perMinute + burst + 20)
      expect(a.take('cred', 'x').ok || b.take('cred', 'y').ok).toBe(false)
    } finally {
      a.close()
      b.close()
      await infra.close()
      await dropRedisPrefix(REDIS_URL, prefix)
    }
  })
})

describe('audit starts', () => {
  test('an account that started 20 audits in the last hour is rate_limited, with retryAfter, and is not charged', async () => {
    const sql = svc.running.services.db.sql
    const account = await createAccount(sql, 'scale')
    const key = (await createApiKey(sql, account.id)).plaintext
    const options = { maxPages: 1, maxDepth: 0, maxDurationSeconds: 5 }
    for (let i = 0; i < 20; i++) await createAudit(sql, account.id, `https://site-${i}.example/`, options)
    const res = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'audit_app', arguments: { url: 'http://127.0.0.1:9/' } },
      }),
    })
    const result = JSON.parse((await res.json()).result.content[0].text)
    expect(result.error.code).toBe('rate_limited')
    expect(result.error.retryAfter).toBeGreaterThan(3_000)
    const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${account.id}`
    expect(row!.n).toBe(20)
    // The same cap where the charge is decided, under the account's lock (start_audit): same error, nothing written.
    const refused = await createAudit(sql, account.id, 'https://site-20.example/', options, 20).then(
      () => null,
      (e: unknown) => e as AppError,
    )
    expect(refused?.code).toBe('rate_limited')
    expect(refused?.message).toMatch(/^This account started 20 audits in the last hour, the most allowed; retry in \d+ s\.$/)
    expect((refused?.details as { retryAfter?: number } | undefined)?.retryAfter).toBeGreaterThan(3_000)
    const [after] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE account_id = ${account.id}`
    expect(after!.n).toBe(20)
  })
})
