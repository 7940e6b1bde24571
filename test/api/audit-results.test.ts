// Audit results for agents, through the official SDK client against the running service (production path):
// get_audit answers a large completed audit with a summary under 16 KB and pages its findings, pages and
// checks with opaque cursors; get_findings and get_fix_brief take an auditId; scan_history lists audits.
// The audit is stored through the worker's own path from a real scan's checks spread over 500 pages.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { AuditResult } from '../../shared/report/audit-report.ts'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import { createAudit } from '../../shared/db/audits.ts'
import { weakSite, type Site } from '../fixtures/sites.ts'
import { generateAuditPages, storeCompletedAudit } from '../fixtures/large-audit.ts'
import { connectClient, errorOf, ok } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { machineDeadline } from '../harness/machine.ts'

const KB16 = 16 * 1024
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8')

let svc: TestService
let client: Client
let other: Client
let site: Site
let accountId: string
let scan: any
let big: { auditId: string; result: AuditResult }
let small: { auditId: string; result: AuditResult }

/** Follows nextCursor to the end; every answer is checked against the size cap on the way. */
async function walk(name: string, args: Record<string, unknown>) {
  const items: any[] = []
  let cursor: string | undefined
  let calls = 0
  do {
    const page = await ok(client, name, { ...args, ...(cursor ? { cursor } : {}) })
    expect(bytes(page)).toBeLessThan(KB16)
    expect(page.items.length).toBeGreaterThan(0)
    items.push(...page.items)
    cursor = page.nextCursor ?? undefined
    if (++calls > 600) throw new Error('pagination does not end')
  } while (cursor)
  return { items, calls }
}

beforeAll(async () => {
  svc = await startService('production')
  const sql = svc.running.services.db.sql
  // Scale: audits are charged, and this file stores a few.
  const account = await createAccount(sql, 'scale')
  accountId = account.id
  client = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
  other = await connectClient(svc.mcpUrl, await svc.key('scale'))
  site = await weakSite()
  scan = await ok(client, 'scan_app', { url: site.url, detail: 'full' })
  big = await storeCompletedAudit(sql, accountId, generateAuditPages(scan.checks, scan.url, 500))
  small = await storeCompletedAudit(sql, accountId, generateAuditPages(scan.checks, scan.url, 20), 'done')
}, machineDeadline(120_000))

afterAll(async () => {
  await client?.close()
  await other?.close()
  await site?.stop()
  await svc?.stop()
})

describe('get_audit on a completed 500-page audit', () => {
  test('the default answer is a summary under 16 KB: state, score, counts, top findings, how to get more', async () => {
    const r = big.result
    expect(bytes(r)).toBeGreaterThan(1_000_000)
    const a = await ok(client, 'get_audit', { auditId: big.auditId })
    expect(bytes(a)).toBeLessThan(KB16)
    expect(a).toMatchObject({ auditId: big.auditId, status: 'completed', url: r.url })
    expect(a.progress).toMatchObject({ pagesScanned: r.pagesScanned, pagesFailed: r.pagesFailed, refunded: false })
    expect(a.result).toMatchObject({
      score: r.score,
      grade: r.grade,
      stoppedBy: 'maxPages',
      checksVersion: r.checksVersion,
      pagesDiscovered: r.pagesDiscovered,
      summary: r.summary,
    })
    // The lists themselves are not in the summary.
    for (const key of ['findings', 'pages', 'checks', 'siteChecks']) expect(a.result[key]).toBeUndefined()

    const counts = a.result.findingCounts
    expect(counts.total).toBe(r.findings.length)
    for (const sev of ['critical', 'high', 'medium', 'low', 'info']) {
      expect(counts.bySeverity[sev]).toBe(r.findings.filter((f) => f.severity === sev).length)
    }
    expect(counts.byStatus).toEqual({
      fail: r.findings.filter((f) => f.status === 'fail').length,
      warn: r.findings.filter((f) => f.status === 'warn').length,
    })

    // The top findings are the result's first, by impact, each with its page count and two example pages.
    const top = a.result.topFindings
    expect(top.length).toBeGreaterThanOrEqual(5)
    expect(top.map((f: any) => f.fingerprint)).toEqual(r.findings.slice(0, top.length).map((f) => f.fingerprint))
    for (const [i, f] of top.entries()) {
      const whole = r.findings[i]!
      expect(f).toMatchObject({ checkId: whole.checkId, severity: whole.severity, impact: whole.impact, pageCount: whole.pageCount })
      expect(f.examplePages).toEqual(whole.pages.slice(0, 2))
      expect(f.evidence).toBeUndefined()
    }
    expect(top.some((f: any) => f.pageCount === 490)).toBe(true)

    expect(a.more.hint).toContain('nextCursor')
    expect(a.more.findings).toEqual({ total: r.findings.length, arguments: { auditId: big.auditId, section: 'findings' } })
    expect(a.more.pages).toEqual({ total: 500, arguments: { auditId: big.auditId, section: 'pages' } })
    expect(a.more.checks).toEqual({ total: r.checks.length, arguments: { auditId: big.auditId, section: 'checks' } })
  })

  test('the summary stored at completion is what cutting it out of the result gives (audits completed before it)', async () => {
    const sql = svc.running.services.db.sql
    const [row] = await sql<{ summary: unknown }[]>`SELECT summary FROM audits WHERE id = ${big.auditId}`
    expect(row!.summary).not.toBeNull()
    expect(bytes(row!.summary)).toBeLessThan(64 * 1024)
    const stored = await svc.running.services.audits.summary(accountId, big.auditId, 10)
    await sql`UPDATE audits SET summary = NULL WHERE id = ${big.auditId}`
    try {
      expect(await svc.running.services.audits.summary(accountId, big.auditId, 10)).toEqual(stored)
    } finally {
      await sql`UPDATE audits SET summary = ${sql.json(row!.summary as never)} WHERE id = ${big.auditId}`
    }
    expect(await svc.running.services.audits.summary(accountId, big.auditId, 10)).toEqual(stored)
    // More top findings than the stored summary keeps: those are read from the result.
    const more = await svc.running.services.audits.summary(accountId, big.auditId, 12)
    expect(more!.topFindings.map((f) => f.fingerprint)).toEqual(big.result.findings.slice(0, 12).map((f) => f.fingerprint))
  })

  test('findings page to the end: every merged finding once, whole, in impact order', async () => {
    const { items, calls } = await walk('get_audit', { auditId: big.auditId, section: 'findings', limit: 100 })
    expect(items.map((f) => f.fingerprint)).toEqual(big.result.findings.map((f) => f.fingerprint))
    expect(items).toEqual(JSON.parse(JSON.stringify(big.result.findings)))
    // A finding listing 100 pages is large: the size cap, not the limit, ends those pages.
    expect(calls).toBeGreaterThan(Math.ceil(big.result.findings.length / 100))
    const first = await ok(client, 'get_audit', { auditId: big.auditId, section: 'findings' })
    expect(first).toMatchObject({ section: 'findings', total: big.result.findings.length, offset: 0, score: big.result.score })
    expect(first.items.length).toBeLessThanOrEqual(20)
  })

  test('pages page to the end: every page once, with its failing checks and its checks counted', async () => {
    const { items } = await walk('get_audit', { auditId: big.auditId, section: 'pages', limit: 100 })
    expect(items.map((p) => p.url)).toEqual(big.result.pages.map((p) => p.url))
    expect(new Set(items.map((p) => p.url)).size).toBe(500)
    for (const [i, p] of items.entries()) {
      const whole = big.result.pages[i]!
      expect(p).toMatchObject({ ok: whole.ok, httpStatus: whole.httpStatus, score: whole.score, grade: whole.grade })
      const failing = whole.checks.filter((c) => ['fail', 'warn', 'error'].includes(c.status))
      expect(p.issues).toEqual(failing.map((c) => ({ id: c.id, status: c.status, severity: c.severity, summary: c.summary })))
      expect(Object.values(p.checkCounts as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(whole.checks.length)
    }
    expect(items.filter((p) => !p.ok).length).toBe(big.result.pagesFailed)
  })

  test('third-party hosts: named in the summary, whole in their own section', async () => {
    const whole = big.result.thirdParties
    expect(whole.length).toBeGreaterThan(0)
    const a = await ok(client, 'get_audit', { auditId: big.auditId })
    // The list itself stays out of the summary: a site loading from many hosts on many pages would fill it.
    expect(a.result.thirdParties.total).toBe(whole.length)
    expect(a.result.thirdParties.top).toEqual(whole.slice(0, 5).map((t) => ({ host: t.subject?.key, pageCount: t.pageCount })))
    expect(a.more.thirdParties).toEqual({ total: whole.length, arguments: { auditId: big.auditId, section: 'thirdParties' } })
    const { items } = await walk('get_audit', { auditId: big.auditId, section: 'thirdParties', limit: 2 })
    expect(items).toEqual(JSON.parse(JSON.stringify(whole)))
  })

  test('checks page to the end: each check once, site-wide ones with their evidence', async () => {
    const { items } = await walk('get_audit', { auditId: big.auditId, section: 'checks', limit: 7 })
    expect(items.map((c) => c.id)).toEqual(big.result.checks.map((c) => c.id))
    const siteIds = new Set(big.result.siteChecks.map((c) => c.id))
    for (const c of items) {
      expect(c.siteWide === true).toBe(siteIds.has(c.id))
      if (c.siteWide) expect(c.evidence).toEqual(big.result.siteChecks.find((s) => s.id === c.id)!.evidence)
    }
  })

  test('bad cursors are invalid_params saying what to pass: garbage, another section, another audit, another tool', async () => {
    const findings = await ok(client, 'get_audit', { auditId: big.auditId, section: 'findings', limit: 3 })
    const smallPage = await ok(client, 'get_audit', { auditId: small.auditId, section: 'findings', limit: 3 })
    const byTool = await ok(client, 'get_findings', { auditId: big.auditId, limit: 3 })
    expect(findings.nextCursor).toBeString()
    expect(smallPage.nextCursor).toBeString()
    const forged = Buffer.from(`get_audit:${big.auditId}:findings:-1`).toString('base64url')
    const cases: Array<[string, Record<string, unknown>]> = [
      ['abc', { section: 'findings' }],
      ['a b', { section: 'findings' }],
      [forged, { section: 'findings' }],
      [findings.nextCursor, { section: 'pages' }],
      [smallPage.nextCursor, { section: 'findings' }],
      [byTool.nextCursor, { section: 'findings' }],
    ]
    for (const [cursor, args] of cases) {
      const e = await errorOf(client, 'get_audit', { auditId: big.auditId, ...args, cursor })
      expect(e.code).toBe('invalid_params')
      expect(e.message).toContain('pass nextCursor from the previous page unchanged')
      expect(e.details).toEqual([{ path: '/cursor', message: 'Invalid cursor' }])
    }
    // And get_audit's cursor is not get_findings'.
    expect((await errorOf(client, 'get_findings', { auditId: big.auditId, cursor: findings.nextCursor })).code).toBe('invalid_params')
    // The cursor of the right section and audit goes on where the page ended.
    const next = await ok(client, 'get_audit', { auditId: big.auditId, section: 'findings', limit: 3, cursor: findings.nextCursor })
    expect(next.offset).toBe(findings.items.length)
    expect(next.items[0].fingerprint).toBe(big.result.findings[findings.items.length]!.fingerprint)
  })

  test('section and limit are validated', async () => {
    const e = (args: Record<string, unknown>) => errorOf(client, 'get_audit', { auditId: big.auditId, ...args })
    for (const args of [
      { section: 'advice' },
      { section: 'findings', limit: 0 },
      { section: 'findings', limit: 101 },
      { section: 'pages', limit: 2.5 },
    ]) {
      expect((await e(args)).code).toBe('invalid_params')
    }
    const noSection = await e({ limit: 5 })
    expect(noSection).toMatchObject({ code: 'invalid_params' })
    expect(noSection.message).toContain('pass section')
    expect((await e({ cursor: 'abc' })).code).toBe('invalid_params')
  })

  test("another account's audit and an unknown audit are not_found, summary and sections alike", async () => {
    for (const args of [{}, { section: 'findings' }, { section: 'pages', limit: 5 }]) {
      expect((await errorOf(other, 'get_audit', { auditId: big.auditId, ...args })).code).toBe('not_found')
    }
    expect((await errorOf(client, 'get_audit', { auditId: 'aud_doesnotexist', section: 'checks' })).code).toBe('not_found')
  })

  test('an audit still running has no sections yet, and its summary is its state and progress', async () => {
    const row = await createAudit(svc.running.services.db.sql, accountId, 'https://shop.example.com/', {
      maxPages: 10,
      maxDepth: 1,
      maxDurationSeconds: 60,
    })
    const a = await ok(client, 'get_audit', { auditId: row.id })
    expect(a).toMatchObject({ auditId: row.id, status: 'queued' })
    expect(a.result).toBeUndefined()
    expect(a.more).toBeUndefined()
    const e = await errorOf(client, 'get_audit', { auditId: row.id, section: 'findings' })
    expect(e).toMatchObject({ code: 'scanner_unavailable', auditId: row.id, status: 'queued' })
    expect((await errorOf(client, 'get_findings', { auditId: row.id })).code).toBe('scanner_unavailable')
  })
})

describe('get_findings and get_fix_brief with an auditId', () => {
  test("get_findings pages the audit's merged findings and filters them", async () => {
    const { items } = await walk('get_findings', { auditId: big.auditId, limit: 50 })
    expect(items.map((f) => f.fingerprint)).toEqual(big.result.findings.map((f) => f.fingerprint))
    const first = await ok(client, 'get_findings', { auditId: big.auditId })
    expect(first).toMatchObject({ auditId: big.auditId, url: big.result.url, score: big.result.score, total: big.result.findings.length })
    const high = await walk('get_findings', { auditId: big.auditId, severity: ['high', 'critical'], limit: 100 })
    const expected = big.result.findings.filter((f) => f.severity === 'high' || f.severity === 'critical')
    expect(expected.length).toBeGreaterThan(0)
    expect(high.items.map((f) => f.fingerprint)).toEqual(expected.map((f) => f.fingerprint))
  })

  test('exactly one of scanId and auditId', async () => {
    for (const args of [{}, { scanId: scan.id, auditId: big.auditId }]) {
      for (const tool of ['get_findings', 'get_fix_brief']) {
        const e = await errorOf(client, tool, args)
        expect(e.code).toBe('invalid_params')
        expect(e.message).toContain('exactly one of scanId')
      }
    }
    // A scan still works as before.
    expect((await ok(client, 'get_findings', { scanId: scan.id })).scanId).toBe(scan.id)
    expect((await errorOf(other, 'get_findings', { auditId: big.auditId })).code).toBe('not_found')
    expect((await errorOf(other, 'get_fix_brief', { auditId: big.auditId })).code).toBe('not_found')
  })

  test("get_fix_brief briefs each check of the audit's findings once, with the pages it covers", async () => {
    const b = await ok(client, 'get_fix_brief', { auditId: big.auditId, detail: 'full' })
    // The compact brief (the default) lists the same checks, each with the findings and pages it covers.
    const compact = await ok(client, 'get_fix_brief', { auditId: big.auditId })
    expect(compact.items.map((i: any) => [i.checkId, i.findings, i.pageCount])).toEqual(
      b.items.map((i: any) => [i.checkId, i.findings, i.pageCount]),
    )
    expect(b).toMatchObject({ auditId: big.auditId, url: big.result.url, score: big.result.score })
    // The weak fixture sends X-Powered-By: Express (and Server: nginx): the framework is what the fix is written for.
    expect(b.platform).toBe('express')
    expect(b.detected.alsoDetected).toContain('nginx')
    const checks = [...new Set(big.result.findings.map((f) => f.checkId))]
    expect(b.items.map((i: any) => i.checkId)).toEqual(checks)
    for (const item of b.items) {
      const of = big.result.findings.filter((f) => f.checkId === item.checkId)
      expect(item.findings).toBe(of.length)
      expect(item.pageCount).toBe(of.reduce((n, f) => n + f.pageCount, 0))
      expect(typeof item.change).toBe('string')
      expect(typeof item.verify).toBe('string')
    }
    const one = await ok(client, 'get_fix_brief', { auditId: big.auditId, checkId: checks[0], platform: 'vercel' })
    expect(one.platform).toBe('vercel')
    expect(one.items.map((i: any) => i.checkId)).toEqual([checks[0]])
    const passing = big.result.checks.find((c) => c.status === 'pass')!
    expect((await ok(client, 'get_fix_brief', { auditId: big.auditId, checkId: passing.id })).note).toContain('nothing to fix')
  })
})

describe('scan_history', () => {
  test('lists audits beside scans, marked by kind, with the score and grade of completed ones', async () => {
    const { items } = await walk('scan_history', { limit: 2 })
    const byId = new Map(items.map((i) => [i.id, i]))
    expect(byId.get(scan.id)).toMatchObject({ kind: 'scan', url: scan.url, status: 'completed', score: scan.score, grade: scan.grade })
    for (const a of [big, small]) {
      expect(byId.get(a.auditId)).toMatchObject({
        kind: 'audit',
        url: a.result.url,
        status: 'completed',
        score: a.result.score,
        grade: a.result.grade,
      })
      expect(byId.get(a.auditId).finishedAt).toBeTruthy()
    }
    const queued = items.find((i) => i.kind === 'audit' && i.status === 'queued')
    if (queued) expect([queued.score, queued.grade]).toEqual([null, null])
    const times = items.map((i) => Date.parse(i.createdAt))
    expect(times).toEqual([...times].sort((a, b) => b - a))
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length)
    // Filtered by the audits' origin, only the audits remain.
    const shop = await ok(client, 'scan_history', { url: 'https://shop.example.com/any/page' })
    expect(shop.items.every((i: any) => i.kind === 'audit')).toBe(true)
    expect(shop.items.map((i: any) => i.id)).toContain(big.auditId)
    expect((await ok(other, 'scan_history', {})).items).toEqual([])
  })
})
