// ScanService.start and waitFor on the production path (PostgreSQL, Redis) with no crawler: start records and
// queues a scan and returns at once; waitFor answers with what the scan's row says, read first so a scan that
// ended before the wait began is not missed. Rows are moved on with SQL, as a worker would.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAccount, type Principal } from '../../../shared/db/accounts.ts'
import { completeScan, failScan, getScan } from '../../../shared/db/scans.ts'
import { isAppError } from '../../../shared/errors.ts'
import { CONCURRENT_SCANS } from '../../../shared/rate-limits.ts'
import { startService, type TestService } from '../../harness/service.ts'

let svc: TestService
const site = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<!doctype html><title>t</title>') })
const url = `http://127.0.0.1:${site.port}/`

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'api', SCAN_TIMEOUT_MS: '1500' })
}, 120_000)
afterAll(async () => {
  await svc?.stop()
  site.stop(true)
})

async function principal(): Promise<Principal> {
  const account = await createAccount(svc.running.services.db.sql, 'free')
  return { account, credentialId: 'test', kind: 'api_key' }
}

const codeOf = (e: unknown) => (isAppError(e) ? e.code : String(e))

describe('ScanService.start', () => {
  test('records a queued scan of the account and returns its id without waiting for a worker', async () => {
    const p = await principal()
    const id = await svc.running.services.scans.start(p, url)
    const row = await getScan(svc.running.services.db.sql, p.account.id, id)
    expect(row).toMatchObject({ id, url, status: 'queued' })
  })

  test("refuses past the plan's scans in flight with rate_limited, recording nothing more", async () => {
    const p = await principal()
    const cap = CONCURRENT_SCANS.perPlan.free
    for (let i = 0; i < cap; i++) await svc.running.services.scans.start(p, url)
    const refused = await svc.running.services.scans.start(p, url).catch((e) => e)
    expect(codeOf(refused)).toBe('rate_limited')
    const [n] = await svc.running.services.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans WHERE account_id = ${p.account.id}`
    expect(n!.n).toBe(cap)
  })

  test('refuses a target where nothing listens, saying what to check, before recording a scan, an app or a job', async () => {
    const p = await principal()
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const port = closed.port
    closed.stop(true)
    const e = await svc.running.services.scans.start(p, `http://127.0.0.1:${port}/`).catch((x) => x)
    expect(codeOf(e)).toBe('target_unreachable')
    expect(e.message).toContain(`nothing answered on 127.0.0.1:${port} (ECONNREFUSED). Is the app running, and listening on port ${port}?`)
    const { sql } = svc.running.services.db
    const [counts] = await sql<{ scans: number; apps: number }[]>`
      SELECT (SELECT count(*)::int FROM scans WHERE account_id = ${p.account.id}) AS scans,
             (SELECT count(*)::int FROM apps WHERE account_id = ${p.account.id}) AS apps`
    expect(counts).toEqual({ scans: 0, apps: 0 })
  })

  test('refuses a URL that is not one a scan could take, before recording anything', async () => {
    const p = await principal()
    expect(codeOf(await svc.running.services.scans.start(p, 'ftp://example.com/').catch((e) => e))).toBe('invalid_url')
  })
})

describe('ScanService.waitFor', () => {
  const progress = async () => {}

  test('returns the report of a scan that completed before the wait began', async () => {
    const p = await principal()
    const id = await svc.running.services.scans.start(p, url)
    await completeScan(svc.running.services.db.sql, id, { score: 91, grade: 'A' })
    expect(await svc.running.services.scans.waitFor(p, id, { progress })).toMatchObject({ score: 91, grade: 'A' })
  })

  test("throws a failed scan's own error, naming the scan", async () => {
    const p = await principal()
    const id = await svc.running.services.scans.start(p, url)
    await failScan(svc.running.services.db.sql, id, { code: 'target_unreachable', message: 'gone' })
    const e = await svc.running.services.scans.waitFor(p, id, { progress }).catch((x) => x)
    expect(e).toMatchObject({ code: 'target_unreachable', message: 'gone', details: { scanId: id } })
  })

  test('answers scanner_unavailable with the scanId when no worker finishes it in time; the scan stays queued', async () => {
    const p = await principal()
    const id = await svc.running.services.scans.start(p, url)
    const e = await svc.running.services.scans.waitFor(p, id, { progress }).catch((x) => x)
    expect(e).toMatchObject({ code: 'scanner_unavailable', details: { scanId: id } })
    expect((await getScan(svc.running.services.db.sql, p.account.id, id))?.status).toBe('queued')
  })
})
