// What a crawl lane's tab keeps of the pages it left: its renderer collects them every few pages, so the
// documents alive in it stay bounded however many pages the tab navigates (the crawl's peak memory,
// bench/crawl-throughput). Counted with Chromium's own DOM counters, read after each page is judged.
import { afterAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { crawlSite } from '../../../crawler/audit/crawl.ts'
import { COLLECT_GARBAGE_EVERY } from '../../../crawler/audit/lane.ts'
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
