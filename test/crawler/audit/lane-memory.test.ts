// What a crawl lane's tab keeps of the pages it left: its renderer collects them every few pages, so the
// documents alive in it stay bounded however many pages the tab navigates (the crawl's peak memory,
// bench/crawl-throughput). Counted with Chromium's own DOM counters, read after each page is judged. With many
// lanes, a tab is emptied between two pages (its tiles of the page left are given back), except the tab in the
// live view.
import { afterAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { crawlSite } from '../../../crawler/audit/crawl.ts'
import { BLANK_TAB_ABOVE_LANES, COLLECT_GARBAGE_EVERY, PageLane } from '../../../crawler/audit/lane.ts'
import { LaneContexts } from '../../../crawler/audit/lane-context.ts'
import { laneSettings } from '../../../crawler/audit/lane-runner.ts'
import type { CrawlHooks, CrawlOptions } from '../../../crawler/audit/crawl-options.ts'
import { openLaneContext } from '../../../crawler/audit/page.ts'
import { type EgressProxy, startEgressProxy } from '../../../shared/egress/proxy.ts'
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

/** A crawl of the fixture site's first `pages` pages at `concurrency`, with these hooks (the rest do nothing). */
function crawl(pages: number, concurrency: number, hooks: Partial<CrawlHooks>) {
  return crawlSite(
    {
      startUrl: site.url,
      maxPages: pages,
      maxDepth: 10,
      maxDurationMs: 120_000,
      concurrency,
      navTimeoutMs: 5_000,
      signal: new AbortController().signal,
    },
    { browser: pool, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 2_000 },
    { onDiscovered() {}, onPageStart() {}, onPage: async () => {}, ...hooks },
  )
}

test("a lane's tab keeps a bounded number of the documents it left, over 25 pages", async () => {
  const tabs = new Set<Page>()
  let current: Page | null = null
  const counts: number[] = []
  const summary = await crawl(25, 1, {
    onPageStart: (_url, page) => {
      tabs.add(page)
      current = page
    },
    onPage: async () => {
      if (current && !current.isClosed()) counts.push(await documentsIn(current))
    },
  })
  expect(summary.pagesScanned).toBe(25)
  // One tab for every page, so the counts are one renderer's.
  expect(tabs.size).toBe(1)
  expect(counts.length).toBe(25)
  // Each page leaves a document or so behind until a collection; without one, 28 were alive at the end.
  expect(Math.max(...counts)).toBeLessThanOrEqual(3 * COLLECT_GARBAGE_EVERY + 3)
}, 120_000)

describe("a lane's tab emptied between two pages", () => {
  const proxies: EgressProxy[] = []
  afterAll(async () => {
    for (const p of proxies) await p.stop()
  })

  /** A lane on the fixture site, through an egress proxy as a crawl's; `text()` reads what its tab shows now. */
  async function laneOn(blankBetween: boolean) {
    const proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
    proxies.push(proxy)
    const contexts = new LaneContexts(pool, () => openLaneContext(pool, proxy), 3_000, log)
    const settings = { origin: new URL(site.url).origin, navTimeoutMs: 5_000, pageDeadlineExtraMs: 5_000, axeExtraMs: 0 }
    const lane = new PageLane(0, contexts, { ...settings, closeTimeoutMs: 3_000, blockMedia: true, blankBetween }, log)
    let tab: Page | null = null
    const halt = new AbortController().signal
    return {
      lane,
      visit: async (path: string) => {
        const r = await lane.visit(
          { url: new URL(path, site.url).href, depth: 0 },
          { halt, wantsAxe: () => false, onPageStart: (p) => void (tab = p) },
        )
        expect(r.visit?.kind === 'page' && r.visit.ok).toBe(true)
      },
      text: () => tab!.evaluate(() => document.documentElement.outerHTML),
    }
  }

  test(`with blankBetween (more than ${BLANK_TAB_ABOVE_LANES} lanes) the tab shows an empty document before its next page, unless it is in the live view`, async () => {
    const l = await laneOn(true)
    try {
      await l.lane.ready()
      await l.visit('/p/1')
      expect(await l.text()).toContain('/p/')
      await l.lane.ready()
      expect(await l.text()).toBe('<html><head></head><body></body></html>')
      // Emptied once: a second ready() before the next page leaves it as it is.
      await l.lane.ready()
      await l.visit('/p/2')
      expect(await l.text()).toContain('/p/')
      // The tab in the live view keeps its page until the next one.
      await l.lane.ready(true)
      expect(await l.text()).toContain('/p/')
    } finally {
      await l.lane.dropContext()
    }
  }, 60_000)

  test('without it the tab keeps its page until the next one; the crawl asks for it above two lanes', async () => {
    const l = await laneOn(false)
    try {
      await l.lane.ready()
      await l.visit('/p/1')
      await l.lane.ready()
      expect(await l.text()).toContain('/p/')
    } finally {
      await l.lane.dropContext()
    }
    const opts = { navTimeoutMs: 5_000 } as CrawlOptions
    expect(laneSettings(site.url, { ...opts, concurrency: BLANK_TAB_ABOVE_LANES }).blankBetween).toBe(false)
    expect(laneSettings(site.url, { ...opts, concurrency: BLANK_TAB_ABOVE_LANES + 1 }).blankBetween).toBe(true)
  }, 60_000)

  test('a crawl asks, lane by lane, whether its tab is in the live view, and keeps one tab a lane', async () => {
    const asked = new Set<number>()
    const tabs = new Set<Page>()
    const summary = await crawl(12, BLANK_TAB_ABOVE_LANES + 1, {
      onPageStart: (_url, page) => void tabs.add(page),
      inView: (lane) => {
        asked.add(lane)
        return lane === 0
      },
    })
    expect(summary.pagesScanned).toBe(12)
    expect([...asked].sort()).toEqual([0, 1, 2])
    // An emptying that failed would have replaced the tab: every page would have had one of its own.
    expect(tabs.size).toBe(3)
  }, 120_000)
})
