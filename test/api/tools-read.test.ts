// The read tools (get_findings, scan_history, list_apps, explain_check, get_fix_brief) through the official
// SDK client, over scans made by real scan_app runs on fixture sites (production path: PostgreSQL + Redis),
// and the same listings on the embedded PGlite path.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CHECKS } from '../../shared/checks/registry.ts'
import { completeScan, createScan, failScan, markScanRunning, upsertApp } from '../../shared/db/scans.ts'
import { platformSignals } from '../../shared/report/platform.ts'
import { PLATFORMS } from '../../shared/checks/types.ts'
import { penaltyRow, SCORING } from '../../shared/report/scoring.ts'
import { connectClient, errorOf, ok } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { spaSite, weakSite, type Site } from '../fixtures/sites.ts'
import { SEVERITY_RANK } from '../../shared/report/ranking.ts'
import type { Severity } from '../../shared/checks/types.ts'
import { machineDeadline } from '../harness/machine.ts'

type Args = Record<string, unknown>

/** A one-page site answering with the headers a hosting platform adds. */
function platformSite(headers: Record<string, string>, body = '<p>hi</p>'): Site {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response(`<!doctype html><html><head><title>Hosted</title></head><body>${body}</body></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8', ...headers },
      }),
  })
  return { url: `http://127.0.0.1:${server.port}/`, stop: async () => void server.stop(true) }
}

/** Follows nextCursor to the end; returns every item in order and the number of pages. */
async function walk(client: Client, name: string, args: Args) {
  const items: any[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await ok(client, name, { ...args, ...(cursor ? { cursor } : {}) })
    items.push(...page.items)
    cursor = page.nextCursor ?? undefined
    pages++
    if (pages > 50) throw new Error('pagination does not end')
  } while (cursor)
  return { items, pages }
}

describe('read tools over real scans (production mode)', () => {
  let svc: TestService
  let client: Client
  let other: Client
  const sites: Site[] = []
  let weak: Site, spa: Site, netlify: Site, nextOnVercel: Site
  let weakOld: any, weakNew: any, spaReport: any, netlifyReport: any, nextReport: any

  beforeAll(async () => {
    svc = await startService('production', { WORKER_CONCURRENCY: '4' })
    // Four scans at once: the scale plan allows 8 in progress per account (free: 2).
    client = await connectClient(svc.mcpUrl, await svc.key('scale'))
    other = await connectClient(svc.mcpUrl, await svc.key())
    sites.push(
      (weak = await weakSite()),
      (spa = await spaSite()),
      (netlify = platformSite({ server: 'Netlify', 'x-nf-request-id': '01HZX3Q2W5KJ8' })),
      (nextOnVercel = platformSite(
        { server: 'Vercel', 'x-vercel-id': 'fra1::iad1::abc-1', 'x-powered-by': 'Next.js' },
        '<script src="/_next/static/chunks/main.js"></script>',
      )),
    )
    const scan = async (url: string) => {
      const t0 = performance.now()
      const r = await ok(client, 'scan_app', { url, detail: 'full' })
      // Where a slow scan's time went, for a busy machine's record.
      console.log(`scan ${url}: ${Math.round(performance.now() - t0)} ms, ${JSON.stringify(r.timings)}`)
      return r
    }
    weakOld = await scan(weak.url)
    ;[spaReport, netlifyReport, nextReport, weakNew] = await Promise.all([
      scan(spa.url),
      scan(netlify.url),
      scan(nextOnVercel.url),
      scan(`${weak.url}?again=1`),
    ])
  }, machineDeadline(240_000))
  afterAll(async () => {
    await client?.close()
    await other?.close()
    for (const s of sites) await s.stop()
    await svc?.stop()
  })

  describe('get_findings', () => {
    test('without a status filter returns the fail and warn checks, highest impact first', async () => {
      const r = await ok(client, 'get_findings', { scanId: weakOld.id, limit: 100 })
      expect(r.scanId).toBe(weakOld.id)
      expect(r.url).toBe(weakOld.url)
      expect(r.filter.status).toEqual(['fail', 'warn'])
      const expected = weakOld.checks.filter((c: any) => c.status === 'fail' || c.status === 'warn')
      expect(r.total).toBe(expected.length)
      expect(r.items.map((c: any) => c.id).sort()).toEqual(expected.map((c: any) => c.id).sort())
      expect(r.nextCursor).toBeNull()
      // The report's advice order, which is by score impact.
      expect(r.items.map((c: any) => c.id)).toEqual(weakOld.advice.map((a: any) => a.checkId))
      const impacts = r.items.map((c: any) => c.impact)
      expect(impacts).toEqual([...impacts].sort((a, b) => b - a))
      const csp = r.items.find((c: any) => c.id === 'csp')
      expect(csp).toMatchObject({ status: 'fail', category: 'security', impact: SCORING.csp!.fail })
      expect(typeof csp.summary).toBe('string')
      expect(csp.evidence).toBeDefined()
    })

    test('filters by status, severity and category, each a list matching any of its values', async () => {
      const all = await ok(client, 'get_findings', {
        scanId: weakOld.id,
        status: ['pass', 'fail', 'warn', 'info', 'skipped', 'error'],
        limit: 100,
      })
      expect(all.total).toBe(weakOld.checks.length)
      const skipped = await ok(client, 'get_findings', { scanId: weakOld.id, status: ['skipped'] })
      expect(skipped.items.map((c: any) => c.id).sort()).toEqual(
        weakOld.checks
          .filter((c: any) => c.status === 'skipped')
          .map((c: any) => c.id)
          .sort(),
      )
      const serious = await ok(client, 'get_findings', { scanId: weakOld.id, severity: ['critical', 'high'], limit: 100 })
      expect(serious.total).toBeGreaterThan(0)
      for (const c of serious.items) {
        expect(['critical', 'high']).toContain(c.severity)
        expect(['fail', 'warn']).toContain(c.status)
      }
      const cookies = await ok(client, 'get_findings', {
        scanId: weakOld.id,
        category: ['cookies', 'exposure'],
        status: ['fail'],
        limit: 100,
      })
      expect(cookies.total).toBeGreaterThan(0)
      for (const c of cookies.items) {
        expect(['cookies', 'exposure']).toContain(c.category)
        expect(c.status).toBe('fail')
      }
    })

    test('every check in impact order: findings first, then by severity', async () => {
      const all = await ok(client, 'get_findings', {
        scanId: weakOld.id,
        status: ['pass', 'fail', 'warn', 'info', 'skipped', 'error'],
        limit: 100,
      })
      const findings = all.items.filter((c: any) => c.status === 'fail' || c.status === 'warn').length
      expect(all.items.slice(0, findings).every((c: any) => c.status === 'fail' || c.status === 'warn')).toBe(true)
      const rest = all.items.slice(findings).map((c: any) => SEVERITY_RANK[c.severity as Severity])
      expect(rest).toEqual([...rest].sort((a: number, b: number) => b - a))
    })

    test('pages walk every finding once, in the same order as one big page', async () => {
      const whole = await ok(client, 'get_findings', {
        scanId: weakOld.id,
        status: ['pass', 'fail', 'warn', 'info', 'skipped', 'error'],
        limit: 100,
      })
      const { items, pages } = await walk(client, 'get_findings', {
        scanId: weakOld.id,
        status: ['pass', 'fail', 'warn', 'info', 'skipped', 'error'],
        limit: 3,
      })
      expect(pages).toBe(Math.ceil(whole.total / 3))
      expect(items.map((c) => c.id)).toEqual(whole.items.map((c: any) => c.id))
      expect(new Set(items.map((c) => c.id)).size).toBe(items.length)
    })

    test("a bad cursor is invalid_params: garbage, another scan's cursor, another tool's cursor", async () => {
      const first = await ok(client, 'get_findings', { scanId: weakOld.id, limit: 1 })
      expect(first.nextCursor).toBeString()
      const history = await ok(client, 'scan_history', { limit: 1 })
      for (const cursor of [
        'not-a-cursor',
        '!!!',
        first.nextCursor,
        history.nextCursor,
        Buffer.from(`${weakOld.id}:-1`).toString('base64url'),
      ]) {
        const scanId = cursor === first.nextCursor ? weakNew.id : weakOld.id
        const e = await errorOf(client, 'get_findings', { scanId, cursor })
        expect(`${cursor}: ${e.code}`).toBe(`${cursor}: invalid_params`)
      }
    })

    test('an unknown category is refused by the schema', async () => {
      expect((await errorOf(client, 'get_findings', { scanId: weakOld.id, category: ['nope'] })).code).toBe('invalid_params')
    })

    test("another account's scan and an unknown scan are not_found", async () => {
      expect((await errorOf(other, 'get_findings', { scanId: weakOld.id })).code).toBe('not_found')
      expect((await errorOf(client, 'get_findings', { scanId: 'scn_doesnotexist' })).code).toBe('not_found')
      expect((await errorOf(other, 'get_fix_brief', { scanId: weakOld.id })).code).toBe('not_found')
    })

    test('a scan that is not completed is an error naming its status', async () => {
      const sql = svc.running.services.db.sql
      const accountId = (await ok(client, 'get_account', {})).id
      const row = await createScan(sql, accountId, 'http://127.0.0.1:9/unfinished')
      await markScanRunning(sql, row.id, 'test-holder')
      let e = await errorOf(client, 'get_findings', { scanId: row.id })
      expect(e).toMatchObject({ code: 'scanner_unavailable', scanId: row.id, status: 'running' })
      expect(e.message).toContain('running')
      await failScan(sql, row.id, { code: 'target_unreachable', message: 'connection refused' })
      e = await errorOf(client, 'get_fix_brief', { scanId: row.id })
      expect(e).toMatchObject({ code: 'scan_failed', scanId: row.id, status: 'failed', reason: { code: 'target_unreachable' } })
    })
  })

  describe('scan_history', () => {
    test("lists this account's scans newest first with their state and score", async () => {
      const r = await ok(client, 'scan_history', { limit: 100 })
      const ours = [weakOld.id, spaReport.id, netlifyReport.id, nextReport.id, weakNew.id]
      for (const id of ours) expect(r.items.map((s: any) => s.id)).toContain(id)
      const times = r.items.map((s: any) => Date.parse(s.createdAt))
      expect(times).toEqual([...times].sort((a, b) => b - a))
      const old = r.items.find((s: any) => s.id === weakOld.id)
      expect(old).toMatchObject({ url: weak.url, status: 'completed', score: weakOld.score, grade: weakOld.grade })
      expect(Object.keys(old).sort()).toEqual(['appId', 'createdAt', 'finishedAt', 'grade', 'id', 'kind', 'score', 'status', 'url'])
      expect(old.kind).toBe('scan')
      expect(r.items.findIndex((s: any) => s.id === weakNew.id)).toBeLessThan(r.items.findIndex((s: any) => s.id === weakOld.id))
      expect((await ok(other, 'scan_history', {})).items).toEqual([])
    })

    test('pages of one walk every scan once, with no gaps', async () => {
      const whole = await ok(client, 'scan_history', { limit: 100 })
      const { items, pages } = await walk(client, 'scan_history', { limit: 1 })
      expect(pages).toBe(whole.items.length)
      expect(items.map((s) => s.id)).toEqual(whole.items.map((s: any) => s.id))
      const two = await walk(client, 'scan_history', { limit: 2 })
      expect(two.items.map((s) => s.id)).toEqual(whole.items.map((s: any) => s.id))
    })

    test('filters by URL (any URL of the same origin) and by appId', async () => {
      const byUrl = await ok(client, 'scan_history', { url: `${weak.url}some/page?q=1` })
      expect(byUrl.filter.origin).toBe(new URL(weak.url).origin)
      expect(byUrl.items.map((s: any) => s.id)).toEqual([weakNew.id, weakOld.id])
      const appId = byUrl.items[0].appId
      expect(byUrl.items[1].appId).toBe(appId)
      const byApp = await ok(client, 'scan_history', { appId })
      expect(byApp.items.map((s: any) => s.id)).toEqual([weakNew.id, weakOld.id])
      const paged = await walk(client, 'scan_history', { appId, limit: 1 })
      expect(paged.items.map((s) => s.id)).toEqual([weakNew.id, weakOld.id])
      // Both filters apply together: an app and a URL of another origin match nothing.
      expect((await ok(client, 'scan_history', { appId, url: spa.url })).items).toEqual([])
      expect((await ok(client, 'scan_history', { url: 'https://never-scanned.example/' })).items).toEqual([])
    })

    test("an unknown or another account's appId is not_found; a bad URL is invalid_url", async () => {
      const appId = (await ok(client, 'scan_history', { url: weak.url })).items[0].appId
      expect((await errorOf(other, 'scan_history', { appId })).code).toBe('not_found')
      expect((await errorOf(client, 'scan_history', { appId: 'app_doesnotexist' })).code).toBe('not_found')
      expect((await errorOf(client, 'scan_history', { url: 'ftp://example.com/' })).code).toBe('invalid_url')
    })

    test('bad cursors are invalid_params', async () => {
      const apps = await ok(client, 'list_apps', { limit: 1 })
      const forged = Buffer.from(JSON.stringify({ k: 'scan_history', t: "2026-01-01'; --", i: 'scn_x' })).toString('base64url')
      for (const cursor of ['abc', 'a b', apps.nextCursor, forged]) {
        expect((await errorOf(client, 'scan_history', { cursor })).code).toBe('invalid_params')
      }
    })
  })

  describe('list_apps', () => {
    test('lists apps by latest activity with scan counts and the latest scan', async () => {
      const r = await ok(client, 'list_apps', { limit: 100 })
      const origin = (url: string) => new URL(url).origin
      const byOrigin = Object.fromEntries(r.items.map((a: any) => [a.origin, a]))
      const weakApp = byOrigin[origin(weak.url)]
      expect(weakApp.scans).toBe(2)
      expect(weakApp.latestScan).toMatchObject({ id: weakNew.id, status: 'completed', score: weakNew.score, grade: weakNew.grade })
      expect(weakApp.latestCompletedScan).toMatchObject({ id: weakNew.id, score: weakNew.score })
      expect(byOrigin[origin(spa.url)]).toMatchObject({ scans: 1, latestScan: { id: spaReport.id } })
      expect(byOrigin[origin(netlify.url)]).toMatchObject({ scans: 1, latestScan: { id: netlifyReport.id } })
      expect(weakApp.id).toStartWith('app_')
      const activity = r.items.map((a: any) => Date.parse(a.lastActivityAt))
      expect(activity).toEqual([...activity].sort((a, b) => b - a))
      expect((await ok(other, 'list_apps', {})).items).toEqual([])
    })

    test('an app whose latest scan failed keeps its last completed score', async () => {
      const r = await ok(client, 'list_apps', { limit: 100 })
      const unfinished = r.items.find((a: any) => a.origin === 'http://127.0.0.1:9')
      expect(unfinished).toMatchObject({ scans: 1, latestScan: { status: 'failed', score: null }, latestCompletedScan: null })
      expect(r.items[0].origin).toBe('http://127.0.0.1:9')
    })

    test('pages walk every app once; bad cursors are invalid_params', async () => {
      const whole = await ok(client, 'list_apps', { limit: 100 })
      const { items, pages } = await walk(client, 'list_apps', { limit: 1 })
      expect(pages).toBe(whole.items.length)
      expect(items.map((a) => a.id)).toEqual(whole.items.map((a: any) => a.id))
      const history = await ok(client, 'scan_history', { limit: 1 })
      for (const cursor of ['zzz', history.nextCursor]) expect((await errorOf(client, 'list_apps', { cursor })).code).toBe('invalid_params')
    })
  })

  describe('explain_check', () => {
    test('explains every registered check with its fixes per platform and its scoring penalty', async () => {
      for (const check of CHECKS) {
        const r = await ok(client, 'explain_check', { checkId: check.id })
        expect(r).toMatchObject({
          id: check.id,
          title: check.title,
          category: check.category,
          severity: check.severity,
          description: check.description,
          why: check.why,
          confirmation: check.confirmation,
        })
        expect(Object.keys(r.fix).sort()).toEqual([...PLATFORMS].sort())
        for (const text of Object.values(r.fix)) expect((text as string).length).toBeGreaterThan(10)
        expect(r.fix.generic).toBe(check.fix.generic)
        const penalty = penaltyRow(check.id) ?? { fail: 0, warn: 0 }
        expect(r.scoring).toMatchObject({ failPenalty: penalty.fail, warnPenalty: penalty.warn })
      }
    })

    test.each([
      ['cps', 'csp'],
      ['hst', 'hsts'],
      ['cookie', 'cookie-secure'],
      ['X_Content_Type_Options', 'x-content-type-options'],
      ['exposed-env', 'exposed-env-file'],
    ])('an unknown id (%s) is not_found with close ids as suggestions', async (checkId, suggestion) => {
      const e = await errorOf(client, 'explain_check', { checkId })
      expect(e.code).toBe('not_found')
      expect(e.suggestions).toContain(suggestion)
      expect(e.message).toContain(suggestion)
    })

    test('an id like nothing registered has no suggestions but lists the ids there are', async () => {
      const e = await errorOf(client, 'explain_check', { checkId: 'quantum-flux' })
      expect(e).toMatchObject({ code: 'not_found', suggestions: [] })
      expect(e.checkIds).toEqual(CHECKS.map((c) => c.id))
    })
  })

  describe('get_fix_brief', () => {
    test('detects Express behind nginx (X-Powered-By) and briefs each finding for the app, by impact', async () => {
      const r = await ok(client, 'get_fix_brief', { scanId: weakOld.id, detail: 'full' })
      expect(r).toMatchObject({ scanId: weakOld.id, url: weakOld.url, platform: 'express' })
      expect(r.detectedFrom).toContain('x-powered-by: Express')
      expect(r.detected.alsoDetected).toContain('nginx')
      const findings = await ok(client, 'get_findings', { scanId: weakOld.id, limit: 100 })
      expect(r.items.map((i: any) => i.checkId)).toEqual(findings.items.map((c: any) => c.id))
      for (const item of r.items) {
        const check = weakOld.checks.find((c: any) => c.id === item.checkId)
        expect(item).toMatchObject({ title: check.title, severity: check.severity, status: check.status, problem: check.summary })
        expect(item.change.length).toBeGreaterThan(10)
        expect(item.where.length).toBeGreaterThan(5)
        expect(item.verify).toContain('scan_app')
      }
      const csp = r.items.find((i: any) => i.checkId === 'csp')
      // The policy computed from the page, in the app's own syntax.
      const cspCheck = weakOld.checks.find((c: any) => c.id === 'csp')
      expect(csp.change).toBe(CHECKS.find((c) => c.id === 'csp')!.advise!(cspCheck, 'express'))
      expect(csp.change).toContain(`res.setHeader("Content-Security-Policy", "default-src 'self'; script-src 'self'`)
      expect(csp.where).toContain('Express app')
      expect(csp.verify).toContain(`curl -sI '${weakOld.finalUrl}'`)
      const env = r.items.find((i: any) => i.checkId === 'exposed-env-file')
      expect(env.verify).toContain('/.env')
    })

    test('the platform argument overrides detection', async () => {
      const r = await ok(client, 'get_fix_brief', { scanId: weakOld.id, platform: 'vercel' })
      expect(r.platform).toBe('vercel')
      expect(r.detectedFrom).toEqual(['platform argument'])
      expect(r.detected.platform).toBe('express')
      const csp = r.items.find((i: any) => i.checkId === 'csp')
      expect(csp.where).toContain('vercel.json')
      expect(csp.change).toContain('vercel.json')
      const cf = await ok(client, 'get_fix_brief', { scanId: weakOld.id, platform: 'cloudflare', checkId: 'csp' })
      expect(cf.items[0].where).toContain('Transform Rules')
    })

    test('detects Netlify from its Server header; a site that names nothing is generic', async () => {
      const n = await ok(client, 'get_fix_brief', { scanId: netlifyReport.id })
      expect(n.platform).toBe('netlify')
      expect(n.detectedFrom).toContain('server: Netlify')
      const csp = n.items.find((i: any) => i.checkId === 'csp')
      expect(csp.where).toContain('_headers')
      const s = await ok(client, 'get_fix_brief', { scanId: spaReport.id })
      expect(s).toMatchObject({ platform: 'generic', detectedFrom: [] })
    })

    test('a Next.js server on Vercel is briefed for next.config.js, with Vercel also detected', async () => {
      const r = await ok(client, 'get_fix_brief', { scanId: nextReport.id })
      expect(r.platform).toBe('nextjs')
      expect(r.detectedFrom).toContain('x-powered-by: Next.js')
      expect(r.detected.alsoDetected).toEqual(['vercel'])
      const version = r.items.find((i: any) => i.checkId === 'version-disclosure')
      expect(version).toMatchObject({ status: 'warn', where: 'next.config.js (poweredByHeader: false)' })
      expect(version.change).toContain('poweredByHeader: false')
      expect(r.items.find((i: any) => i.checkId === 'csp').where).toContain('next.config.js')
    })

    test('uses the response headers recorded with the scan when there are some', async () => {
      const sql = svc.running.services.db.sql
      const accountId = (await ok(client, 'get_account', {})).id
      const row = await createScan(sql, accountId, 'https://shop.example/')
      const headers = { server: 'Vercel', 'x-vercel-id': 'fra1::iad1::abc-1', 'x-powered-by': 'Express', 'set-cookie': 'sid=1' }
      try {
        await completeScan(sql, row.id, { ...weakOld, id: row.id, url: row.url }, platformSignals(headers, '<html></html>'))
        const [stored] = await sql<{ platform_signals: any }[]>`SELECT platform_signals FROM scans WHERE id = ${row.id}`
        expect(stored!.platform_signals.headers).toEqual({
          server: 'Vercel',
          'x-vercel-id': 'fra1::iad1::abc-1',
          'x-powered-by': 'Express',
        })
        const r = await ok(client, 'get_fix_brief', { scanId: row.id })
        // An Express app that names itself is briefed for its own middleware; Vercel is also detected.
        expect(r.platform).toBe('express')
        expect(r.detectedFrom).toEqual(['x-powered-by: Express'])
        expect(r.detected.alsoDetected).toContain('vercel')
        expect(r.detected.source).toContain('headers')
        expect(r.items.find((i: any) => i.checkId === 'csp').where).toMatch(/Express/i)
      } finally {
        await sql`DELETE FROM scans WHERE id = ${row.id}`
        await sql`DELETE FROM apps WHERE id = ${row.appId}`
      }
    })

    test('checkId narrows the brief; a passing check has nothing to fix; an unknown one gets suggestions', async () => {
      const one = await ok(client, 'get_fix_brief', { scanId: weakOld.id, checkId: 'exposed-git-config' })
      expect(one.items.map((i: any) => i.checkId)).toEqual(['exposed-git-config'])
      const skipped = weakOld.checks.find((c: any) => c.status === 'skipped')
      const none = await ok(client, 'get_fix_brief', { scanId: weakOld.id, checkId: skipped.id })
      expect(none.items).toEqual([])
      expect(none.note).toContain('nothing to fix')
      const e = await errorOf(client, 'get_fix_brief', { scanId: weakOld.id, checkId: 'cps' })
      expect(e).toMatchObject({ code: 'not_found' })
      expect(e.suggestions).toContain('csp')
    })
  })
})

describe('listings on the embedded path (PGlite)', () => {
  let svc: TestService
  let client: Client

  beforeAll(async () => {
    svc = await startService('embedded', { ROLE: 'api' })
    client = await connectClient(svc.mcpUrl, await svc.key())
  }, machineDeadline(90_000))
  afterAll(async () => {
    await client?.close()
    await svc?.stop()
  })

  test('scan_history, list_apps and get_findings page the same way', async () => {
    const sql = svc.running.services.db.sql
    const accountId = (await ok(client, 'get_account', {})).id
    const ids: string[] = []
    for (const url of ['https://a.example/', 'https://b.example/x', 'https://a.example/y', 'https://c.example/']) {
      const row = await createScan(sql, accountId, url)
      const checks = CHECKS.map((c) => ({
        id: c.id,
        title: c.title,
        category: c.category,
        severity: c.severity,
        status: 'fail',
        summary: 's',
        evidence: {},
        advice: null,
      }))
      await completeScan(sql, row.id, {
        id: row.id,
        url,
        finalUrl: url,
        score: 0,
        grade: 'F',
        checks,
        advice: [],
        summary: {},
        timings: {},
        createdAt: new Date().toISOString(),
        checksVersion: 'x',
      } as never)
      ids.push(row.id)
    }
    const history = await walk(client, 'scan_history', { limit: 3 })
    expect(history.items.map((s) => s.id)).toEqual([...ids].reverse())
    expect((await ok(client, 'scan_history', { url: 'https://a.example/' })).items.map((s: any) => s.id)).toEqual([ids[2], ids[0]])
    // An app can exist before its first scan (verify_site records it): its creation is its latest activity.
    await upsertApp(sql, accountId, 'https://d.example')
    const apps = await walk(client, 'list_apps', { limit: 2 })
    expect(apps.items.map((a) => a.origin)).toEqual(['https://d.example', 'https://c.example', 'https://a.example', 'https://b.example'])
    expect(apps.items.map((a) => a.scans)).toEqual([0, 1, 2, 1])
    expect(apps.items[0]).toMatchObject({ latestScan: null, latestCompletedScan: null })
    expect(apps.items[2].latestScan).toMatchObject({ id: ids[2], status: 'completed', grade: 'F' })
    const findings = await walk(client, 'get_findings', { scanId: ids[0], limit: 4 })
    // No advice in these reports: every check costs the same, so severity orders them, then report order.
    const bySeverity = [...CHECKS].sort((a, b) => SEVERITY_RANK[b.severity]! - SEVERITY_RANK[a.severity]!)
    expect(findings.items.map((c) => c.id)).toEqual(bySeverity.map((c) => c.id))
  })

  test('keyset pages keep microseconds and break ties by id: scans in the same millisecond are neither skipped nor repeated', async () => {
    const sql = svc.running.services.db.sql
    const mine = await connectClient(svc.mcpUrl, await svc.key())
    try {
      const accountId = (await ok(mine, 'get_account', {})).id
      const ids: string[] = []
      for (let i = 0; i < 5; i++) ids.push((await createScan(sql, accountId, `https://same-ms-${i % 2}.example/`)).id)
      const at = [
        '2026-01-01T00:00:00.000900Z',
        '2026-01-01T00:00:00.000500Z',
        '2026-01-01T00:00:00.000400Z',
        '2026-01-01T00:00:00.000400Z',
        '2026-01-01T00:00:00.000100Z',
      ]
      for (const [i, id] of ids.entries())
        await sql`UPDATE scans SET created_at = ${at[i]!}::text::timestamptz, status = 'failed' WHERE id = ${id}`
      const tie = [ids[2]!, ids[3]!].sort().reverse()
      const expected = [ids[0], ids[1], ...tie, ids[4]]
      expect((await walk(mine, 'scan_history', { limit: 1 })).items.map((s) => s.id)).toEqual(expected)
      expect((await walk(mine, 'scan_history', { limit: 2 })).items.map((s) => s.id)).toEqual(expected)
      expect((await walk(mine, 'list_apps', { limit: 1 })).items.map((a) => a.origin)).toEqual([
        'https://same-ms-0.example',
        'https://same-ms-1.example',
      ])
    } finally {
      await mine.close()
    }
  })
})
