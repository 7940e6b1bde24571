// Which lane the live view follows during a crawl (TabCasts): the latest page, once its document is there.
// A lane that has only started a page has nothing new to show (its old page, then a blank one): the view
// stays where it is until the new page's document has loaded, then moves. Counts and order only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../../crawler/browser.ts'
import { TabCasts } from '../../../crawler/viewer/screencast.ts'
import { createMemoryInfra } from '../../../shared/infra/memory.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { viewerChannels, viewerKeys } from '../../../shared/protocol/viewer.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { until } from '../../harness/wait.ts'

/** Static pages, and /held, whose answer waits until the test releases it. */
function site() {
  let release: () => void = () => {}
  const held = new Promise<void>((r) => {
    release = r
  })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // The held answer may wait longer than the default 10 s of an idle connection on a busy machine.
    idleTimeout: 120,
    fetch: async (req) => {
      const path = new URL(req.url).pathname
      if (path === '/held') await held
      return new Response(`<!doctype html><title>${path}</title><h1>Page ${path}</h1>`, { headers: { 'content-type': 'text/html' } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, release: () => release(), stop: () => server.stop(true) }
}

describe('the live view follows the latest page', () => {
  const infra = createMemoryInfra({ claimIdleMs: 60_000, heartbeatMs: 10_000 })
  const log = createLogger('error')
  let browser: Browser
  let web: ReturnType<typeof site>

  beforeAll(async () => {
    web = site()
    browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
  }, machineDeadline(60_000))

  afterAll(async () => {
    web?.release()
    await browser?.close().catch(() => {})
    web?.stop()
    await infra.close()
  })

  test(
    'once its document has loaded, not while the lane is still navigating to it',
    async () => {
      const auditId = `aud_${randomBytes(8).toString('hex')}`
      const deps = { auditId, pubsub: infra.pubsub, kv: infra.kv, log }
      const frames: Array<{ lane: number; url: string }> = []
      const unsub = await infra.pubsub.subscribe(viewerChannels.frames(auditId), (m) => {
        const f = JSON.parse(m)
        if (f.type === 'frame') frames.push({ lane: f.lane, url: f.url })
      })
      const casts = new TabCasts(deps)
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
      try {
        const [lane0, lane1] = [await context.newPage(), await context.newPage()]
        casts.pageStarted(lane0, `${web.url}/zero`, 0)
        await lane0.goto(`${web.url}/zero`)
        // Nobody watches yet: no tab is in the view (with many lanes, the tabs out of it are emptied between pages).
        expect(casts.inView(0)).toBe(false)
        await infra.kv.set(viewerKeys.watching(auditId), '1', 60)
        await infra.pubsub.publish(viewerChannels.control(auditId), 'watch')
        await until(() => frames.length >= 3, machineDeadline(10_000), 'frames of lane 0')
        expect([casts.inView(0), casts.inView(1)]).toEqual([true, false])
        // Past the least time the view stays on a lane, so nothing but the rule under test holds it.
        await Bun.sleep(1_200)

        // Lane 1 starts a page whose answer is held: the view stays on lane 0 meanwhile.
        casts.pageStarted(lane1, `${web.url}/held`, 1)
        const navigation = lane1.goto(`${web.url}/held`)
        const from = frames.length
        await until(() => frames.length >= from + 8, machineDeadline(10_000), 'frames while lane 1 navigates')
        expect(frames.slice(from).every((f) => f.lane === 0 && f.url === `${web.url}/zero`)).toBe(true)

        // Its document arrives: the view moves to it.
        web.release()
        await navigation
        await until(() => frames.at(-1)?.lane === 1, machineDeadline(10_000), 'lane 1 on screen')
        expect(frames.at(-1)!.url).toBe(`${web.url}/held`)
        expect([casts.inView(0), casts.inView(1)]).toEqual([false, true])
      } finally {
        await casts.detachAll()
        await infra.pubsub.publish(viewerChannels.control(auditId), 'unwatch')
        await infra.kv.del(viewerKeys.watching(auditId))
        await unsub()
        await context.close()
      }
    },
    machineDeadline(60_000),
  )
})
