// Report pages in a real browser (Chromium), against the real service with its crawler workers: a person
// signs in, starts a scan of a local fixture site from the dashboard's form, lands on its report page
// (which follows the scan and shows the report when it is done), finds it again from the dashboard's link,
// shares it, and a visitor with no session opens the public page and sees the score badge as an image.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { weakSite, type Site } from '../fixtures/sites.ts'
import { browserSignedIn, startSignInService, type SignInService } from '../harness/signin.ts'

let svc: SignInService
let site: Site
let browser: Browser
let page: Page

beforeAll(async () => {
  site = await weakSite()
  svc = await startSignInService('production', {
    ROLE: 'all',
    TRUSTED_PROXY_HOPS: '1',
    WORKER_CONCURRENCY: '1',
    AUDIT_CONCURRENCY: '1',
    NAV_TIMEOUT_MS: '20000',
    SCAN_TIMEOUT_MS: '90000',
  })
  // Sign in once, as a person: the provider's login form, then back to the dashboard.
  ;({ browser, page } = await browserSignedIn(svc))
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await svc?.stop()
  await site?.stop()
})

describe('report pages in a browser', () => {
  test('scan from the dashboard, read the report, share it, and show the public page and its badge', async () => {
    // Start: the dashboard's form sends the browser to the new scan's report page.
    await page.fill('#start-scan input[name="url"]', site.url)
    await Promise.all([page.waitForURL(/\/dashboard\/scans\/scn_\w+$/), page.click('#start-scan button[type="submit"]')])
    const scanId = /scn_\w+$/.exec(page.url())![0]
    // The page follows the scan and reloads itself with the report when it is done.
    await page.waitForSelector('#score', { timeout: 120_000 })
    const [row] = await svc.running.services.db.sql<{ score: number; grade: string }[]>`SELECT score, grade FROM scans WHERE id = ${scanId}`
    expect(await page.textContent('#score .score')).toBe(String(row!.score))
    expect(await page.textContent('#score .grade')).toBe(row!.grade)
    expect(await page.locator('details.finding').count()).toBeGreaterThan(3)
    // Every finding is collapsed to its line; the first opens on a click, with its evidence and fix visible.
    expect(await page.locator('details.finding[open]').count()).toBe(0)
    await page.locator('details.finding summary').first().click()
    expect(await page.isVisible('details.finding[open] pre.evidence')).toBe(true)
    expect(await page.isVisible('details.finding[open] pre.fix-verify')).toBe(true)
    await page.locator('details.finding').first().screenshot({ path: '/tmp/appaudit-report-finding.png' })

    // The dashboard lists it with its score and links to the same page.
    await page.goto(`${svc.baseUrl}/dashboard`)
    const listed = page.locator(`tr[data-scan="${scanId}"]`)
    expect(await listed.locator('.score').textContent()).toBe(`${row!.score} ${row!.grade}`)
    await Promise.all([page.waitForURL(`${svc.baseUrl}/dashboard/scans/${scanId}`), listed.locator('a').click()])

    // Share: the page now names its public link and shows the badge.
    await Promise.all([page.waitForURL(/notice=shared/), page.click('#make-public')])
    expect(await page.textContent('#notice')).toContain('now public')
    const publicUrl = (await page.getAttribute('#public-url', 'href'))!
    expect(publicUrl).toMatch(new RegExp(`^${svc.baseUrl}/r/[0-9A-Za-z]{22}$`))
    await page.waitForFunction(() => ((document.getElementById('badge') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0)
    await page.screenshot({ path: '/tmp/appaudit-report-owner.png', fullPage: false })

    // A visitor: a fresh context with no cookies opens the public page.
    const visitor = await browser.newContext({ viewport: { width: 1100, height: 800 }, deviceScaleFactor: 2 })
    try {
      const pub = await visitor.newPage()
      const res = await pub.goto(publicUrl)
      expect(res!.status()).toBe(200)
      expect(res!.headers()['x-robots-tag']).toContain('noindex')
      expect(await pub.textContent('#score .score')).toBe(String(row!.score))
      expect(await pub.$('#make-public')).toBeNull()
      expect(await pub.$('#withdraw')).toBeNull()
      const badge = pub.locator('img#badge')
      await pub.waitForFunction(() => {
        const img = document.getElementById('badge') as HTMLImageElement | null
        return img?.complete && img.naturalWidth > 0
      })
      const size = await badge.evaluate((img: HTMLImageElement) => ({ w: img.naturalWidth, h: img.naturalHeight }))
      expect(size.w).toBeGreaterThan(60)
      expect(size.h).toBe(20)
      expect(await badge.getAttribute('alt')).toBe(`App Audit score: ${row!.score} ${row!.grade}`)
      await pub.screenshot({ path: '/tmp/appaudit-report-public.png' })
      await badge.screenshot({ path: '/tmp/appaudit-badge.png' })

      // Withdrawn, the page and the badge are gone. (This browser may show the badge it already holds for
      // up to its max-age; the service itself answers 404 at once, which is what a request asks here.)
      await Promise.all([page.waitForURL(/notice=withdrawn/), page.click('#withdraw')])
      expect((await pub.goto(publicUrl))!.status()).toBe(404)
      expect((await visitor.request.get(`${publicUrl}/badge`)).status()).toBe(404)
    } finally {
      await visitor.close()
    }
  }, 240_000)
})
