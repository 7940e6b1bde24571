// Every dashboard page and the public report page in a real browser (Chromium) at a phone's width (390 px)
// and a laptop's (1280 px), with real data: a scan and an audit of local fixture sites started from the
// dashboard's forms, both shared. On each page and at each width nothing is wider than the screen (no
// horizontal scroll); the findings are collapsed and the worst comes first; the dashboard links each scan
// and audit by what it scanned and when, never by its raw id (a monitor's run too: the weak site's app has
// a monitor, made in the database, whose run is the scan); the repository form is laid out and styled.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startRun } from '../../shared/db/monitor-runs.ts'
import { saveMonitor } from '../../shared/db/monitors.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { weakSite, type Site } from '../fixtures/sites.ts'
import { browserSignedIn, startSignInService, type SignInService } from '../harness/signin.ts'
import { machineDeadline } from '../harness/machine.ts'
import { until } from '../harness/wait.ts'

const WIDTHS = [390, 1280] as const

let svc: SignInService
let weak: Site
let site: AuditSite
let browser: Browser
let page: Page
let scanId: string
let auditId: string
/** The scanned page's URL: long, with no place to break, as a campaign link is. */
let scanUrl: string

/** Starts a scan or an audit from the dashboard's form and returns its id (the form lands on its report page). */
async function start(form: 'start-scan' | 'start-audit', url: string): Promise<string> {
  await page.goto(`${svc.baseUrl}/dashboard`)
  await page.fill(`#${form} input[name="url"]`, url)
  if (form === 'start-audit') {
    await page.fill('#start-audit input[name="maxPages"]', '4')
    await page.fill('#start-audit input[name="maxDepth"]', '2')
  }
  const kind = form === 'start-scan' ? 'scans' : 'audits'
  await Promise.all([page.waitForURL(new RegExp(`/dashboard/${kind}/\\w+$`)), page.click(`#${form} button[type="submit"]`)])
  return page.url().split('/').pop()!
}

/** Shares a completed report from its page and returns its public URL. */
async function share(kind: 'scans' | 'audits', id: string): Promise<string> {
  await page.goto(`${svc.baseUrl}/dashboard/${kind}/${id}`)
  await Promise.all([page.waitForURL(/notice=shared/), page.click('#make-public')])
  return (await page.getAttribute('#public-url', 'href'))!
}

beforeAll(async () => {
  ;[weak, site] = [await weakSite(), startAuditSite({ pages: 4 })]
  scanUrl = `${weak.url}?utm_campaign=${'spring-sale-newsletter-'.repeat(4)}end`
  svc = await startSignInService('production', {
    ROLE: 'all',
    TRUSTED_PROXY_HOPS: '1',
    WORKER_CONCURRENCY: '2',
    AUDIT_CONCURRENCY: '1',
    NAV_TIMEOUT_MS: '20000',
    SCAN_TIMEOUT_MS: '90000',
    // A key to seal repository tokens with, so the settings page shows the repository form.
    SECRETS_KEY: randomBytes(32).toString('base64'),
  })
  ;({ browser, page } = await browserSignedIn(svc))
  scanId = await start('start-scan', scanUrl)
  auditId = await start('start-audit', site.url)
  const sql = svc.running.services.db.sql
  await until(
    async () => {
      const [s] = await sql<{ status: string }[]>`SELECT status FROM scans WHERE id = ${scanId}`
      const [a] = await sql<{ status: string }[]>`SELECT status FROM audits WHERE id = ${auditId}`
      if (s!.status === 'failed' || a!.status === 'failed') throw new Error(`scan ${s!.status}, audit ${a!.status}`)
      return s!.status === 'completed' && a!.status === 'completed'
    },
    machineDeadline(120_000),
    'the scan and the audit to complete',
    { everyMs: 250 },
  )
  // The audit's report page, where start() left the tab, reloads itself once its poll sees the audit ended
  // (api/report-pages/live-client.ts): a goto racing that reload got no response. Wait for the reloaded page.
  await page.waitForSelector('#live', { state: 'detached', timeout: machineDeadline(30_000) })
  const [user] = await sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
  const settings = { url: scanUrl, schedule: 'weekly', hour: 9, weekday: 1, notifyOn: 'regression', enabled: true } as const
  const { monitor } = await saveMonitor(sql, user!.account_id, new URL(weak.url).origin, () => settings)
  await startRun(sql, monitor.id, scanId)
}, 300_000)

afterAll(async () => {
  await browser?.close()
  await svc?.stop()
  await weak?.stop()
  await site?.stop()
})

/** How much wider than the window the document is, in CSS pixels (0: no horizontal scroll). */
const overflowX = () => page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth))

/** The elements that stick out past the window's right edge, to name in a failure. */
const sticking = () =>
  page.evaluate(() => {
    const w = document.documentElement.clientWidth
    return [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > w + 0.5)
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).replace(/ /g, '.')}` : ''}`,
      )
  })

/** Opens a page at a width and asserts nothing in it scrolls sideways. */
async function visit(url: string, width: number, shot: string): Promise<void> {
  await page.setViewportSize({ width, height: 800 })
  const res = await page.goto(url)
  expect(res!.status()).toBe(200)
  // The top of the page, to look at.
  await page.screenshot({ path: `/tmp/appaudit-layout-${shot}-${width}.png`, fullPage: true, clip: { x: 0, y: 0, width, height: 1600 } })
  const over = await overflowX()
  expect(over === 0 ? [] : await sticking()).toEqual([])
  expect(over).toBe(0)
}

/** The findings of the page shown: collapsed, worst first (impact, then failures before warnings). */
async function expectFindingsCollapsedWorstFirst(): Promise<void> {
  const findings = await page.$$eval('details.finding', (els) =>
    els.map((el) => ({
      open: (el as HTMLDetailsElement).open,
      impact: Number(el.getAttribute('data-impact')),
      status: el.getAttribute('data-status'),
      height: el.getBoundingClientRect().height,
    })),
  )
  expect(findings.length).toBeGreaterThan(1)
  expect(findings.filter((f) => f.open)).toEqual([])
  const rank = (f: { impact: number; status: string | null }) => f.impact * 2 + (f.status === 'fail' ? 1 : 0)
  const ranks = findings.map(rank)
  expect(ranks).toEqual([...ranks].sort((a, b) => b - a))
  // Collapsed: each is one summary line or a few, never its evidence and fix.
  for (const f of findings) expect(f.height).toBeLessThan(200)
  // And one opens on a click, showing its evidence.
  await page.click('details.finding summary')
  expect(await page.isVisible('details.finding[open] pre.evidence')).toBe(true)
}

describe('every page at a phone and a laptop width', () => {
  test('the apps page: no sideways scroll; scans and audits linked by what they scanned and when, not by id', async () => {
    const sql = svc.running.services.db.sql
    const [s] = await sql<{ created_at: Date }[]>`SELECT created_at FROM scans WHERE id = ${scanId}`
    const [a] = await sql<{ created_at: Date }[]>`SELECT created_at FROM audits WHERE id = ${auditId}`
    const minute = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`
    for (const width of WIDTHS) {
      await visit(`${svc.baseUrl}/dashboard`, width, 'apps')
      const scanLink = page.locator(`tr[data-scan="${scanId}"] a[href="/dashboard/scans/${scanId}"]`)
      const scanText = (await scanLink.textContent())!
      expect(scanText).toContain(scanUrl)
      expect(scanText).toContain(minute(s!.created_at))
      expect(scanText).not.toContain(scanId)
      const auditLink = page.locator(`tr[data-audit="${auditId}"] a[href="/dashboard/audits/${auditId}"]`)
      const auditText = (await auditLink.textContent())!
      expect(auditText).toContain(site.url)
      expect(auditText).toContain(minute(a!.created_at))
      expect(auditText).not.toContain(auditId)
      // The monitor's run links to its scan by the run's time.
      expect(await page.locator(`.monitor-runs a[href="/dashboard/scans/${scanId}"]`).count()).toBe(1)
      // No raw id is any link's text on the page.
      expect(await page.$$eval('a', (as) => as.map((x) => x.textContent ?? '').filter((t) => /\b(scn|aud)_\w+/.test(t)))).toEqual([])
    }
  })

  test('the settings page: no sideways scroll, and the repository form laid out and styled', async () => {
    for (const width of WIDTHS) {
      await visit(`${svc.baseUrl}/dashboard/settings`, width, 'settings')
      const inputs = await page.$$eval('#repository-connect input:not([type="hidden"])', (els) =>
        els.map((el) => {
          const cs = getComputedStyle(el)
          const box = el.getBoundingClientRect()
          return { left: box.left, right: box.right, radius: cs.borderTopLeftRadius, display: cs.display }
        }),
      )
      expect(inputs.length).toBe(3)
      for (const i of inputs) {
        expect(i.radius).not.toBe('0px')
        expect(i.right).toBeLessThanOrEqual(width)
      }
      // Each field on its own line under its label, the fields aligned.
      expect(new Set(inputs.map((i) => Math.round(i.left))).size).toBe(1)
    }
  })

  test("the owner's scan and audit pages: no sideways scroll, findings collapsed and worst first", async () => {
    for (const width of WIDTHS) {
      for (const [kind, id] of [
        ['scans', scanId],
        ['audits', auditId],
      ] as const) {
        await visit(`${svc.baseUrl}/dashboard/${kind}/${id}`, width, kind)
        await expectFindingsCollapsedWorstFirst()
      }
    }
  })

  test('the public report pages: no sideways scroll with a long URL in the title, findings collapsed and worst first', async () => {
    const publicScan = await share('scans', scanId)
    const publicAudit = await share('audits', auditId)
    for (const width of WIDTHS) {
      for (const [name, url] of [
        ['public-scan', publicScan],
        ['public-audit', publicAudit],
      ] as const) {
        await visit(url, width, name)
        const h1 = await page.$eval('h1', (el) => ({
          right: el.getBoundingClientRect().right,
          scroll: el.scrollWidth,
          client: el.clientWidth,
        }))
        expect(h1.right).toBeLessThanOrEqual(width)
        expect(h1.scroll).toBeLessThanOrEqual(h1.client)
        await expectFindingsCollapsedWorstFirst()
      }
    }
  })
})
