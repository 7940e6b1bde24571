// Whole-site audits end to end, in both modes: audit_app answers at once with an id and a viewer link,
// a crawler worker crawls the fixture site in a real Chromium, and get_audit shows progress and then a
// result whose findings are merged across pages.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { isViewerEnded } from '../../shared/protocol/viewer.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type Mode, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'
import { renderersBelow } from '../crawler/audit/procs.ts'

describe.each(['embedded', 'production'] as Mode[])('audit_app and get_audit (%s)', (mode) => {
  let svc: TestService
  let client: Client
  let site: AuditSite

  beforeAll(async () => {
    svc = await startService(mode, { AUDIT_CONCURRENCY: '2', JOB_CLAIM_IDLE_MS: '6000' })
    client = await connectClient(svc.mcpUrl, await svc.key('free'))
    site = startAuditSite({ pages: 6, delayMs: 150 })
  }, machineDeadline(60_000))
  afterAll(async () => {
    await client?.close()
    await svc?.stop()
    await site?.stop()
  }, 60_000)

  test('returns an auditId and a viewer link at once, then crawls every page and merges findings', async () => {
    const t0 = Date.now()
    const started = payload(
      await client.callTool({ name: 'audit_app', arguments: { url: site.url, options: { maxPages: 20, maxDepth: 3 } } }),
    )
    expect(Date.now() - t0).toBeLessThan(machineDeadline(3_000))
    expect(started.auditId).toMatch(/^aud_[0-9A-Za-z]+$/)
    // The service's own URL: on port 0, the port it got.
    expect(started.browserViewer).toMatch(new RegExp(`^${svc.url}/viewer/${started.auditId}#[A-Za-z0-9_-]{40,}$`))
    expect(started.status).toBe('queued')

    // Progress is visible while it runs.
    const seen = new Set<string>()
    const done = await until(
      async () => {
        const a = payload(await client.callTool({ name: 'get_audit', arguments: { auditId: started.auditId } }))
        seen.add(a.status)
        return (a.status === 'completed' || a.status === 'failed') && a
      },
      90_000,
      'the audit to finish',
      { everyMs: 200 },
    )
    expect(seen.has('running')).toBe(true)
    expect(done.status).toBe('completed')
    expect(done.progress).toMatchObject({ pagesScanned: 6, pagesFailed: 0, currentUrl: null, refunded: false })
    expect(done.progress.pagesDiscovered).toBeGreaterThanOrEqual(6)
    expect(done.progress.startedAt).toBeTruthy()
    expect(done.progress.finishedAt).toBeTruthy()

    // The answer is the summary; the result's pages and findings are read by section.
    const r = done.result
    expect(r.stoppedBy).toBe('done')
    expect(typeof r.score).toBe('number')
    expect(r.grade).toMatch(/^[A-F][+-]?$/)
    const section = async (name: string) =>
      payload(await client.callTool({ name: 'get_audit', arguments: { auditId: started.auditId, section: name, limit: 100 } }))
    const pages = await section('pages')
    expect(pages.nextCursor).toBeNull()
    expect(pages.items.map((p: { url: string }) => p.url).sort()).toEqual([...site.pages].sort())
    for (const p of pages.items)
      expect(Object.values(p.checkCounts as Record<string, number>).reduce((a, b) => a + b, 0)).toBeGreaterThan(5)
    // No page sends a CSP: one finding, found on all six pages.
    const findings = await section('findings')
    expect(findings.nextCursor).toBeNull()
    expect(findings.total).toBe(r.findingCounts.total)
    const csp = findings.items.filter((f: { checkId: string }) => f.checkId === 'csp')
    expect(csp).toHaveLength(1)
    expect(csp[0].pageCount).toBe(6)
    expect(csp[0].pages.sort()).toEqual([...site.pages].sort())
    expect(csp[0].fingerprint).toMatch(/^csp:[0-9a-f]{16}$/)
    const top = r.topFindings.find((f: { checkId: string }) => f.checkId === 'csp')
    expect(top).toMatchObject({ fingerprint: csp[0].fingerprint, pageCount: 6 })
    expect(top.examplePages).toHaveLength(2)
    // Each page other than the start (which the site-level scan also loads) was requested once.
    const byPath = new Map<string, number>()
    for (const q of site.requests) byPath.set(q.path, (byPath.get(q.path) ?? 0) + 1)
    for (const [path, count] of byPath) if (path !== '/') expect(count).toBe(1)
    // The viewer link dies with the crawl.
    expect(await isViewerEnded(svc.running.services.infra.kv, started.auditId)).toBe(true)
    // And the audit was paid from the weekly allowance.
    const [ledger] = await svc.running.services.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM ledger WHERE audit_id = ${started.auditId} AND source = 'allowance' AND delta = -1`
    expect(ledger!.n).toBe(1)
  }, 120_000)

  test('the pages made ahead for scans, put away while the audit crawled, are made again once it has ended', async () => {
    // The audit of the test before has ended: its lanes' tabs are closed, and without the slots made again
    // this process would have no renderer left.
    const back = await until(() => renderersBelow(process.pid).length >= 1, machineDeadline(20_000), 'a scan slot made again', {
      everyMs: 200,
    })
    expect(back).toBe(true)
  }, 60_000)

  test("get_audit of an unknown or another account's audit is not_found", async () => {
    const other = await connectClient(svc.mcpUrl, await svc.key('free'))
    const mine = payload(await client.callTool({ name: 'audit_app', arguments: { url: site.url, options: { maxPages: 1 } } }))
    const r = await other.callTool({ name: 'get_audit', arguments: { auditId: mine.auditId } })
    expect(r.isError).toBe(true)
    expect(payload(r).error.code).toBe('not_found')
    const unknown = await client.callTool({ name: 'get_audit', arguments: { auditId: 'aud_doesnotexist' } })
    expect(payload(unknown).error.code).toBe('not_found')
    await other.close()
    await until(
      async () => {
        const a = payload(await client.callTool({ name: 'get_audit', arguments: { auditId: mine.auditId } }))
        return a.status === 'completed' && a
      },
      60_000,
      'the one-page audit',
      { everyMs: 200 },
    )
  }, 90_000)

  test('a cancelled audit stops crawling, keeps its stored pages and its viewer link dies', async () => {
    const slow = startAuditSite({ pages: 20, delayMs: 700 })
    try {
      const started = payload(await client.callTool({ name: 'audit_app', arguments: { url: slow.url } }))
      const sql = svc.running.services.db.sql
      await until(
        async () => {
          const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audit_pages WHERE audit_id = ${started.auditId}`
          return r!.n >= 2
        },
        60_000,
        'pages to be stored',
        { everyMs: 200 },
      )
      const [row] = await sql<{ account_id: string }[]>`SELECT account_id FROM audits WHERE id = ${started.auditId}`
      const principal = {
        account: { id: row!.account_id, name: '', plan: 'free' as const, createdAt: new Date() },
        credentialId: 'key_test',
        kind: 'api_key' as const,
      }
      const cancelled = await svc.running.services.audits.cancel(principal, started.auditId)
      expect(cancelled.status).toBe('cancelled')
      expect(await isViewerEnded(svc.running.services.infra.kv, started.auditId)).toBe(true)
      // The holder notices at its next lease renewal (every third of JOB_CLAIM_IDLE_MS: 2 s here).
      const requestsAt = () => slow.requests.length
      await until(
        async () => {
          const before = requestsAt()
          await Bun.sleep(2_000)
          return requestsAt() === before
        },
        40_000,
        'the crawl to stop',
        { everyMs: 200 },
      )
      const after = payload(await client.callTool({ name: 'get_audit', arguments: { auditId: started.auditId } }))
      expect(after.status).toBe('cancelled')
      expect(after.progress.refunded).toBe(false)
      expect(after.progress.pagesScanned).toBeLessThan(20)
    } finally {
      await slow.stop()
    }
  }, 120_000)

  test('a URL that is not http(s) is invalid_url and costs nothing', async () => {
    const r = await client.callTool({ name: 'audit_app', arguments: { url: 'ftp://example.com/' } })
    expect(r.isError).toBe(true)
    expect(payload(r).error.code).toBe('invalid_url')
  })
})
