// What a crawl lane's tab keeps of the pages it left: its renderer collects them every few pages, so the
// documents alive in it stay bounded however many pages the tab navigates (the crawl's peak memory,
// bench/crawl-throughput). Counted with Chromium's own DOM counters, read after each page is judged. With many
// lanes, a tab shows a blank page between two pages (its tiles of the page left are given back), except the
// tab in the live view.
import { afterAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { crawlSite } from '../../../crawler/audit/crawl.ts'
import { BLANK_TAB_ABOVE_LANES, COLLECT_GARBAGE_EVERY } from '../../../crawler/audit/lane.ts'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { startCrawlSite } from '../../fixtures/crawl-site.ts'

const log = createLogger('warn')
const pool = new BrowserPool(chromiumPath(''), log)
const site = startCrawlSite({ pages: 25, extras: false })
afterAll(async () => {
  await pool.close()
  await site.stop()
})

/** Documents alive in the tab's renderer (collected or not yet), by Chromium's DOM counters. */
async function documentsIn(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page)
  try {
    return (await cdp.send('Memory.getDOMCounters')).documents
  } finally {
    await cdp.detach().catch(() => {})
  }
}

test("a lane's tab keeps a bounded number of the documents it left, over 25 pages", async () => {
  const tabs = new Set<Page>()
  let current: Page | null = null
  const counts: number[] = []
  const summary = await crawlSite(
    {
      startUrl: site.url,
      maxPages: 25,
      maxDepth: 10,
      maxDurationMs: 120_000,
      concurrency: 1,
      navTimeoutMs: 5_000,
      signal: new AbortController().signal,
    },
    { browser: pool, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 2_000 },
    {
      onDiscovered() {},
      onPageStart: (_url, page) => {
        tabs.add(page)
        current = page
      },
      onPage: async () => {
        if (current && !current.isClosed()) counts.push(await documentsIn(current))
      },
    },
  )
  expect(summary.pagesScanned).toBe(25)
  // One tab for every page, so the counts are one renderer's.
  expect(tabs.size).toBe(1)
  expect(counts.length).toBe(25)
  // Each page leaves a document or so behind until a collection; without one, 28 were alive at the end.
  expect(Math.max(...counts)).toBeLessThanOrEqual(3 * COLLECT_GARBAGE_EVERY + 3)
}, 120_000)

describe('a blank page between two pages', () => {
  /** What each lane's tab showed as it was about to navigate to its next page, by lane. */
  async function shownBefore(concurrency: number, inView?: (lane: number) => boolean): Promise<Map<number, string[]>> {
    const shown = new Map<number, string[]>()
    const summary = await crawlSite(
      {
        startUrl: site.url,
        maxPages: 15,
        maxDepth: 10,
        maxDurationMs: 120_000,
        concurrency,
        navTimeoutMs: 5_000,
        signal: new AbortController().signal,
      },
      { browser: pool, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 2_000 },
      {
        onDiscovered() {},
        onPageStart: (_url, page, lane) => {
          const list = shown.get(lane) ?? []
          list.push(page.url())
          shown.set(lane, list)
        },
        ...(inView ? { inView } : {}),
        onPage: async () => {},
      },
    )
    expect(summary.pagesScanned).toBe(15)
    return shown
  }
  const blankAfterFirst = (urls: string[]) => urls.slice(1).filter((u) => u === 'about:blank').length

  test(`with more than ${BLANK_TAB_ABOVE_LANES} lanes every tab is blank before each page after its first`, async () => {
    const shown = await shownBefore(BLANK_TAB_ABOVE_LANES + 1)
    const all = [...shown.values()]
    // A new tab starts on about:blank too; every later page in the tab starts from the blank page.
    expect(all.flat().length).toBe(15)
    for (const urls of all) expect(blankAfterFirst(urls)).toBe(urls.length - 1)
    expect(all.some((urls) => urls.length > 1)).toBe(true)
  }, 120_000)

  test('the tab in the live view keeps its page until the next one, as do the tabs of a crawl of two lanes', async () => {
    const watched = await shownBefore(BLANK_TAB_ABOVE_LANES + 1, (lane) => lane === 0)
    const lane0 = watched.get(0) ?? []
    expect(lane0.length).toBeGreaterThan(1)
    expect(blankAfterFirst(lane0)).toBe(0)
    for (const [lane, urls] of watched) if (lane !== 0) expect(blankAfterFirst(urls)).toBe(urls.length - 1)
    const two = await shownBefore(BLANK_TAB_ABOVE_LANES)
    for (const urls of two.values()) expect(blankAfterFirst(urls)).toBe(0)
    expect([...two.values()].some((urls) => urls.length > 1)).toBe(true)
  }, 120_000)
})
