// The pool's Chromium command line: Playwright's own disabled features kept (Chromium reads only the last
// --disable-features, so ours must carry them), and the spare renderer off, so a crawl's lanes, each in a
// context of its own, do not start a renderer process per page. Real Chromium, pages on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { chromium, type Page } from 'playwright-core'
import {
  BrowserPool,
  CHROMIUM_ARGS,
  CHROMIUM_OFF_FEATURES,
  chromiumPath,
  fullChromiumPath,
  HEADLESS_SHELL,
  PLAYWRIGHT_DISABLED_FEATURES,
} from '../../crawler/browser.ts'
import { scanContextOptions } from '../../crawler/gather/page-reader.ts'
import { closeSlot, IDLE_COMPILE_DELAY_MS, WarmPages } from '../../crawler/gather/warm-page.ts'
import { startEgressProxy, type EgressProxy } from '../../shared/egress/proxy.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { chromiumBelow, descendants, isChromium, renderersBelow } from './audit/procs.ts'
import { machineDeadline } from '../harness/machine.ts'
import { until } from '../harness/wait.ts'

let site: ReturnType<typeof Bun.serve>
let proxy: EgressProxy

beforeAll(async () => {
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new Response(`<!doctype html><html lang="en"><title>${new URL(req.url).pathname}</title><p>page</p><a href="/next">next</a></html>`, {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      }),
  })
  proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
})

afterAll(async () => {
  site?.stop(true)
  await proxy?.stop()
})

/** The features Chromium's renderers below this process were started with turned off. */
function disabledInRenderers(): Set<string> {
  const out = new Set<string>()
  for (const pid of renderersBelow(process.pid)) {
    try {
      // A renderer forked from the zygote rewrites its command line as one string, arguments joined by spaces.
      const list = /--disable-features=([^\s\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1]
      if (list) for (const f of list.split(',')) out.add(f)
    } catch {}
  }
  return out
}

/** Polls `what` every 100 ms for at most `ms`: true as soon as it holds (not asked again after), else false. */
async function poll(what: () => boolean, ms: number): Promise<boolean> {
  for (let waited = 0; ; waited += 100) {
    if (what()) return true
    if (waited >= ms) return false
    await Bun.sleep(100)
  }
}

/** Whether axe was evaluated in a slot's blank page (it defines window.axe there). */
const compiled = async (slot: { page: Page }) => (await slot.page.evaluate('typeof window.axe')) === 'object'

/** The renderer processes below this one that were not there when it was called. */
function newRenderers(): () => number[] {
  const before = new Set(renderersBelow(process.pid))
  return () => renderersBelow(process.pid).filter((pid) => !before.has(pid))
}

describe('the browser pool launches Chromium', () => {
  test('with every feature Playwright turns off still off, and the spare renderer off too', async () => {
    // Playwright's defaults alone, as a reference: what its current version turns off.
    const plain = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS })
    let reference: Set<string>
    try {
      await (await plain.newPage()).setContent('<p>x</p>')
      reference = disabledInRenderers()
    } finally {
      await plain.close()
    }
    expect(reference.size).toBeGreaterThan(5)
    for (const f of PLAYWRIGHT_DISABLED_FEATURES) expect(reference.has(f)).toBe(true)

    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    try {
      const context = await pool.newContext(scanContextOptions(proxy))
      await (await context.newPage()).goto(`http://127.0.0.1:${site.port}/`)
      const ours = disabledInRenderers()
      // A feature Playwright adds in an upgrade and PLAYWRIGHT_DISABLED_FEATURES lacks shows up here.
      expect([...reference].filter((f) => !ours.has(f))).toEqual([])
      for (const f of CHROMIUM_OFF_FEATURES) expect(ours.has(f)).toBe(true)
    } finally {
      await pool.close()
    }
  }, 60_000)

  test('with no renderer but the pages it opens: no browser UI made ahead as web pages', async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    try {
      const context = await pool.newContext(scanContextOptions(proxy))
      const page = await context.newPage()
      await page.goto(`http://127.0.0.1:${site.port}/`)
      const browser = context.browser()!
      const cdp = await browser.newBrowserCDPSession()
      // Chromium makes its UI pages when it starts: they would be there by now, listed among the targets.
      const { targetInfos } = await cdp.send('Target.getTargets')
      expect(targetInfos.filter((t) => t.type !== 'page').map((t) => t.url)).toEqual([])
      const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: Array<{ type: string }> }
      expect(processInfo.filter((p) => p.type === 'renderer').length).toBe(1)
    } finally {
      await pool.close()
    }
  }, 60_000)

  test("in Debian's headless shell when it is installed, the same Chromium version as the full browser", async () => {
    if (!existsSync(HEADLESS_SHELL)) return void console.log(`skipped: no ${HEADLESS_SHELL}`)
    expect(chromiumPath('')).toBe(HEADLESS_SHELL)
    expect(chromiumPath('/opt/other')).toBe('/opt/other')
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    try {
      const context = await pool.newContext(scanContextOptions(proxy))
      const cdp = await context.browser()!.newBrowserCDPSession()
      const { product } = await cdp.send('Browser.getVersion')
      // The shell names itself HeadlessChrome; the full browser in headless mode says Chrome.
      expect(product).toMatch(/^HeadlessChrome\/\d+\./)
      const full = fullChromiumPath()
      if (full && full !== HEADLESS_SHELL) {
        const version = /(\d+\.\d+\.\d+\.\d+)/.exec(Bun.spawnSync([full, '--version'], { stderr: 'ignore' }).stdout.toString())?.[1]
        expect(product).toBe(`HeadlessChrome/${version}`)
      }
    } finally {
      await pool.close()
    }
  }, 60_000)

  test('four contexts navigating a tab each from page to page start about one renderer each, not one per page', async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const seen = new Set<number>()
    const sample = () => {
      for (const pid of renderersBelow(process.pid)) seen.add(pid)
    }
    try {
      await Promise.all(
        Array.from({ length: 4 }, async (_, lane) => {
          const context = await pool.newContext(scanContextOptions(proxy))
          const tab = await context.newPage()
          for (let i = 0; i < 6; i++) {
            await tab.goto(`http://127.0.0.1:${site.port}/lane/${lane}/page/${i}`)
            sample()
          }
        }),
      )
      sample()
    } finally {
      await pool.close()
    }
    // With Chromium's spare renderer on, this made 30 to 40 renderer processes (a spare started and thrown
    // away for nearly every navigation); without it, one per context and a few more.
    expect(seen.size).toBeGreaterThanOrEqual(4)
    expect(seen.size).toBeLessThanOrEqual(10)
  }, 60_000)

  test('a scan page made ahead on a browser a crawl then recycles is let go, so that Chromium exits', async () => {
    // Chromium's browser processes are children of this one (renderers and helpers are below them).
    const browsers = () =>
      descendants(process.pid)
        .filter((p) => p.ppid === process.pid && isChromium(p))
        .map((p) => p.pid)
    const before = new Set(browsers())
    const ours = () => browsers().filter((pid) => !before.has(pid))
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const warm = new WarmPages(pool, { allowPrivate: true, trustedHosts: [] })
    try {
      warm.prepare()
      // The slot is open once its blank page has a renderer.
      expect(await poll(() => renderersBelow(process.pid).length > 0, 20_000)).toBe(true)
      const first = ours()
      expect(first.length).toBe(1)
      pool.recycle()
      // A crawl lane goes on in the new browser; the slot made ahead is made again there.
      const lane = await pool.newContext(scanContextOptions(proxy))
      await (await lane.newPage()).goto(`http://127.0.0.1:${site.port}/`)
      expect(await poll(() => !ours().includes(first[0]!), 15_000)).toBe(true)
      expect(ours().length).toBe(1)
      const slot = await warm.take()
      expect(slot.context.browser()).toBe(lane.browser())
      await closeSlot(slot)
      await lane.close()
    } finally {
      await warm.close()
      await pool.close()
    }
  }, 60_000)

  test('two slots kept ahead, made one after the other: a scan following another at once takes one already open', async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const warm = new WarmPages(pool, { allowPrivate: true, trustedHosts: [] }, 2)
    const ours = newRenderers()
    try {
      warm.prepare()
      warm.prepare() // nothing more than two
      expect(await warm.ready(20_000)).toBe(true)
      // The second slot is made once the first is: wait until the renderers stop growing.
      let made = 0
      for (let i = 0; i < 100 && ours().length !== made; i++) {
        made = ours().length
        await Bun.sleep(300)
      }
      const first = await warm.take()
      const second = await warm.take()
      for (const slot of [first, second]) expect(slot.page.isClosed()).toBe(false)
      // Both were made ahead: taking them opened no renderer.
      expect(ours().length).toBe(made)
      await closeSlot(first)
      await closeSlot(second)
      // Each slot had a renderer of its own.
      expect(await poll(() => ours().length <= made - 2, 15_000)).toBe(true)
    } finally {
      await warm.close()
      await pool.close()
    }
  }, 90_000)

  test("a scan's slot is made again once the worker stays idle, or by the next scan's quiet wait: one slot, not two", async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const warm = new WarmPages(pool, { allowPrivate: true, trustedHosts: [] }, 2)
    const ours = newRenderers()
    /** Renderers once their count has held still for a while. */
    const settledCount = async () => {
      let n = -1
      for (let i = 0; i < 100 && ours().length !== n; i++) {
        n = ours().length
        await Bun.sleep(300)
      }
      return n
    }
    try {
      warm.prepare()
      expect(await warm.ready(20_000)).toBe(true)
      await settledCount()
      const a = await warm.take()
      const b = await warm.take()
      const taken = await settledCount()
      // `a`'s scan ends while `b`'s runs: nothing is made, not even after the idle delay.
      warm.giveBack(a)
      warm.prepareWhenIdle()
      await Bun.sleep(IDLE_COMPILE_DELAY_MS + 300)
      expect(await settledCount()).toBeLessThanOrEqual(taken)
      const afterA = ours().length
      // `b`'s page has loaded and waits for network quiet: one slot for the next scan, though two are kept.
      warm.prepareNext()
      expect(await warm.ready(20_000)).toBe(true)
      expect(await settledCount()).toBe(afterA + 1)
      // The worker is idle once `b` ends: the second slot is made after the delay.
      warm.giveBack(b)
      warm.prepareWhenIdle()
      await Bun.sleep(IDLE_COMPILE_DELAY_MS + 300)
      expect(await warm.ready(20_000)).toBe(true)
      const idle = await settledCount()
      const c = await warm.take()
      const d = await warm.take()
      for (const slot of [c, d]) expect(slot.page.isClosed()).toBe(false)
      // Both were made ahead: taking them opened no renderer. A third opens its own.
      expect(await settledCount()).toBe(idle)
      const e = await warm.take()
      expect(await poll(() => ours().length > idle, 20_000)).toBe(true)
      for (const slot of [c, d, e]) await closeSlot(slot)
    } finally {
      await warm.close()
      await pool.close()
    }
  }, 120_000)

  test('axe is compiled in a slot made ahead only while no scan runs, and in one made during a scan once it ends', async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const warm = new WarmPages(pool, { allowPrivate: true, trustedHosts: [] }, 1)
    try {
      warm.prepare()
      const a = await warm.take() // made while the worker was idle
      expect(await compiled(a)).toBe(true)
      warm.prepare() // made while `a`'s scan runs: left plain, its CPU not spent beside that scan
      expect(await warm.ready(20_000)).toBe(true)
      const b = await warm.take()
      expect(await compiled(b)).toBe(false)
      warm.prepare() // made while two scans run
      expect(await warm.ready(20_000)).toBe(true)
      warm.giveBack(a)
      warm.giveBack(b) // the worker is idle: the slot made meanwhile gets axe once it stays idle a moment
      await Bun.sleep(IDLE_COMPILE_DELAY_MS + 100)
      const c = await warm.take()
      expect(await compiled(c)).toBe(true)
      warm.giveBack(c)
    } finally {
      await warm.close()
      await pool.close()
    }
  }, 90_000)

  test('a worker of two scans at once compiles axe in a slot made while one runs, not while both do', async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const warm = new WarmPages(pool, { allowPrivate: true, trustedHosts: [] }, 1, 2)
    try {
      warm.prepare()
      const a = await warm.take()
      warm.prepare() // one scan runs: room for another, so the CPU is there
      expect(await warm.ready(20_000)).toBe(true)
      const b = await warm.take()
      expect(await compiled(b)).toBe(true)
      warm.prepare() // both run: the worker is full
      expect(await warm.ready(20_000)).toBe(true)
      const c = await warm.take()
      expect(await compiled(c)).toBe(false)
      for (const s of [a, b, c]) warm.giveBack(s)
    } finally {
      await warm.close()
      await pool.close()
    }
  }, 90_000)

  test('while a crawl runs no scan page is kept ahead; a scan meanwhile opens its own; the slot comes back after', async () => {
    const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
    const warm = new WarmPages(pool, { allowPrivate: true, trustedHosts: [] })
    const ours = newRenderers()
    try {
      warm.prepare()
      expect(await poll(() => ours().length > 0, 20_000)).toBe(true)
      expect(await warm.ready(20_000)).toBe(true)
      const resume = warm.suspend()
      // settled(): the slot made ahead and axe's finishing page have closed their contexts (a crawl waits for
      // it before it starts), then their renderers go, and no other slot is made.
      expect(await warm.settled(15_000)).toBe(true)
      expect(await poll(() => ours().length === 0, 15_000)).toBe(true)
      warm.prepare()
      await Bun.sleep(500)
      expect(ours().length).toBe(0)
      const slot = await warm.take()
      expect(slot.page.isClosed()).toBe(false)
      await closeSlot(slot)
      // What is left once the closed slot's renderer has gone (axe's finishing page, which that scan made
      // again): the slot made after the crawl is a renderer not among them.
      let left: number[] = []
      for (let i = 0; i < 50 && ours().join() !== left.join(); i++) {
        left = ours()
        await Bun.sleep(300)
      }
      resume()
      resume() // a second call changes nothing
      expect(await poll(() => ours().some((pid) => !left.includes(pid)), 20_000)).toBe(true)
      const next = await warm.take()
      expect(next.page.isClosed()).toBe(false)
      await closeSlot(next)
    } finally {
      await warm.close()
      await pool.close()
    }
  }, 90_000)
})

describe('a browser that goes away', () => {
  /** Warms a pool with a logger that keeps its lines, and returns it with the pid of its own Chromium. */
  async function warmPool() {
    const lines: Array<{ level: string; msg: string }> = []
    const keep = (level: string) => (msg: string) => void lines.push({ level, msg })
    const log = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error'), child: () => log }
    const before = new Set(chromiumBelow(process.pid).map((p) => p.pid))
    const pool = new BrowserPool(chromiumPath(''), log)
    await pool.warm()
    const own = chromiumBelow(process.pid).filter((p) => p.ppid === process.pid && !before.has(p.pid))
    expect(own.length).toBe(1)
    return { pool, lines, pid: own[0]!.pid }
  }

  test('is a warning while the process runs, and no fault once it has begun to stop', async () => {
    for (const stopping of [false, true]) {
      const { pool, lines, pid } = await warmPool()
      if (stopping) pool.shuttingDown()
      process.kill(pid, 'SIGKILL')
      await until(() => lines.some((l) => l.msg.startsWith('browser')), machineDeadline(10_000), 'the disconnect to be logged')
      const said = lines.filter((l) => l.msg.startsWith('browser'))
      expect(said).toEqual(
        stopping
          ? [{ level: 'info', msg: 'browser closed during shutdown' }]
          : [{ level: 'warn', msg: 'browser disconnected; next scan relaunches it' }],
      )
      await pool.close()
    }
  }, 60_000)
})
