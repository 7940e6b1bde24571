// The live viewer on a site of static pages, and the replay kept after the crawl, end to end: audit_app
// through the SDK client, the browserViewer link opened in a real Chromium as a person would, the progress
// beside the picture, then the replay on the owner's report page and on the shared public one, and its
// frames' routes refused to anyone else. Production mode (PostgreSQL, Redis), the real crawler and Chromium.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { createApiKey } from '../../shared/db/accounts.ts'
import { listAuditFrames, REPLAY_LIMITS } from '../../shared/db/audit-frames.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { connectClient, ok } from '../harness/client.ts'
import { jarFetch, signIn, startSignInService, type CookieJar, type SignInService } from '../harness/signin.ts'
import { until } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const PAGES = 8

let svc: SignInService
let site: AuditSite
let browser: Browser
let client: Client
let jar: CookieJar
let csrf: string

beforeAll(async () => {
  // Static pages that take a moment each, so the crawl lasts long enough to watch.
  site = startAuditSite({ pages: PAGES, delayMs: 300 })
  svc = await startSignInService('production', { ROLE: 'all', AUDIT_CONCURRENCY: '2', NAV_TIMEOUT_MS: '20000' })
  jar = await signIn(svc)
  const html = await (await jarFetch(jar, `${svc.baseUrl}/dashboard`)).text()
  csrf = /name="csrf-token" content="([^"]+)"/.exec(html)![1]!
  const sql = svc.running.services.db.sql
  const [row] = await sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
  client = await connectClient(svc.mcpUrl, (await createApiKey(sql, row!.account_id)).plaintext)
  browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
}, machineDeadline(120_000))

afterAll(async () => {
  await browser?.close().catch(() => {})
  await client?.close().catch(() => {})
  await svc?.stop()
  await site?.stop()
}, 60_000)

describe('live viewer and replay on static pages', () => {
  let auditId = ''
  let scanned = 0

  test('every static page shows at least once, with its progress beside the picture', async () => {
    const started = await ok(client, 'audit_app', { url: site.url, options: { maxPages: PAGES, maxDepth: 2 } })
    auditId = started.auditId
    const link = new URL(started.browserViewer as string)
    const viewer = await browser.newPage()
    const frames: Array<{ url: string; lane: number }> = []
    const progress: Array<{ state: string; pagesScanned: number; findings: Record<string, number>; lanes: number }> = []
    viewer.on('websocket', (ws) =>
      ws.on('framereceived', (f) => {
        if (typeof f.payload !== 'string') return
        const m = JSON.parse(f.payload)
        if (m.type === 'frame') frames.push({ url: m.url, lane: m.lane })
        if (m.type === 'progress') progress.push(m)
      }),
    )
    await viewer.goto(`${svc.url}${link.pathname}${link.hash}`)
    await until(async () => Number(await viewer.textContent('#scanned')) >= 1, 60_000, 'pages counted on screen', {
      everyMs: 100,
      rethrow: true,
    })
    expect(await viewer.textContent('#state')).toBe('crawling')
    expect(Number(await viewer.textContent('#discovered'))).toBeGreaterThanOrEqual(1)
    await viewer.waitForSelector('#ended:not([hidden])', { timeout: 120_000 })

    const done = await ok(client, 'get_audit', { auditId })
    expect(done.status).toBe('completed')
    scanned = done.result.pagesScanned
    expect(scanned).toBe(PAGES)
    // At least one frame per page, and every page crawled after the viewer opened was on screen.
    expect(frames.length).toBeGreaterThanOrEqual(scanned)
    const shown = new Set(frames.map((f) => f.url))
    const missing = site.pages.filter((u) => !shown.has(u))
    expect(missing.length).toBeLessThanOrEqual(1)
    // Progress told the person where the crawl was, and how it ended, with two lanes to choose from.
    expect(progress.some((p) => p.state === 'crawling' && p.pagesScanned > 0)).toBe(true)
    expect(progress.at(-1)).toMatchObject({ state: 'completed', pagesScanned: PAGES, lanes: 2 })
    expect(typeof progress.at(-1)!.findings.high).toBe('number')
    await viewer.close()
  }, 180_000)

  test('the replay keeps one still per page, within its cap, and plays on the owner report page', async () => {
    const frames = await listAuditFrames(svc.running.services.db.sql, auditId)
    expect(frames.length).toBe(scanned)
    expect(new Set(frames.map((f) => f.url))).toEqual(new Set(site.pages))
    expect(frames.every((f) => f.bytes > 500 && f.bytes < 60_000)).toBe(true)
    expect(frames.reduce((n, f) => n + f.bytes, 0)).toBeLessThan(REPLAY_LIMITS.maxBytes)

    const html = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/audits/${auditId}`)).text()
    expect(html).toContain('id="replay-player"')
    expect(html).toContain(`data-base="/dashboard/audits/${auditId}/replay"`)
    const image = await jarFetch(jar, `${svc.baseUrl}/dashboard/audits/${auditId}/replay/${frames[0]!.seq}`)
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/jpeg')
    const bytes = new Uint8Array(await image.arrayBuffer())
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8])
    for (const bad of ['0', '99999', '-1', '1.5', 'abc', '1e3']) {
      const r = await jarFetch(jar, `${svc.baseUrl}/dashboard/audits/${auditId}/replay/${bad}`)
      expect(r.status).toBe(404)
      await r.body?.cancel()
    }
  }, 60_000)

  test("another account, a bearer token and no session never get a frame; a shared report's replay is public until withdrawn", async () => {
    const frameUrl = (base: string) => `${svc.baseUrl}${base}/replay/1`
    const other = await svc.extraSession(`replay-other-${Date.now()}`)
    const theirs = await fetch(frameUrl(`/dashboard/audits/${auditId}`), {
      headers: { cookie: `aa_session=${other.cookie}` },
      redirect: 'manual',
    })
    expect(theirs.status).toBe(404)
    const anonymous = await fetch(frameUrl(`/dashboard/audits/${auditId}`), { redirect: 'manual' })
    expect(anonymous.status).not.toBe(200)
    expect(anonymous.headers.get('content-type') ?? '').not.toContain('image')
    await anonymous.body?.cancel()

    const post = (path: string) =>
      jarFetch(jar, `${svc.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.baseUrl },
        body: new URLSearchParams({ csrf }).toString(),
      })
    expect((await post(`/dashboard/audits/${auditId}/share`)).status).toBe(303)
    const owner = await (await jarFetch(jar, `${svc.baseUrl}/dashboard/audits/${auditId}`)).text()
    const slug = /id="public-url" href="[^"]*\/r\/([^"/]+)"/.exec(owner)![1]!
    const publicImage = await fetch(frameUrl(`/r/${slug}`))
    expect(publicImage.status).toBe(200)
    expect(publicImage.headers.get('content-type')).toBe('image/jpeg')

    // The public page plays it in a browser: Play moves the picture on.
    const page = await browser.newPage()
    await page.goto(`${svc.baseUrl}/r/${slug}`)
    await page.waitForSelector('#replay-img')
    const first = await page.getAttribute('#replay-img', 'src')
    expect(first).toBe(`/r/${slug}/replay/1`)
    await page.click('#replay-play')
    await until(async () => (await page.getAttribute('#replay-img', 'src')) !== first, 5_000, 'the replay plays')
    // The next still is a picture: once the browser has fetched and decoded it (the src changes first).
    await until(
      () =>
        page.evaluate((firstSrc) => {
          const img = document.getElementById('replay-img') as HTMLImageElement
          return img.getAttribute('src') !== firstSrc && img.complete && img.naturalWidth > 100
        }, first),
      5_000,
      'a later still of the replay, loaded',
    )
    await page.close()

    expect((await post(`/dashboard/audits/${auditId}/unshare`)).status).toBe(303)
    const withdrawn = await fetch(frameUrl(`/r/${slug}`))
    expect(withdrawn.status).toBe(404)
    await withdrawn.body?.cancel()
  }, 60_000)
})
