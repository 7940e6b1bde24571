// A scan's page kept for the same account's next scan (crawler/gather/kept-pages.ts): the next scan of that
// account loads in the same tab and renderer, and finds nothing the last one left (cookies, local and session
// storage, IndexedDB, the HTTP and memory caches); no other account ever gets it; kept pages are bounded in
// number, closed when they cannot be used, and let go when a crawl starts. Real Chromium, a page on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { KEEP_USES, KeptPages } from '../../../crawler/gather/kept-pages.ts'
import { scanContextOptions } from '../../../crawler/gather/page-reader.ts'
import { startEgressProxy } from '../../../shared/egress/proxy.ts'
import { gather } from '../../../crawler/gather/index.ts'
import { loadPage } from '../../../crawler/gather/page-reader.ts'
import { runChecks } from '../../../shared/checks/runner.ts'
import { testCertificate } from '../../fixtures/sites.ts'
import { type PageSlot, WarmPages } from '../../../crawler/gather/warm-page.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { renderersBelow } from '../audit/procs.ts'

// The page reports what it finds of an earlier visit, then leaves all of it behind: a cookie, local and
// session storage, an IndexedDB database, and a script the browser may cache for an hour.
const PAGE = `<!doctype html><html lang="en"><title>kept</title><script src="/app.js"></script><script>
(async () => {
  const dbs = (await indexedDB.databases()).map((d) => d.name).join(',')
  const seen = { cookie: document.cookie, local: localStorage.getItem('k'), session: sessionStorage.getItem('k'), dbs }
  await fetch('/seen?' + new URLSearchParams(Object.entries(seen).map(([k, v]) => [k, String(v)])))
  document.cookie = 'visited=1; max-age=3600; path=/'
  localStorage.setItem('k', 'left')
  sessionStorage.setItem('k', 'left')
  indexedDB.open('left-behind')
})()
</script></html>`

let site: ReturnType<typeof Bun.serve>
const seen: Array<Record<string, string>> = []
let scriptHits = 0
let pool: BrowserPool
const policy = { allowPrivate: true, trustedHosts: [] }

beforeAll(() => {
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      if (url.pathname === '/seen') {
        seen.push(Object.fromEntries(url.searchParams))
        return new Response('ok')
      }
      if (url.pathname === '/app.js') {
        scriptHits++
        return new Response('window.app = 1', { headers: { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=3600' } })
      }
      return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
})

afterAll(async () => {
  await pool?.close()
  site?.stop(true)
})

/** The page loaded and read in a slot (no axe), as a scan's browser part does it. */
async function loadIn(slot: PageSlot): Promise<void> {
  const loaded = await loadPage(`http://127.0.0.1:${site.port}/`, slot.proxy, {
    browser: pool,
    navTimeoutMs: 15_000,
    opened: slot,
    axe: false,
  })
  expect(loaded.error).toBeNull()
}

/** One scan's browser part on a slot taken for `owner`, then given back. */
async function scanAs(warm: WarmPages, owner: string | undefined): Promise<PageSlot> {
  const slot = await warm.take(owner)
  try {
    await loadIn(slot)
    return slot
  } finally {
    warm.giveBack(slot, owner)
  }
}

/** Waits until the page has reported what it found (its fetch of /seen), at most 10 s. */
async function reported(count: number): Promise<Record<string, string>> {
  for (let i = 0; i < 100 && seen.length < count; i++) await Bun.sleep(100)
  expect(seen.length).toBe(count)
  return seen[count - 1]!
}

/** Whether the page closes within 10 s (a page let go is closed in the background). */
async function closes(page: Page): Promise<boolean> {
  for (let i = 0; i < 100 && !page.isClosed(); i++) await Bun.sleep(100)
  return page.isClosed()
}

const nothingLeft = { cookie: '', local: 'null', session: 'null', dbs: '' }

describe("a scan's page kept for its account's next scan", () => {
  test('is the same tab and renderer, and holds nothing of the scan before', async () => {
    const warm = new WarmPages(pool, policy, 1, 1, 2)
    try {
      const before = seen.length
      const hits = scriptHits
      const first = await scanAs(warm, 'acct-a')
      expect(await reported(before + 1)).toEqual(nothingLeft)
      const renderers = renderersBelow(process.pid).length
      const second = await scanAs(warm, 'acct-a')
      expect(second.page).toBe(first.page)
      expect(second.context).toBe(first.context)
      // Cookie, storage and IndexedDB cleared; the cached script fetched again (the HTTP cache cleared).
      expect(await reported(before + 2)).toEqual(nothingLeft)
      expect(scriptHits).toBe(hits + 2)
      // No renderer was started for the second scan.
      expect(renderersBelow(process.pid).length).toBeLessThanOrEqual(renderers)
    } finally {
      await warm.close()
    }
  }, 90_000)

  test('has no cookie left, not even of a site none of its frames was on', async () => {
    const warm = new WarmPages(pool, policy, 1, 1, 1)
    try {
      const slot = await warm.take('acct-a')
      // As a subresource of another site would leave one: clearing by the frames' origins alone would miss it.
      await slot.context.addCookies([{ name: 'tracker', value: '1', domain: 'elsewhere.test', path: '/' }])
      await loadIn(slot)
      expect((await slot.context.cookies()).length).toBeGreaterThan(0)
      warm.giveBack(slot, 'acct-a')
      const again = await warm.take('acct-a')
      expect(again.context).toBe(slot.context)
      expect(await again.context.cookies()).toEqual([])
      warm.giveBack(again, 'acct-a')
    } finally {
      await warm.close()
    }
  }, 60_000)

  test('is never handed to a scan of another account, nor to a scan for no account', async () => {
    const warm = new WarmPages(pool, policy, 1, 1, 2)
    try {
      const a = await scanAs(warm, 'acct-a')
      const b = await scanAs(warm, 'acct-b')
      expect(b.context).not.toBe(a.context)
      const none = await scanAs(warm, undefined)
      expect([a.context, b.context]).not.toContain(none.context)
      // Each account gets its own back.
      expect((await scanAs(warm, 'acct-a')).context).toBe(a.context)
      expect((await scanAs(warm, 'acct-b')).context).toBe(b.context)
      // A scan for no account is not kept: its context is closed.
      expect(await closes(none.page)).toBe(true)
    } finally {
      await warm.close()
    }
  }, 90_000)

  test('are bounded: the oldest is closed when one more is kept, and all when a crawl starts or the worker stops', async () => {
    const warm = new WarmPages(pool, policy, 1, 1, 1)
    try {
      const a = await scanAs(warm, 'acct-a')
      const b = await scanAs(warm, 'acct-b')
      expect(await closes(a.page)).toBe(true)
      expect(b.page.isClosed()).toBe(false)
      const resume = warm.suspend()
      expect(await warm.settled(15_000)).toBe(true)
      expect(b.page.isClosed()).toBe(true)
      resume()
      // While a crawl runs nothing is kept: the page goes back closed.
      const during = warm.suspend()
      const c = await scanAs(warm, 'acct-c')
      expect(await warm.settled(15_000)).toBe(true)
      expect(c.page.isClosed()).toBe(true)
      during()
      const d = await scanAs(warm, 'acct-d')
      await warm.close()
      expect(d.page.isClosed()).toBe(true)
    } finally {
      await warm.close()
    }
  }, 90_000)

  test('a closed page is not handed out, and a context serves at most KEEP_USES scans', async () => {
    const warm = new WarmPages(pool, policy, 1, 1, 1)
    try {
      const a = await scanAs(warm, 'acct-a')
      await a.page.close()
      const next = await scanAs(warm, 'acct-a')
      expect(next.context).not.toBe(a.context)
      let last = next
      for (let i = 1; i < KEEP_USES; i++) {
        const s = await scanAs(warm, 'acct-a')
        expect(s.context).toBe(next.context)
        last = s
      }
      // KEEP_USES scans done in it: the next gets a fresh context.
      expect((await scanAs(warm, 'acct-a')).context).not.toBe(last.context)
    } finally {
      await warm.close()
    }
  }, 180_000)

  test('is let go once its time is up: closed, and not handed out after', async () => {
    const proxy = await startEgressProxy(policy)
    const released: unknown[] = []
    const kept = new KeptPages<{ context: Awaited<ReturnType<BrowserPool['newContext']>>; page: Page }>(
      2,
      (slot) => {
        released.push(slot)
        void slot.context.close()
      },
      300,
    )
    try {
      const context = await pool.newContext(scanContextOptions(proxy))
      const slot = { context, page: await context.newPage() }
      await slot.page.goto(`http://127.0.0.1:${site.port}/`)
      kept.keep('acct-a', slot, new Set([`http://127.0.0.1:${site.port}`]))
      expect(kept.size).toBe(1)
      for (let i = 0; i < 100 && released.length === 0; i++) await Bun.sleep(100)
      expect(released).toEqual([slot])
      expect(kept.size).toBe(0)
      expect(await kept.take('acct-a', () => true)).toBeNull()
    } finally {
      kept.releaseAll()
      await kept.drained()
      await proxy.stop()
    }
  }, 60_000)

  test("judges an account's rescan of a page as its first scan, in a fresh context, judged it", async () => {
    // cookies-bad is https with a certificate this browser is not told to trust: its load ends on an error page,
    // and a page whose navigation away from it does not end cleanly is closed, not kept; judged the same either way.
    const names = ['careless-api-spa', 'third-party', 'cookies-bad', 'seo-a11y-poor']
    const sites = await Promise.all(names.map(async (n) => (await import(`../../fixtures/sites/${n}.ts`)).start()))
    const warm = new WarmPages(pool, policy, 1, 1, 1)
    const opts = { policy, browser: pool, navTimeoutMs: 15_000, probeTimeoutMs: 8_000, warm, trustedSpki: [testCertificate().spki] }
    // The contexts the scans got, to check that each second scan had its first one's.
    const contexts: unknown[] = []
    const take = warm.take.bind(warm)
    warm.take = async (owner) => {
      const slot = await take(owner)
      contexts.push(slot.context)
      return slot
    }
    const judged = async (url: string, owner: string) =>
      runChecks((await gather(url, { ...opts, owner })).artifacts).map((r) => `${r.id} ${r.status} ${r.severity}`)
    try {
      for (const [i, site] of sites.entries()) {
        // A new account for each page: its first scan opens a fresh context, its second finds it kept.
        const first = await judged(site.url, `acct-${i}`)
        const again = await judged(site.url, `acct-${i}`)
        expect({ site: names[i], checks: again }).toEqual({ site: names[i], checks: first })
        // The error page's tab is kept only when its navigation away ended cleanly, which depends on timing.
        if (names[i] !== 'cookies-bad')
          expect({ site: names[i], kept: contexts[2 * i + 1] === contexts[2 * i] }).toEqual({ site: names[i], kept: true })
      }
    } finally {
      await warm.close()
      for (const site of sites) await site.stop()
    }
  }, 180_000)
})
