// The internal cron routes on the real service, production and embedded: the shared secret, and
// jobs that do what one run does however many calls arrive at once (no double refund, no double dispatch).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { cronRoutes } from '../../api/cron/index.ts'
import { startCronSchedule } from '../../api/cron/service.ts'
import { createAccount } from '../../shared/db/accounts.ts'
import { createAudit } from '../../shared/db/audits.ts'
import { insertDirectoryRun } from '../../shared/db/directory-runs.ts'
import { listAuditFrames, storeAuditFrame } from '../../shared/db/audit-frames.ts'
import { REPLAY_RETENTION_S } from '../../shared/db/expiry.ts'
import type { Sql } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { createClient, createCode, createToken } from '../../shared/db/oauth.ts'
import { createScan, getScanById } from '../../shared/db/scans.ts'
import { createSession, upsertUser } from '../../shared/db/users.ts'
import { newId, sha256Hex } from '../../shared/lib/ids.ts'
import { createLogger, type Logger } from '../../shared/lib/log.ts'
import { recoverAudits } from '../../shared/jobs/recovery.ts'
import { PG_ADMIN_URL, startService, type Mode, type TestService } from '../harness/service.ts'
import { until, within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const SECRET = `cron-${randomBytes(24).toString('hex')}`
/** For the failures a test causes on purpose: logged by the service, not worth printing here. */
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent }
type Answer = Record<string, unknown>

/** Adds two answers' counts (a skipped run counts nothing), so two runs can be compared with one. */
function combined(a: Answer, b: Answer): Answer {
  const out: Answer = {}
  for (const r of [a, b]) {
    if (r.skipped) continue
    for (const [k, v] of Object.entries(r)) if (typeof v === 'number') out[k] = ((out[k] as number) ?? 0) + v
  }
  return out
}

const ago = (sql: Sql, table: string, column: string, id: string, seconds: number) =>
  sql.unsafe(`UPDATE ${table} SET ${column} = now() - make_interval(secs => $1) WHERE id = $2`, [seconds, id])

describe.each(['production', 'embedded'] as Mode[])('/api/cron/* (%s)', (mode) => {
  let svc: TestService
  let sql: Sql
  beforeAll(async () => {
    svc = await startService(mode, { ROLE: 'api', CRON_SECRET: SECRET })
    sql = svc.running.services.db.sql
  }, machineDeadline(60_000))
  afterAll(async () => {
    await svc?.stop()
  })

  const call = (job: string, authorization: string | null = `Bearer ${SECRET}`, method = 'POST') =>
    within(
      fetch(`${svc.url}/api/cron/${job}`, { method, headers: authorization === null ? {} : { authorization } }),
      60_000,
      `${method} /api/cron/${job}`,
    )
  const run = async (job: string) => {
    const res = await call(job)
    expect(res.status).toBe(200)
    return (await res.json()) as Answer
  }

  test('refuses a missing or wrong secret with 401 JSON, whatever the job, and sends no CORS headers', async () => {
    const basic = `Basic ${Buffer.from(`cron:${SECRET}`).toString('base64')}`
    for (const auth of [null, 'Bearer', 'Bearer wrong', `Bearer ${SECRET}x`, `Bearer ${SECRET.slice(0, -1)}`, basic, SECRET]) {
      for (const job of ['expire', 'no-such-job']) {
        const res = await call(job, auth)
        expect(res.status).toBe(401)
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="cron"')
        expect(res.headers.get('access-control-allow-origin')).toBeNull()
        expect(await res.json()).toMatchObject({ error: 'unauthorized' })
      }
    }
  })

  test('with the secret: 405 for a GET, 404 JSON naming the jobs for an unknown one; the scheme is case-insensitive', async () => {
    const get = await call('expire', `Bearer ${SECRET}`, 'GET')
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    const unknown = await call('no-such-job')
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ error: 'unknown_job', jobs: ['expire', 'recover', 'monitors'] })
    const lower = await call('monitors', `bearer ${SECRET}`)
    expect(lower.status).toBe(200)
    expect(lower.headers.get('cache-control')).toBe('no-store')
  })

  test('monitors answer with what they ran: nothing is due on a fresh database', async () => {
    const answers = await Promise.all([run('monitors'), run('monitors')])
    const ran = answers.filter((r) => !r.skipped)
    expect(ran.length).toBeGreaterThanOrEqual(1)
    for (const r of ran) {
      expect(r).toEqual({ job: 'monitors', due: 0, started: 0, refused: 0, deferred: 0, errors: 0, settled: 0, alerts: 0, pending: 0 })
    }
  })

  test('expire deletes old codes, expired sessions and tokens, and unused old clients, once when run twice at once', async () => {
    const user = await upsertUser(sql, { issuer: 'urn:test', subject: randomBytes(8).toString('hex'), email: '', name: '' })
    const redirect = ['http://127.0.0.1/callback']
    const client = async (name: string, ageDays: number) => {
      const c = await createClient(sql, name, redirect)
      await ago(sql, 'oauth_clients', 'created_at', c.id, ageDays * 86_400)
      return c.id
    }
    const code = async (clientId: string, expiredSecondsAgo: number) =>
      sha256Hex(
        await createCode(sql, {
          clientId,
          accountId: user.accountId,
          userId: user.id,
          redirectUri: redirect[0]!,
          codeChallenge: 'x'.repeat(43),
          resource: null,
          expiresAt: new Date(Date.now() - expiredSecondsAgo * 1000),
        }),
      )
    const token = async (clientId: string, expiresInSeconds: number) =>
      (
        await createToken(sql, {
          accountId: user.accountId,
          userId: user.id,
          clientId,
          clientName: 'agent',
          codeHash: 'h',
          resource: `${svc.url}/api/mcp`,
          expiresAt: new Date(Date.now() + expiresInSeconds * 1000),
        })
      ).id

    const abandoned = await client('abandoned', 8) // old, never a token: deleted
    const young = await client('young', 1) // never a token, but registered yesterday: kept
    const retired = await client('retired', 8) // its only token expired: the token goes, the client stays
    const active = await client('active', 8) // live tokens, a revoked one among them: kept with them
    const pending = await client('pending', 8) // a code that expired a minute ago, kept a day: kept
    const expiredToken = await token(retired, -60)
    const liveToken = await token(active, 3_600)
    const revokedToken = await token(active, 3_600)
    await sql`UPDATE oauth_tokens SET revoked_at = now() WHERE id = ${revokedToken}`
    const oldCode = await code(active, 2 * 86_400)
    const recentCode = await code(pending, 60)
    const liveSession = (await createSession(sql, user.id, 3_600)).session.id
    const deadSession = (await createSession(sql, user.id, 3_600)).session.id
    await ago(sql, 'user_sessions', 'expires_at', deadSession, 60)

    // An audit's replay past its retention goes; a recent frame stays (and so does the audit).
    const replayed = await createAudit(sql, user.accountId, 'https://www.example.com/', {
      maxPages: 2,
      maxDepth: 0,
      maxDurationSeconds: 60,
    })
    await storeAuditFrame(sql, replayed.id, 1, 'https://www.example.com/', new Uint8Array([0xff, 0xd8, 0xff, 0xd9]))
    await storeAuditFrame(sql, replayed.id, 2, 'https://www.example.com/a', new Uint8Array([0xff, 0xd8, 0xff, 0xd9]))
    await sql`UPDATE audit_frames SET at = now() - make_interval(secs => ${REPLAY_RETENTION_S + 60}) WHERE audit_id = ${replayed.id} AND seq = 1`

    // A paid plan whose grace period after a failed renewal has run out goes back to free; one still in it stays.
    const lapsed = await createAccount(sql, 'launch')
    const inGrace = await createAccount(sql, 'launch')
    await sql`UPDATE accounts SET grace_until = now() - interval '1 minute' WHERE id = ${lapsed.id}`
    await sql`UPDATE accounts SET grace_until = now() + interval '1 day' WHERE id = ${inGrace.id}`

    const [a, b] = await Promise.all([run('expire'), run('expire')])
    expect([a.job, b.job]).toEqual(['expire', 'expire'])
    expect(combined(a, b)).toEqual({
      authorizationCodes: 1,
      signInSessions: 1,
      oauthTokens: 1,
      unusedOAuthClients: 1,
      replayFrames: 1,
      gracePeriodsEnded: 1,
    })
    const plans = await sql<{ id: string; plan: string }[]>`SELECT id, plan FROM accounts WHERE id IN (${lapsed.id}, ${inGrace.id})`
    expect(Object.fromEntries(plans.map((r) => [r.id, r.plan]))).toEqual({ [lapsed.id]: 'free', [inGrace.id]: 'launch' })

    const ids = async (q: Promise<Array<{ id: string }>>) => (await q).map((r) => r.id).sort()
    expect(await ids(sql`SELECT id FROM oauth_clients`)).toEqual([young, retired, active, pending].sort())
    expect(await ids(sql`SELECT id FROM oauth_tokens`)).toEqual([liveToken, revokedToken].sort())
    expect(await ids(sql`SELECT code_hash AS id FROM oauth_codes`)).toEqual([recentCode])
    expect(await ids(sql`SELECT id FROM user_sessions`)).toEqual([liveSession])
    expect(await ids(sql`SELECT id FROM oauth_clients WHERE had_tokens`)).toEqual([retired])
    const left = await sql`
      SELECT (SELECT count(*) FROM oauth_clients WHERE id = ${abandoned})::int
           + (SELECT count(*) FROM oauth_codes WHERE code_hash = ${oldCode})::int
           + (SELECT count(*) FROM oauth_tokens WHERE id = ${expiredToken})::int
           + (SELECT count(*) FROM user_sessions WHERE id = ${deadSession})::int AS n`
    expect(left[0]!.n).toBe(0)
    expect((await listAuditFrames(sql, replayed.id)).map((f) => f.seq)).toEqual([2])
    // Once more: nothing left to do.
    expect(await run('expire')).toEqual({
      job: 'expire',
      authorizationCodes: 0,
      signInSessions: 0,
      oauthTokens: 0,
      unusedOAuthClients: 0,
      replayFrames: 0,
      gracePeriodsEnded: 0,
    })
  })

  test('recover fails abandoned scans and audits, refunds once and dispatches lost ones once, when run twice at once', async () => {
    const account = await createAccount(sql, 'scale')
    const scan = async (age: number) => {
      const s = await createScan(sql, account.id, 'https://www.example.com/')
      await ago(sql, 'scans', 'created_at', s.id, age)
      return s.id
    }
    const audit = async (age: number) => {
      const a = await createAudit(sql, account.id, 'https://www.example.com/', { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 })
      await ago(sql, 'audits', 'created_at', a.id, age)
      return a.id
    }
    const abandonedScan = await scan(4_000)
    const lostScan = await scan(60)
    const abandonedAudit = await audit(7_200)
    const lostAudit = await audit(60)
    expect((await getBalance(sql, account.id)).used).toBe(2)
    // A directory run recorded but never driven (its job lost with the queue): dispatched again, never failed here.
    const lostRun = await insertDirectoryRun(
      sql,
      { id: newId('dir'), accountId: account.id, credentialId: 'key', mode: 'scan', options: {}, urls: ['http://192.0.2.1/'] },
      2,
    )
    await ago(sql, 'directory_runs', 'created_at', lostRun!.id, 60)

    const [a, b] = await Promise.all([run('recover'), run('recover')])
    expect(combined(a, b)).toEqual({
      scansFailed: 1,
      scansRedispatched: 1,
      auditsFailed: 1,
      auditsRedispatched: 1,
      directoryRunsRedispatched: 1,
    })
    expect((await getScanById(sql, abandonedScan))?.status).toBe('failed')
    const { queue } = svc.running.services.infra
    expect((await queue.heldRefs('scan')).has(lostScan)).toBe(true)
    expect((await queue.heldRefs('audit')).has(lostAudit)).toBe(true)
    const refunds = await sql`SELECT 1 FROM ledger WHERE audit_id = ${abandonedAudit} AND reason = 'refund'`
    expect(refunds.length).toBe(1)
    expect((await getBalance(sql, account.id)).used).toBe(1)
    // Once more: the lost ones are held now, the abandoned ones finished.
    expect(await run('recover')).toEqual({
      job: 'recover',
      scansFailed: 0,
      scansRedispatched: 0,
      auditsFailed: 0,
      auditsRedispatched: 0,
      directoryRunsRedispatched: 0,
    })
    expect((await getBalance(sql, account.id)).used).toBe(1)
  })

  test('two recoveries racing without the lease still refund an abandoned audit once', async () => {
    const account = await createAccount(sql, 'free')
    const a = await createAudit(sql, account.id, 'https://www.example.com/', { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 })
    await ago(sql, 'audits', 'created_at', a.id, 7_200)
    const log = createLogger('error')
    const opts = { graceSeconds: 15, abandonSeconds: 3_600 }
    const { infra } = svc.running.services
    await Promise.all([recoverAudits(sql, infra, log, opts), recoverAudits(sql, infra, log, opts)])
    const rows = await sql<
      { delta: number; reason: string }[]
    >`SELECT delta, reason FROM ledger WHERE account_id = ${account.id} ORDER BY delta`
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { delta: -1, reason: 'audit' },
      { delta: 1, reason: 'refund' },
    ])
    expect((await getBalance(sql, account.id)).used).toBe(0)
  })

  test('a call while another run holds the job answers skipped at once', async () => {
    const { kv } = svc.running.services.infra
    expect(await kv.claim('cron:running:expire', 'another replica', 60)).toBe(true)
    expect(await run('expire')).toMatchObject({ job: 'expire', skipped: true })
    await kv.del('cron:running:expire')
    expect(await run('expire')).toMatchObject({ job: 'expire', authorizationCodes: 0 })
  })

  test('a job whose database fails answers 503 JSON and frees the job for the next call', async () => {
    const dead = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} })
    await dead.end()
    const services = svc.running.services
    const app = cronRoutes({ ...services, db: { ...services.db, sql: dead }, log: silent })
    const post = () =>
      app.handle(new Request('http://localhost/api/cron/expire', { method: 'POST', headers: { authorization: `Bearer ${SECRET}` } }))
    for (let i = 0; i < 2; i++) {
      const res = await post()
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('60')
      expect(await res.json()).toMatchObject({ error: 'job_failed', job: 'expire' })
    }
  })

  test('with CRON_SECRET empty the routes do not exist: 404 JSON, whatever is sent', async () => {
    const services = svc.running.services
    const app = cronRoutes({ ...services, config: { ...services.config, CRON_SECRET: '' } })
    for (const authorization of ['Bearer ', `Bearer ${SECRET}`, '']) {
      const res = await app.handle(new Request('http://localhost/api/cron/recover', { method: 'POST', headers: { authorization } }))
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ error: 'not_found' })
    }
  })

  test('the in-process schedule runs the jobs on its timer and stops when asked', async () => {
    const user = await upsertUser(sql, { issuer: 'urn:test', subject: randomBytes(8).toString('hex'), email: '', name: '' })
    const expired = async () => {
      const id = (await createSession(sql, user.id, 3_600)).session.id
      await ago(sql, 'user_sessions', 'expires_at', id, 60)
      return id
    }
    const exists = async (id: string) => (await sql`SELECT 1 FROM user_sessions WHERE id = ${id}`).length > 0
    const first = await expired()
    const schedule = startCronSchedule({ ...svc.running.services, log: createLogger('error') }, { everyMs: 200, firstAfterMs: 0 })
    try {
      await until(async () => !(await exists(first)), 15_000, 'the scheduled expiry to delete the session', { everyMs: 100 })
    } finally {
      await within(schedule.stop(), 10_000, 'the schedule to stop')
    }
    const second = await expired()
    await Bun.sleep(800)
    expect(await exists(second)).toBe(true)
  }, 30_000)
})
