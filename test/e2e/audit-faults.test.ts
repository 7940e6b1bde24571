// What happens to an audit when its worker dies, is stopped, or Redis forgets its job: real crawler
// processes (`bun server/crawler.ts`, each its own process group), real signals, the real PostgreSQL and
// Redis, a real Chromium and a slow fixture site.
import { afterAll, describe, expect, test } from 'bun:test'
import type { Principal } from '../../shared/db/accounts.ts'
import { createAccount } from '../../shared/db/accounts.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { exited, killChildren, spawnCrawler } from '../harness/processes.ts'
import { dropRedisPrefix, startService, type TestService } from '../harness/service.ts'
import { machineDeadline } from '../harness/machine.ts'
import type { Sql } from '../../shared/db/index.ts'
import { until } from '../harness/wait.ts'

const sites: AuditSite[] = []
afterAll(async () => {
  killChildren()
  for (const s of sites) await s.stop()
})

/** The tuning every crawler of this file runs with: short leases and recovery, so takeovers happen in seconds. */
const TUNING: Record<string, string> = {
  JOB_CLAIM_IDLE_MS: '2000',
  RECOVERY_INTERVAL_MS: '1000',
  RECOVERY_GRACE_S: '1',
  AUDIT_WORKER_CONCURRENCY: '1',
  AUDIT_CONCURRENCY: '2',
  NAV_TIMEOUT_MS: '8000',
  PROBE_TIMEOUT_MS: '3000',
  LOG_LEVEL: 'info',
}
const crawler = (svc: TestService, extra: Record<string, string> = {}) => spawnCrawler(svc, { ...TUNING, ...extra })
/**
 * For a worker whose pages wait at the fixture's gate until the test has stopped it: a navigation timeout
 * longer than any wait of the test, so a waiting page is never given up (and stored as failed) instead.
 */
const HELD_AT_GATE = { NAV_TIMEOUT_MS: '120000' }

interface Proc {
  pid: number
  ppid: number
  pgid: number
  comm: string
}
async function processes(): Promise<Proc[]> {
  const out = await new Response(Bun.spawn(['ps', '-eo', 'pid=,ppid=,pgid=,comm='], { stdout: 'pipe' }).stdout).text()
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4)
    .map(([pid, ppid, pgid, ...comm]) => ({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), comm: comm.join(' ') }))
}
/** The process and everything below it, with their process groups (Chromium runs in a group of its own). */
async function tree(rootPid: number): Promise<Proc[]> {
  const all = await processes()
  const inTree = new Set([rootPid])
  for (let grew = true; grew; ) {
    grew = false
    for (const p of all) if (!inTree.has(p.pid) && inTree.has(p.ppid)) inTree.add(p.pid), (grew = true)
  }
  return all.filter((p) => inTree.has(p.pid))
}
/** Processes still alive that belonged to the tree or to one of its process groups. */
async function survivors(before: Proc[]): Promise<Proc[]> {
  const pids = new Set(before.map((p) => p.pid))
  const groups = new Set(before.map((p) => p.pgid))
  return (await processes()).filter((p) => pids.has(p.pid) || groups.has(p.pgid))
}

async function service() {
  const svc = await startService('production', { ROLE: 'api', JOB_CLAIM_IDLE_MS: '2000' })
  const account = await createAccount(svc.running.services.db.sql, 'free')
  const principal: Principal = { account, credentialId: 'key_test', kind: 'api_key' }
  return {
    svc,
    sql: svc.running.services.db.sql,
    start: (url: string) => svc.running.services.audits.start(principal, url),
    accountId: account.id,
  }
}

type PageRow = { url: string; worker: string; started_at: Date | null; stored_at: Date }
type AuditStatusRow = {
  status: string
  attempts: number
  worker: string | null
  lease_until: Date | null
  refunded: boolean
  error: { code: string; message: string } | null
  pages_scanned: number
}

/** The audit's row once it has ended (completed, failed or cancelled). */
function auditEnded(sql: Sql, auditId: string): Promise<AuditStatusRow> {
  return until(
    async () => {
      const [r] = await sql<AuditStatusRow[]>`SELECT * FROM audits WHERE id = ${auditId}`
      return r && r.status !== 'queued' && r.status !== 'running' && r
    },
    machineDeadline(90_000),
    'the audit to finish',
    { everyMs: 100 },
  )
}

describe('an audit whose worker is killed with SIGKILL mid-crawl', () => {
  test(
    'another worker takes it over, resumes from the stored pages, never crawls beside the dead one, and no Chromium is left',
    async () => {
      const { svc, sql, start } = await service()
      // The first OPEN pages are served; the rest wait at the gate until the first worker is dead, so it is
      // killed mid-crawl however fast or loaded the machine is.
      const OPEN = 4
      const site = startAuditSite({ pages: 14, openPages: OPEN })
      sites.push(site)
      try {
        const a = crawler(svc, HELD_AT_GATE)
        const { auditId } = await start(site.url)
        await until(
          async () => {
            const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audit_pages WHERE audit_id = ${auditId}`
            return r!.n >= OPEN && site.waiting() > 0
          },
          machineDeadline(60_000),
          'the first worker to store the open pages and wait at the gate',
          { everyMs: 100 },
        )
        const b = crawler(svc)
        await until(
          async () => (await tree(b.pid!)).some((p) => /chrom/i.test(p.comm)),
          machineDeadline(30_000),
          'the second worker to be up',
          {
            everyMs: 100,
          },
        )
        const aTree = await tree(a.pid!)
        expect(aTree.some((p) => /chrom/i.test(p.comm))).toBe(true)
        // Still mid-crawl: a page of the first worker's is waiting at the gate.
        expect(site.waiting()).toBeGreaterThan(0)

        process.kill(-a.pid!, 'SIGKILL')
        await exited(a)
        const killedAt = Date.now()
        site.openGate()

        const done = await auditEnded(sql, auditId)
        expect(done.status).toBe('completed')
        expect(done.attempts).toBe(2)
        expect(done.worker).toContain(`-${b.pid}-audit-`)
        expect(done.pages_scanned).toBe(14)

        // Every page stored exactly once (the primary key), by A before the kill or by B after it.
        const pages = await sql<PageRow[]>`SELECT url, worker, started_at, stored_at FROM audit_pages WHERE audit_id = ${auditId}`
        expect(pages.map((p) => p.url).sort()).toEqual([...site.pages].sort())
        const byA = pages.filter((p) => p.worker.includes(`-${a.pid}-audit-`))
        const byB = pages.filter((p) => p.worker.includes(`-${b.pid}-audit-`))
        expect(byA.length).toBe(OPEN)
        expect(byA.length + byB.length).toBe(14)
        for (const p of byA) expect(p.stored_at.getTime()).toBeLessThan(killedAt)
        // B started its first page only after A was dead: the lease kept them from crawling at once.
        for (const p of byB) expect(p.started_at!.getTime()).toBeGreaterThanOrEqual(killedAt - 50)
        // Resumed: what A stored was not fetched again (the start URL is: B rescans it site-wide).
        const path = (u: string) => new URL(u).pathname
        const storedByA = new Set(byA.map((p) => path(p.url)).filter((x) => x !== '/'))
        expect(site.requests.filter((q) => q.at > killedAt && storedByA.has(q.path))).toEqual([])

        // The killed worker's Chromium went with it.
        const left = await until(
          async () => {
            const s = await survivors(aTree)
            return s.length === 0 ? [] : null
          },
          10_000,
          `the killed worker's processes to exit: ${JSON.stringify(await survivors(aTree))}`,
          { everyMs: 100 },
        )
        expect(left).toEqual([])
        process.kill(-b.pid!, 'SIGTERM')
        await exited(b)
      } finally {
        await svc.stop()
      }
    },
    machineDeadline(180_000),
  )

  test('after JOB_MAX_DELIVERIES deliveries the audit fails with a reason and is refunded', async () => {
    const { svc, sql, start, accountId } = await service()
    const site = startAuditSite({ pages: 30, delayMs: 800 })
    sites.push(site)
    try {
      const { auditId } = await start(site.url)
      expect((await getBalance(sql, accountId)).used).toBe(1)
      // Two holders die in turn mid-crawl; the third delivery is one too many.
      for (let round = 1; round <= 2; round++) {
        const w = crawler(svc, { JOB_MAX_DELIVERIES: '2' })
        await until(
          async () => {
            const [r] = await sql<
              { n: number }[]
            >`SELECT count(*)::int AS n FROM audit_pages WHERE audit_id = ${auditId} AND worker LIKE ${`%-${w.pid}-audit-%`}`
            return r!.n >= 1
          },
          60_000,
          `worker ${round} to store a page`,
          { everyMs: 100 },
        )
        process.kill(-w.pid!, 'SIGKILL')
        await exited(w)
      }
      const last = crawler(svc, { JOB_MAX_DELIVERIES: '2' })
      const done = await until(
        async () => {
          const [r] = await sql<AuditStatusRow[]>`SELECT * FROM audits WHERE id = ${auditId}`
          return r && r.status === 'failed' && r
        },
        60_000,
        'the audit to fail for good',
        { everyMs: 100 },
      )
      expect(done.error!.code).toBe('audit_failed')
      expect(done.error!.message).toMatch(/attempts/)
      expect(done.refunded).toBe(true)
      expect((await getBalance(sql, accountId)).used).toBe(0)
      const ledger = await sql<
        { delta: number; reason: string }[]
      >`SELECT delta, reason FROM ledger WHERE audit_id = ${auditId} ORDER BY created_at`
      expect([...ledger]).toEqual([
        { delta: -1, reason: 'audit' },
        { delta: 1, reason: 'refund' },
      ])
      process.kill(-last.pid!, 'SIGTERM')
      await exited(last)
    } finally {
      await svc.stop()
    }
  }, 240_000)
})

describe('an audit whose worker gets SIGTERM', () => {
  test(
    'is handed back without counting the attempt, its Chromium exits, and the next worker finishes it',
    async () => {
      const { svc, sql, start } = await service()
      // The signal lands while pages are loading: past the first OPEN, every page waits at the gate until
      // the first worker is gone. Those pages are left for the next worker, not stored as failed.
      const OPEN = 3
      const site = startAuditSite({ pages: 12, openPages: OPEN })
      sites.push(site)
      try {
        // With one delivery allowed, a handed-back job that counted as an attempt would fail on redelivery.
        const a = crawler(svc, { JOB_MAX_DELIVERIES: '1', ...HELD_AT_GATE })
        const { auditId } = await start(site.url)
        await until(
          async () => {
            const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audit_pages WHERE audit_id = ${auditId}`
            return r!.n >= OPEN && site.waiting() > 0
          },
          machineDeadline(60_000),
          'pages to be stored and the next ones to wait at the gate',
          { everyMs: 100 },
        )
        const aTree = await tree(a.pid!)
        process.kill(a.pid!, 'SIGTERM')
        // Its pages wait at the gate for longer than this test, so an exit at all means the crawl was
        // stopped; exit code 0 means it was in time (a shutdown past 25 s exits 1: server/main.ts).
        await exited(a, machineDeadline(30_000))
        expect(a.exitCode).toBe(0)
        const [handed] = await sql<AuditStatusRow[]>`SELECT * FROM audits WHERE id = ${auditId}`
        expect(handed!.status).toBe('queued')
        expect(handed!.lease_until).toBeNull()
        // Nothing of the pages in flight was stored: only what had loaded.
        const [stored] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audit_pages WHERE audit_id = ${auditId}`
        expect(stored!.n).toBe(OPEN)
        expect(
          await until(async () => ((await survivors(aTree)).length === 0 ? 'gone' : null), 10_000, "the stopped worker's Chromium to exit"),
        ).toBe('gone')

        site.openGate()
        const b = crawler(svc, { JOB_MAX_DELIVERIES: '1' })
        const done = await auditEnded(sql, auditId)
        expect(done.status).toBe('completed')
        expect(done.pages_scanned).toBe(12)
        process.kill(-b.pid!, 'SIGTERM')
        await exited(b)
      } finally {
        await svc.stop()
      }
    },
    machineDeadline(180_000),
  )
})

describe('Redis loses the audit jobs mid-audit', () => {
  test('the running audit finishes once, and recovery dispatches the lost queued one again from Postgres', async () => {
    const { svc, sql, start } = await service()
    const site = startAuditSite({ pages: 8, delayMs: 500 })
    sites.push(site)
    try {
      const w = crawler(svc)
      const first = await start(site.url)
      await until(
        async () => {
          const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audit_pages WHERE audit_id = ${first.auditId}`
          return r!.n >= 2
        },
        60_000,
        'the first audit to be under way',
        { everyMs: 100 },
      )
      // One audit at a time per worker: the second waits in the stream when Redis forgets everything.
      const second = await start(site.url)
      const prefix = svc.running.services.config.REDIS_PREFIX
      expect(await dropRedisPrefix(svc.running.services.config.REDIS_URL, prefix)).toBeGreaterThan(0)

      const finished = async (id: string) =>
        until(
          async () => {
            const [r] = await sql<AuditStatusRow[]>`SELECT * FROM audits WHERE id = ${id}`
            return r && r.status !== 'queued' && r.status !== 'running' && r
          },
          120_000,
          `audit ${id} to finish`,
          { everyMs: 100 },
        )
      const a1 = await finished(first.auditId)
      const a2 = await finished(second.auditId)
      expect(a1.status).toBe('completed')
      expect(a1.attempts).toBe(1)
      expect(a1.pages_scanned).toBe(8)
      expect(a2.status).toBe('completed')
      expect(a2.attempts).toBe(1)
      expect(a2.pages_scanned).toBe(8)
      process.kill(-w.pid!, 'SIGTERM')
      await exited(w)
    } finally {
      await svc.stop()
    }
  }, 240_000)
})
