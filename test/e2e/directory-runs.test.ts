// start_directory_run end to end: a list of local sites scanned (and audited) as one run by the real service,
// PostgreSQL, Redis and Chromium, through the MCP SDK client. Partial failures, the summary table, reading
// the run back by runId and at /api/directory-runs/{id} (dashboard session only), the limits, and a run whose
// driver died taken over with nothing started twice.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { DIRECTORY_LIMITS } from '../../api/directory-runs/limits.ts'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import { insertDirectoryRun } from '../../shared/db/directory-runs.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { newId } from '../../shared/lib/ids.ts'
import { recoverDirectoryRuns } from '../../shared/jobs/recovery.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { connectClient, errorOf, ok } from '../harness/client.ts'
import { startSignInService, type SignInService } from '../harness/signin.ts'
import { until } from '../harness/wait.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { hardenedSite, type Site, weakSite } from '../fixtures/sites.ts'
import { machineDeadline } from '../harness/machine.ts'

let svc: SignInService
let weak: Site
let hardened: Site & { httpsUrl: string }
let auditSites: AuditSite[] = []
let closedUrl: string
const clients: Client[] = []

beforeAll(async () => {
  weak = await weakSite()
  hardened = await hardenedSite()
  auditSites = [startAuditSite({ pages: 4 }), startAuditSite({ pages: 4 })]
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  closedUrl = `http://127.0.0.1:${probe.port}/`
  probe.stop(true)
  svc = await startSignInService('production', { ROLE: 'all', NAV_TIMEOUT_MS: '20000' })
}, machineDeadline(120_000))

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {})
  await svc?.stop()
  await weak?.stop()
  await hardened?.stop()
  for (const s of auditSites) await s.stop()
}, 60_000)

async function clientOf(key: string) {
  const c = await connectClient(svc.mcpUrl, key)
  clients.push(c)
  return c
}

/** A new scale-plan account and an MCP client with a key of it. */
async function scaleAccount(): Promise<{ accountId: string; c: Client }> {
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, 'scale')
  return { accountId: account.id, c: await clientOf((await createApiKey(sql, account.id)).plaintext) }
}

/** Calls start_directory_run {runId} until the run has ended. */
function ended(c: Client, runId: string, ms = 120_000) {
  return until(
    async () => {
      const r = await ok(c, 'start_directory_run', { runId })
      return (r.status === 'completed' || r.status === 'failed') && r
    },
    ms,
    `directory run ${runId} to end`,
    { everyMs: 500 },
  )
}

describe('start_directory_run, mode scan', () => {
  test('scans each distinct URL once, a few at a time; one unreachable app fails alone and the run completes with a table', async () => {
    const { accountId, c } = await scaleAccount()
    const started = await ok(c, 'start_directory_run', { urls: [weak.url, hardened.url, closedUrl, weak.url] })
    expect(started.runId).toMatch(/^dir_/)
    expect(['queued', 'running']).toContain(started.status)
    expect(started.mode).toBe('scan')
    expect(started.watch).toBe(`${svc.baseUrl}/api/directory-runs/${started.runId}`)
    expect(started.items.map((i: { url: string }) => i.url)).toEqual([weak.url, hardened.url, closedUrl])
    expect(started.summary.total).toBe(3)
    expect(started.next).toContain(started.runId)

    const run = await ended(c, started.runId)
    expect(run.status).toBe('completed')
    expect(run.summary).toMatchObject({ total: 3, pending: 0, running: 0, done: 2, failed: 1 })
    const [w, h, closed] = run.items
    expect(w.status).toBe('done')
    expect(w.scanId).toMatch(/^scn_/)
    expect(w.score).toBeLessThan(h.score)
    expect(w.grade).toMatch(/^[A-F]/)
    expect(w.worst.length).toBeGreaterThan(0)
    expect(w.worst[0].checkId).toMatch(/^[a-z0-9-]+$/)
    expect(h.status).toBe('done')
    expect(closed.status).toBe('failed')
    // Nothing answers on that port: refused before any scan was recorded, saying what to check.
    expect(closed.error.code).toBe('target_unreachable')
    expect(closed.error.message).toContain('Is the app running')
    expect(closed.scanId).toBeUndefined()
    expect(run.summary.lowest.url).toBe(weak.url)
    expect(run.summary.averageScore).toBe(Math.round((w.score + h.score) / 2))
    expect(run.finishedAt).not.toBeNull()
    // Each app's full result is where it always is.
    const scan = await ok(c, 'get_scan', { scanId: w.scanId })
    expect(scan.report.score).toBe(w.score)
    // Exactly one scan per distinct URL that answered: the duplicate was not scanned twice.
    const sql = svc.running.services.db.sql
    const scans = await sql<{ url: string }[]>`SELECT url FROM scans WHERE account_id = ${accountId} ORDER BY url`
    expect(scans.map((r) => r.url)).toEqual([weak.url, hardened.url].sort())
  }, 180_000)

  test('a run where no app could be scanned fails, and says why for each', async () => {
    const c = await clientOf(await svc.key('scale'))
    // A name that never resolves, and a port where nothing listens, are refused before any scan.
    const started = await ok(c, 'start_directory_run', { urls: ['http://nothing-here.invalid/', closedUrl] })
    const run = await ended(c, started.runId, 60_000)
    expect(run.status).toBe('failed')
    expect(run.error.code).toBe('directory_run_failed')
    const [unresolved, closed] = run.items
    expect(unresolved.error.code).toBe('target_unreachable')
    expect(unresolved.scanId).toBeUndefined()
    expect(closed.error.code).toBe('target_unreachable')
    expect(closed.scanId).toBeUndefined()
  }, 90_000)
})

describe('start_directory_run, mode audit', () => {
  test('audits each app within the allowance, charged once each, and links every audit', async () => {
    const { accountId, c } = await scaleAccount()
    const sql = svc.running.services.db.sql
    const before = await getBalance(sql, accountId)
    const started = await ok(c, 'start_directory_run', {
      urls: auditSites.map((s) => s.url),
      mode: 'audit',
      options: { maxPages: 3, maxDepth: 1 },
    })
    expect(started.options).toMatchObject({ maxPages: 3, maxDepth: 1 })
    const run = await ended(c, started.runId, 240_000)
    expect(run.status).toBe('completed')
    expect(run.summary).toMatchObject({ done: 2, failed: 0 })
    for (const item of run.items) {
      expect(item.auditId).toMatch(/^aud_/)
      expect(typeof item.score).toBe('number')
      const audit = await ok(c, 'get_audit', { auditId: item.auditId })
      expect(audit.status).toBe('completed')
      expect(audit.result.score).toBe(item.score)
      expect(audit.options.maxPages).toBe(3)
    }
    expect((await getBalance(sql, accountId)).used).toBe(before.used + 2)
  }, 300_000)

  test('a list the account cannot pay for whole is refused before any audit starts', async () => {
    const { accountId, c } = await scaleAccount()
    const sql = svc.running.services.db.sql
    // 199 of the scale plan's 200 audits this week already used: one is left, no credits.
    await sql`
      INSERT INTO ledger (id, account_id, source, delta, reason, week_start, idempotency_key)
      VALUES (${newId('led')}, ${accountId}, 'allowance', -199, 'audit', date_trunc('week', now() AT TIME ZONE 'UTC')::date, ${newId('idem')})`
    const e = await errorOf(c, 'start_directory_run', { urls: auditSites.map((s) => s.url), mode: 'audit' })
    expect(e.code).toBe('allowance_exhausted')
    expect(e.message).toContain('needs 2 audits')
    expect(e.payable).toBe(1)
    const [n] = await sql<{ n: number }[]>`
      SELECT (SELECT count(*) FROM audits WHERE account_id = ${accountId})::int
           + (SELECT count(*) FROM directory_runs WHERE account_id = ${accountId})::int AS n`
    expect(n!.n).toBe(0)
  }, 30_000)
})

describe('start_directory_run refuses what it cannot do, with a clear error', () => {
  test('plans below scale get plan_required', async () => {
    for (const plan of ['free', 'launch'] as const) {
      const e = await errorOf(await clientOf(await svc.key(plan)), 'start_directory_run', { urls: [weak.url] })
      expect(e.code).toBe('plan_required')
      expect(e.requiredPlan).toBe('scale')
    }
  })

  test('malformed, missing, oversized and mixed arguments', async () => {
    const { accountId, c } = await scaleAccount()
    const code = async (args: Record<string, unknown>) => (await errorOf(c, 'start_directory_run', args)).code
    expect(await code({})).toBe('invalid_params')
    expect(await code({ urls: [] })).toBe('invalid_params')
    expect(await code({ urls: [weak.url], runId: 'dir_abc' })).toBe('invalid_params')
    expect(await code({ urls: 'not a list' })).toBe('invalid_params')
    expect(await code({ urls: [weak.url], mode: 'crawl' })).toBe('invalid_params')
    expect(await code({ urls: [weak.url], options: { maxPages: 3 } })).toBe('invalid_params')
    expect(await code({ runId: 'dir_abc', mode: 'scan' })).toBe('invalid_params')
    expect(await code({ runId: '../../etc/passwd' })).toBe('invalid_params')
    const many = Array.from({ length: DIRECTORY_LIMITS.maxUrls.scan + 1 }, (_, i) => `http://127.0.0.1:9/${i}`)
    expect(await code({ urls: many })).toBe('invalid_params')
    const audits = Array.from({ length: DIRECTORY_LIMITS.maxUrls.audit + 1 }, (_, i) => `http://127.0.0.1:9/${i}`)
    const e = await errorOf(c, 'start_directory_run', { urls: audits, mode: 'audit' })
    expect(e.code).toBe('invalid_params')
    expect(e.message).toContain(`at most ${DIRECTORY_LIMITS.maxUrls.audit}`)
    // A URL without a scheme is refused with the one to send.
    const schemeless = await errorOf(c, 'start_directory_run', { urls: [weak.url, 'example.com'] })
    expect(schemeless.code).toBe('invalid_url')
    expect(JSON.stringify(schemeless)).toContain('https://example.com/')
    // One URL no scan could take refuses the list, naming it.
    for (const bad of ['ftp://127.0.0.1/', 'http://user:pw@127.0.0.1/', 'http://[::1/']) {
      const e = await errorOf(c, 'start_directory_run', { urls: [weak.url, bad] })
      expect(e.code).toBe('invalid_url')
      expect(e.message).toContain('urls[1]')
    }
    // Nothing was recorded by any of these.
    const [n] = await svc.running.services.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM directory_runs WHERE account_id = ${accountId}`
    expect(n!.n).toBe(0)
  })

  test("unknown and other accounts' runs are not_found; a third unfinished run is rate_limited", async () => {
    const a = await clientOf(await svc.key('scale'))
    const b = await clientOf(await svc.key('scale'))
    expect((await errorOf(a, 'start_directory_run', { runId: 'dir_doesnotexist' })).code).toBe('not_found')
    const run = await ok(b, 'start_directory_run', { urls: [closedUrl] })
    expect((await errorOf(a, 'start_directory_run', { runId: run.runId })).code).toBe('not_found')
    await ended(b, run.runId, 60_000)

    const sql = svc.running.services.db.sql
    const { accountId, c } = await scaleAccount()
    // Two runs recorded and held by a driver that is alive (its lease is in the future): unfinished.
    for (let i = 0; i < DIRECTORY_LIMITS.unfinishedPerAccount; i++) {
      const r = await insertDirectoryRun(
        sql,
        { id: newId('dir'), accountId: accountId, credentialId: 'k', mode: 'scan', options: {}, urls: [closedUrl] },
        10,
      )
      await sql`UPDATE directory_runs SET status = 'running', worker = 'elsewhere', lease_until = now() + interval '1 hour' WHERE id = ${r!.id}`
    }
    const e = await errorOf(c, 'start_directory_run', { urls: [weak.url] })
    expect(e.code).toBe('rate_limited')
    expect(e.retryAfter).toBeGreaterThan(0)
  }, 90_000)
})

describe('/api/directory-runs/{id}', () => {
  test("shows the run to its account's dashboard session only: 401 to a bearer, 404 to others", async () => {
    const owner = await svc.extraSession(`dir-owner-${Date.now()}`)
    const other = await svc.extraSession(`dir-other-${Date.now()}`)
    const sql = svc.running.services.db.sql
    await sql`UPDATE accounts SET plan = 'scale' WHERE id = ${owner.accountId}`
    const key = (await createApiKey(sql, owner.accountId)).plaintext
    const c = await clientOf(key)
    const started = await ok(c, 'start_directory_run', { urls: [closedUrl] })
    const done = await ended(c, started.runId, 60_000)
    const url = `${svc.baseUrl}/api/directory-runs/${started.runId}`
    const mine = await fetch(url, { headers: { cookie: `aa_session=${owner.cookie}` } })
    expect(mine.status).toBe(200)
    const body = await mine.json()
    expect(body.runId).toBe(started.runId)
    expect(body.items).toEqual(done.items)
    const bearer = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
    expect(bearer.status).toBe(401)
    await bearer.body?.cancel()
    expect((await fetch(url, { headers: { cookie: `aa_session=${other.cookie}` } })).status).toBe(404)
    expect((await fetch(`${svc.baseUrl}/api/directory-runs/dir_nope`, { headers: { cookie: `aa_session=${owner.cookie}` } })).status).toBe(
      404,
    )
  }, 90_000)
})

describe('a run whose driver died', () => {
  test('is taken over from where it stopped: a settled item is read, not started again; the rest run once', async () => {
    const { accountId, c } = await scaleAccount()
    const sql = svc.running.services.db.sql
    // A scan that the dead driver had started and that finished meanwhile.
    const first = await ok(c, 'scan_app', { url: weak.url })
    const run = await insertDirectoryRun(
      sql,
      { id: newId('dir'), accountId: accountId, credentialId: 'k', mode: 'scan', options: {}, urls: [weak.url, hardened.url] },
      10,
    )
    await sql`UPDATE directory_run_items SET status = 'dispatched', scan_id = ${first.id} WHERE run_id = ${run!.id} AND position = 0`
    // Its driver held it, then died: the lease ran out and the queue no longer holds the job.
    await sql`UPDATE directory_runs SET status = 'running', worker = 'dead-driver', attempts = 1,
      lease_until = now() - interval '1 second', created_at = now() - interval '1 minute' WHERE id = ${run!.id}`
    const { infra } = svc.running.services
    const recovered = await recoverDirectoryRuns(sql, infra.queue, createLogger('error'), 30)
    expect(recovered.redispatched).toBe(1)
    const view = await ended(c, run!.id)
    expect(view.status).toBe('completed')
    expect(view.items[0].scanId).toBe(first.id)
    expect(view.items[0].score).toBe(first.score)
    expect(view.items[1].status).toBe('done')
    const [n] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM scans WHERE account_id = ${accountId} AND url = ${weak.url}`
    expect(n!.n).toBe(1)
    const [row] = await sql<{ attempts: number }[]>`SELECT attempts FROM directory_runs WHERE id = ${run!.id}`
    expect(row!.attempts).toBe(2)
  }, 120_000)
})
