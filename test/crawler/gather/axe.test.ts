// axe with a finisher made ahead (crawler/gather/axe.ts): the same results as AxeBuilder's own run, on pages
// with and without frames, and AxeBuilder's own finish when the finisher is missing or gone. Real Chromium,
// real pages on 127.0.0.1 through the egress proxy, as a scan loads them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import * as jsc from 'bun:jsc'
import type { Page } from 'playwright-core'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import axe from 'axe-core'
import AxeBuilder from '@axe-core/playwright'
import {
  AXE_SOURCE,
  AXE_TAGS,
  asciiOnly,
  oneByteString,
  axeRunOptions,
  evaluateAxe,
  minifiedAxe,
  openFinisher,
  preloadAxe,
  runAxe,
  toAxeArtifact,
} from '../../../crawler/gather/axe.ts'
import { scanContextOptions } from '../../../crawler/gather/page-reader.ts'
import { closeSlot, WarmPages } from '../../../crawler/gather/warm-page.ts'
import { within } from '../../../shared/lib/async.ts'
import { startEgressProxy, type EgressProxy } from '../../../shared/egress/proxy.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { spaSite, weakSite, type Site } from '../../fixtures/sites.ts'

const POLICY = { allowPrivate: true, trustedHosts: [] }

/** A page with a handful of violations of different rules, one of them inside a same-origin frame. */
const CARELESS = `<!doctype html><html><head><title>Careless</title>
<style>.faint{color:#bbb;background:#fff}</style></head><body>
<img src="/x.png"><p class="faint">Barely readable text on white.</p>
<form><input type="text" name="q"><button></button></form>
<a href="#"></a><div role="button">Click</div>
<iframe src="/frame" title="inner"></iframe>
<ul><div>not a list item</div></ul></body></html>`
const FRAME = `<!doctype html><html lang="en"><head><title>Inner</title></head><body>
<img src="/y.png"><input type="checkbox"><p style="color:#ccc">faint inside</p></body></html>`

/** A page whose policy forbids eval and inline code, with violations of its own. */
const CSP_PAGE = `<!doctype html><html><head><title>Strict</title></head><body>
<img src="/z.png"><input type="email"><a href="/x"></a><h3>skipped levels</h3></body></html>`

/** A frame of another site (its own renderer) that keeps its main thread busy for 6 s once loaded. */
const SLOW_FRAME = `<!doctype html><html lang="en"><head><title>Slow</title></head><body><img src="/w.png">
<script>addEventListener('load', () => setTimeout(() => { const end = Date.now() + 6000; while (Date.now() < end) {} }, 0))</script></body></html>`

/** A page that loads, then keeps its main thread busy for good. */
const BUSY = `<!doctype html><html lang="en"><title>Busy</title><p>busy</p>
<script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 0))</script></html>`

let pool: BrowserPool
let proxy: EgressProxy
const sites: Site[] = []
let careless: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
  proxy = await startEgressProxy(POLICY)
  careless = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname
      // The slow frame comes from the other host name: another site, so a renderer of its own.
      const otherHost = new URL(req.url).hostname === 'localhost' ? '127.0.0.1' : 'localhost'
      const pages: Record<string, string> = {
        '/': CARELESS,
        '/frame': FRAME,
        '/csp': CSP_PAGE,
        '/busy': BUSY,
        '/slow-frame': SLOW_FRAME,
        '/with-slow-frame': `<!doctype html><html lang="en"><head><title>Outer</title></head><body><p>outer</p><iframe title="slow" src="http://${otherHost}:${careless.port}/slow-frame"></iframe></body></html>`,
      }
      const html = pages[path] ?? null
      const csp: Record<string, string> =
        path === '/csp' ? { 'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'" } : {}
      return html
        ? new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8', ...csp } })
        : new Response('', { status: 404 })
    },
  })
  sites.push(await weakSite(), await spaSite())
}, 60_000)

afterAll(async () => {
  await pool?.close()
  await proxy?.stop()
  careless?.stop(true)
  for (const s of sites) await s.stop()
})

/** One load of the URL in a fresh context, then axe with the given finisher (or AxeBuilder's own finish). */
async function axeOf(url: string, finisherFor?: (page: Page) => Promise<Page | null>, source?: string, preload = false) {
  const context = await pool.newContext(scanContextOptions(proxy))
  try {
    const page = await context.newPage()
    const finisher = finisherFor ? finisherFor(page) : undefined
    await page.goto(url, { waitUntil: 'load' })
    const preloaded = preload ? preloadAxe(page) : undefined
    return await runAxe(page, { ...(finisher ? { finisher } : {}), ...(source ? { source } : {}), ...(preloaded ? { preloaded } : {}) })
  } finally {
    await context.close()
  }
}

/** AxeBuilder with no option but the tags: every result type with all its nodes, finished in its own blank page. */
async function plainAxeOf(url: string) {
  const context = await pool.newContext(scanContextOptions(proxy))
  try {
    const page = await context.newPage()
    await page.goto(url, { waitUntil: 'load' })
    return toAxeArtifact(await new AxeBuilder({ page: page as never }).withTags(AXE_TAGS).analyze())
  } finally {
    await context.close()
  }
}

describe('axe as sent to a page', () => {
  test("a page of one frame runs axe with AxeBuilder's options, and neither AxeBuilder nor axe-core's module is loaded for it", async () => {
    const builder = new AxeBuilder({ page: {} as never }).options({ resultTypes: ['violations'] }).withTags(AXE_TAGS)
    expect(axeRunOptions()).toEqual((builder as unknown as { option: object }).option)
    // In a process of its own: what importing the module and taking its source loads.
    const script = `const m = await import('./crawler/gather/axe.ts'); m.minifiedAxe();
      console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('axe-core'))))`
    const child = Bun.spawn([process.execPath, '-e', script], { cwd: `${import.meta.dir}/../../..`, stdout: 'pipe', stderr: 'pipe' })
    const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited])
    expect(code).toBe(0)
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual([])
  })

  test('asciiOnly writes every character past ASCII as its escape, and the script means the same', () => {
    // Made from code points: the test's own source is ASCII once transpiled, String.raw's text included.
    const [copy, dash, eps, dots, smile] = [0xa9, 0x2013, 0x3b5, 0x2026, 0x1f600].map((n) => String.fromCodePoint(n))
    const bs = '\\'
    const source =
      `const o = { ${eps}: 1 }; return ["${copy} 2013${dash}2025", "${bs}${copy}", "${bs}${bs}${copy}", ` +
      `/[${dash}]/.test("a${dash}b"), o.${eps}, "x${dots}".length, "${smile}".length] // ${copy}`
    const escaped = asciiOnly(source)
    expect(/[\u0080-\uffff]/.test(escaped)).toBe(false)
    expect(escaped).toContain(`o.${bs}u03b5`)
    expect(escaped).toContain(`"${bs}u00a9", "${bs}${bs}${bs}u00a9"`)
    const run = (code: string) => new Function(code)() as unknown[]
    expect(run(escaped)).toEqual(run(source))
    expect(run(escaped)).toEqual([`${copy} 2013${dash}2025`, copy, `${bs}${copy}`, true, 1, 2, 2])
    expect(asciiOnly('plain ascii')).toBe('plain ascii')
  })

  test('the axe sent is kept one byte a character, in one piece, and is the escaped build', () => {
    // bun:jsc's describe (not in its types): how the engine stores a string.
    const layout = (v: string) => (jsc as unknown as { describe(v: unknown): string }).describe(v).slice(0, 16)
    // Two bytes a character, it was copied to a rope's full length and read again on every send (axe.ts).
    expect(layout(AXE_SOURCE)).toBe('String,8Bit:(1),') // a rope's starts 'String (rope)'
    expect(layout(asciiOnly(minifiedAxe()))).toBe('String,8Bit:(0),') // what it is without oneByteString
    expect(AXE_SOURCE).toBe(asciiOnly(minifiedAxe()))
    expect(oneByteString('plain ascii')).toBe('plain ascii')
  })

  test("the axe sent is ASCII only and loads the package's own rules, checks and messages", async () => {
    expect(/[\u0080-\uffff]/.test(AXE_SOURCE)).toBe(false)
    const packaged = minifiedAxe()
    const loaded = async (source: string) => {
      const context = await pool.newContext(scanContextOptions(proxy))
      try {
        const page = await context.newPage()
        await evaluateAxe(page, source)
        return await page.evaluate(() =>
          JSON.stringify({ v: (window as any).axe.version, rules: (window as any).axe.getRules(), data: (window as any).axe._audit.data }),
        )
      } finally {
        await context.close()
      }
    }
    const [ours, theirs] = [await loaded(AXE_SOURCE), await loaded(packaged)]
    expect(ours.length).toBeGreaterThan(50_000)
    expect(ours).toBe(theirs)
  }, 60_000)
})

describe('axe with a finisher made ahead', () => {
  test("gives the same results as AxeBuilder's own run: finished in a finisher made ahead or in the page itself, with and without frames, under a strict policy too", async () => {
    expect(AXE_SOURCE.length).toBeLessThan(axe.source.length / 2)
    const urls = [`http://127.0.0.1:${careless.port}/`, `http://127.0.0.1:${careless.port}/csp`, ...sites.map((s) => s.url)]
    for (const url of urls) {
      // AxeBuilder's own run as it comes: the package's readable build, finished in a page of its own.
      const own = await axeOf(url, undefined, axe.source)
      // A scan's: the minified build, finished in the finisher made ahead.
      const ahead = await axeOf(url, (page) => openFinisher(page.context()))
      expect(own).not.toBeNull()
      // AxeBuilder as it comes, with every node of every result type detailed: the same findings.
      expect(await plainAxeOf(url)).toEqual(own!)
      expect(ahead).toEqual(own!)
      // And sent to the page ahead, while it is read: the main frame's own injection is skipped.
      expect(await axeOf(url, (page) => openFinisher(page.context()), undefined, true)).toEqual(own!)
      // A crawl's: finished in the page that axe ran in.
      expect(await axeOf(url, async (page) => page, undefined, true)).toEqual(own!)
    }
    // The careless page's findings include the frame's: the partial runs were merged.
    const careful = await axeOf(`http://127.0.0.1:${careless.port}/`, (page) => openFinisher(page.context()))
    const ids = careful!.violations.map((v) => v.id)
    expect(ids).toEqual(expect.arrayContaining(['image-alt', 'color-contrast', 'label', 'link-name', 'list']))
    const imageAlt = careful!.violations.find((v) => v.id === 'image-alt')!
    expect(imageAlt.nodes).toBe(2)
    expect(imageAlt.targets.some((t) => t.startsWith('iframe'))).toBe(true)
  }, 300_000)

  test('a page of one frame with axe sent ahead runs axe.run in itself and needs no finisher; a page with a frame still goes through it', async () => {
    // A finisher that never comes: a run that waits for it ends at the deadline with no result.
    const never = () => new Promise<Page | null>(() => {})
    const context = await pool.newContext(scanContextOptions(proxy))
    try {
      const page = await context.newPage()
      const run = async (path: string) => {
        await page.goto(`http://127.0.0.1:${careless.port}${path}`, { waitUntil: 'load' })
        return runAxe(page, { finisher: never(), deadlineMs: 10_000, preloaded: preloadAxe(page) })
      }
      const alone = await run('/csp')
      expect(alone?.violations.map((v) => v.id)).toEqual(expect.arrayContaining(['image-alt', 'link-name']))
      expect(alone?.violations.find((v) => v.id === 'image-alt')?.helpUrl).toContain('application=playwright')
      expect(await run('/')).toBeNull()
    } finally {
      await context.close()
    }
  }, 90_000)

  test('falls back to AxeBuilder finishing on its own when the finisher could not be made or was closed', async () => {
    const url = sites[0]!.url
    const own = await axeOf(url)
    expect(await axeOf(url, async () => null)).toEqual(own!)
    expect(
      await axeOf(url, async (page) => {
        const f = await openFinisher(page.context())
        await f?.close()
        return f
      }),
    ).toEqual(own!)
  }, 120_000)

  test("a frame that takes more than AxeBuilder's 1 s to take axe is still tested", async () => {
    const result = await axeOf(`http://127.0.0.1:${careless.port}/with-slow-frame`, (page) => openFinisher(page.context()))
    const imageAlt = result?.violations.find((v) => v.id === 'image-alt')
    expect(imageAlt?.targets.some((t) => t.startsWith('iframe'))).toBe(true)
  }, 60_000)

  test('a page that keeps its main thread busy after load gets no accessibility result, at the deadline', async () => {
    const context = await pool.newContext(scanContextOptions(proxy))
    try {
      const page = await context.newPage()
      await page.goto(`http://127.0.0.1:${careless.port}/busy`, { waitUntil: 'load' })
      // Its preload never finishes either: the deadline covers the wait for it.
      const result = await within<{ r: unknown } | string>(
        runAxe(page, { finisher: openFinisher(context), deadlineMs: 3_000, preloaded: preloadAxe(page) }).then((r) => ({ r })),
        30_000,
        'still waiting',
      )
      expect(result).toEqual({ r: null })
    } finally {
      await context.close()
    }
  }, 60_000)

  test('a slot made ahead has axe evaluated in its blank page, none of it stays in the page it loads, and axe finds the same there', async () => {
    const url = `http://127.0.0.1:${careless.port}/`
    const own = await axeOf(url, undefined, axe.source)
    const warm = new WarmPages(pool, POLICY)
    warm.prepare()
    const slot = await warm.take()
    const axeType = () => typeof (window as unknown as { axe?: unknown }).axe
    try {
      expect(await slot.page.evaluate(axeType)).toBe('object')
      await slot.page.goto(url, { waitUntil: 'load' })
      expect(await slot.page.evaluate(axeType)).toBe('undefined')
      expect(await runAxe(slot.page, { finisher: slot.finisher })).toEqual(own!)
    } finally {
      await closeSlot(slot)
      await warm.close()
    }
  }, 120_000)

  test("a warm slot carries the worker's one finisher with axe loaded: the same page for the next slot, in none of their contexts, closed with the worker, made again once closed", async () => {
    const warm = new WarmPages(pool, POLICY)
    warm.prepare()
    const slot = await warm.take()
    let finisher: Page | null = null
    try {
      finisher = await slot.finisher
      expect(finisher).not.toBeNull()
      expect(await finisher!.evaluate(() => typeof (window as unknown as { axe?: { finishRun?: unknown } }).axe?.finishRun)).toBe(
        'function',
      )
      expect(slot.context.pages()).not.toContain(finisher!)
      await closeSlot(slot)
      expect(finisher!.isClosed()).toBe(false)
      const next = await warm.take()
      expect(await next.finisher).toBe(finisher)
      await closeSlot(next)
      // Gone (closed, crashed): the next slot gets a new one.
      await finisher!.close()
      const third = await warm.take()
      const made = await third.finisher
      expect(made).not.toBeNull()
      expect(made).not.toBe(finisher)
      await closeSlot(third)
    } finally {
      await warm.close()
    }
    expect((await slot.finisher)!.isClosed()).toBe(true)
  }, 90_000)

  test('a slot closed while its finisher is still being made closes at once, and the finisher gives up', async () => {
    // A page being made in a context that closes meanwhile never settles in Playwright: nothing may wait on it unbounded.
    // Before the fix, closeSlot waited on it and hung for good; now the finisher resolves null at its deadline (15 s).
    // A slot opened on demand (not prepared: no axe compiled first) is handed out while its finisher is on its way.
    const warm = new WarmPages(pool, POLICY)
    const slot = await warm.take()
    await within(
      closeSlot(slot).then(() => 'closed'),
      10_000,
      'still closing',
    ).then((r) => expect(r).toBe('closed'))
    await warm.close()
    const finisher = await within(slot.finisher, 30_000, undefined)
    expect(finisher === null || finisher?.isClosed()).toBe(true)
  }, 120_000)
})
