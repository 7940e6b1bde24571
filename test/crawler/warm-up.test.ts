// The crawler's warm-up before it says ready: a real scan of its own loopback page in a real Chromium, and the
// first page made ahead for a real scan.
import { afterAll, expect, test } from 'bun:test'
import { BrowserPool, chromiumPath } from '../../crawler/browser.ts'
import { WarmPages } from '../../crawler/gather/warm-page.ts'
import { warmUp } from '../../crawler/warm-up.ts'
import { createLogger } from '../../shared/lib/log.ts'

const log = createLogger('warn')
const browser = new BrowserPool(chromiumPath(''), log)
// The production policy: no private address but what the warm-up names itself.
const warm = new WarmPages(browser, { allowPrivate: false, trustedHosts: [] })
afterAll(async () => {
  await warm.close()
  await browser.close()
})

test('the warm-up scans its own page through the production policy and leaves a page made ahead', async () => {
  expect(await warm.ready(10)).toBe(false) // nothing on its way yet
  warm.prepare()
  const r = await warmUp({ browser, warm, navTimeoutMs: 15_000, probeTimeoutMs: 5_000 }, log)
  expect(r).toMatchObject({ scanned: true, slotReady: true })
  // The slot made ahead is the one the first real scan takes: open, on the running browser.
  const slot = await warm.take()
  expect(slot.page.isClosed()).toBe(false)
  expect(slot.context.browser()?.isConnected()).toBe(true)
  warm.giveBack(slot)
}, 120_000)

test('a warm-up whose scan cannot run (the browser closed) is logged and does not throw', async () => {
  const closed = new BrowserPool(chromiumPath(''), log)
  await closed.close()
  const pages = new WarmPages(closed, { allowPrivate: false, trustedHosts: [] })
  const r = await warmUp({ browser: closed, warm: pages, navTimeoutMs: 5_000, probeTimeoutMs: 2_000 }, log)
  expect(r).toMatchObject({ scanned: false, slotReady: false })
  await pages.close()
}, 120_000)
