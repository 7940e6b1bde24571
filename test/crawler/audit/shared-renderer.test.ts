// With CRAWL_SHARED_RENDERER a crawl's lanes share one renderer (crawler/browser.ts, SHARED_RENDERER_ARGS);
// contexts never do; without it each lane has its own; and a page whose script never yields does not hold
// the shared renderer past a lane's deadline (lane.ts, freeRenderer). Real Chromium, real fixture sites on
// port 0.
import { afterAll, describe, expect, test } from 'bun:test'
import { crawlSite, type CrawledPage, type CrawlOptions } from '../../../crawler/audit/crawl.ts'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { scanContextOptions } from '../../../crawler/gather/page-reader.ts'
import { startEgressProxy } from '../../../shared/egress/proxy.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { startCrawlSite, type CrawlSite } from '../../fixtures/crawl-site.ts'
import { renderersBelow } from './procs.ts'

const log = createLogger('error')
const pool = new BrowserPool(chromiumPath(''), log, [], { sharedRenderer: true })
const ownRenderers = new BrowserPool(chromiumPath(''), log)
const sites: CrawlSite[] = []
afterAll(async () => {
  await pool.close()
  await ownRenderers.close()
  for (const s of sites) await s.stop()
})

function site(options: Parameters<typeof startCrawlSite>[0]): CrawlSite {
  const s = startCrawlSite(options)
  sites.push(s)
  return s
}

async function crawl(s: CrawlSite, options: Partial<CrawlOptions>, onPageStart: () => void = () => {}, browser = pool) {
  const pages: CrawledPage[] = []
  const summary = await crawlSite(
    {
      startUrl: s.url,
      maxPages: 100,
      maxDepth: 10,
      maxDurationMs: 120_000,
      concurrency: 3,
      navTimeoutMs: 5_000,
      signal: new AbortController().signal,
      ...options,
    },
    { browser, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 2_000 },
    { onDiscovered: () => {}, onPageStart, onPage: async (p) => void pages.push(p) },
  )
  return { summary, pages }
}

describe('renderers', () => {
  /** The most renderers seen as pages started, from the fourth page on (every lane has its tab by then). */
  async function renderersWhileCrawling(browser: BrowserPool): Promise<number> {
    // Each document answers after 150 ms, so the three lanes' pages overlap.
    const s = site({ pages: 15, extras: false, pageDelayMs: 150 })
    const seen: number[] = []
    let started = 0
    const onPageStart = () => {
      if (++started > 3) seen.push(renderersBelow(process.pid).length)
    }
    const { summary, pages } = await crawl(s, {}, onPageStart, browser)
    expect(summary.stoppedBy).toBe('done')
    expect(pages.every((p) => p.ok)).toBe(true)
    expect(seen.length).toBeGreaterThan(5)
    return Math.max(...seen)
  }

  test('without the option each of three lanes has a renderer of its own', async () => {
    expect(await renderersWhileCrawling(ownRenderers)).toBeGreaterThanOrEqual(3)
  }, 120_000)

  test('with it three lanes crawl in one renderer; two contexts on the same site never share one', async () => {
    expect(await renderersWhileCrawling(pool)).toBe(1)
    const s = site({ pages: 2, extras: false })

    // Two scans' contexts on the same page: a renderer each.
    const proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
    const before = renderersBelow(process.pid).length
    const contexts = [await pool.newContext(scanContextOptions(proxy)), await pool.newContext(scanContextOptions(proxy))]
    try {
      for (const c of contexts) await (await c.newPage()).goto(s.url, { waitUntil: 'load' })
      expect(renderersBelow(process.pid).length - before).toBe(2)
    } finally {
      for (const c of contexts) await c.close()
      await proxy.stop()
    }
  }, 120_000)

  test("a page whose script never yields is stopped at a lane's deadline: the other lanes go on and the crawl ends done", async () => {
    const s = site({ pages: 9, busy: true, extras: false })
    const { summary, pages } = await crawl(s, { navTimeoutMs: 1_500 })
    const failed = pages.filter((p) => !p.ok)
    console.log(`failed: ${failed.map((p) => `${new URL(p.url).pathname} (${p.error})`).join(', ')}`)
    expect(summary.stoppedBy).toBe('done')
    // Every page crawled once, and every page whose parent was read: a page that failed at its deadline before
    // its links were read, as one may under load, hides its children.
    const crawled = new Set(pages.map((p) => p.url))
    expect(pages).toHaveLength(crawled.size)
    for (const url of crawled) expect(s.expected.has(url)).toBe(true)
    const ok = new Set(pages.filter((p) => p.ok).map((p) => p.url))
    for (const [url, parent] of s.parentOf) if (ok.has(parent)) expect(crawled).toContain(url)
    expect(crawled).toContain(`${s.origin}/busy`)
    // Which pages fail depends on which lane's deadline comes first: one lane's stop can free the busy page's
    // own read. Without any stop the crawl ran on to its wall-time cap (stoppedBy 'maxDuration').
    // At most the busy page and the page each other lane had in flight while it spun.
    expect(failed.length).toBeLessThanOrEqual(3)
  }, 120_000)
})
