// The live viewer end to end with real browsers: a crawler-side Chromium screencasts an animating page,
// the service relays it, and a second Chromium opens the viewer link as a human would. In both modes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../../crawler/browser.ts'
import { attachScreencast, MAX_FPS } from '../../../crawler/viewer/screencast.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { createRedisInfra } from '../../../shared/infra/redis.ts'
import type { Infra } from '../../../shared/infra/types.ts'
import { createViewerToken, endViewer, viewerChannels, viewerKeys, viewerLink } from '../../../shared/protocol/viewer.ts'
import { REDIS_URL, startService, type Mode, type TestService } from '../../harness/service.ts'
import { until } from '../../harness/wait.ts'
import { machineDeadline } from '../../harness/machine.ts'

/** Two pages that never stop changing, so Chromium keeps producing frames. */
function animatedSite() {
  const page = (title: string) => `<!doctype html><html><head><title>${title}</title><style>
    body{margin:0;font:40px sans-serif}
    #box{width:200px;height:200px;background:#c33;animation:spin 1s linear infinite}
    @keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}
    </style></head><body><h1>${title}</h1><div id="box"></div><p id="n">0</p>
    <script>var n=0;setInterval(function(){document.getElementById('n').textContent=String(++n)},50)</script></body></html>`
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname
      // A page that paints once and never again: the screencast alone sends it once, or not at all.
      if (path.startsWith('/static/'))
        return new Response(`<!doctype html><html><head><title>${path}</title></head><body><h1>Static ${path}</h1></body></html>`, {
          headers: { 'content-type': 'text/html' },
        })
      return new Response(page(path === '/two' ? 'Page two' : 'Page one'), { headers: { 'content-type': 'text/html' } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

/** Every line the service logs while the test runs (the harness's logger writes to stdout/stderr). */
function captureLogs() {
  const lines: string[] = []
  const out = process.stdout.write.bind(process.stdout)
  const err = process.stderr.write.bind(process.stderr)
  const grab = (chunk: unknown) => {
    lines.push(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk as Uint8Array))
    return true
  }
  process.stdout.write = grab as typeof process.stdout.write
  process.stderr.write = ((c: unknown, ...rest: unknown[]) => (
    grab(c), (err as (...a: unknown[]) => boolean)(c, ...rest)
  )) as typeof process.stderr.write
  return {
    lines,
    restore() {
      process.stdout.write = out
      process.stderr.write = err
    },
  }
}

const framesShown = async (p: Page) => Number((await p.textContent('#frames')) ?? '0')

describe.each(['production', 'embedded'] as Mode[])('live viewer with real browsers (%s)', (mode) => {
  let svc: TestService
  let site: ReturnType<typeof animatedSite>
  let crawlerBrowser: Browser
  let viewerBrowser: Browser
  /** The crawler's side of the stores: its own Redis connection in production, as a crawler pod has. */
  let crawlerInfra: Infra
  let logs: ReturnType<typeof captureLogs>
  const log = createLogger('error')

  beforeAll(async () => {
    logs = captureLogs()
    // Debug level, so the test sees every line the service could ever write about a viewer.
    svc = await startService(mode, { LOG_LEVEL: 'debug', ...(mode === 'production' ? { ROLE: 'api' } : {}) })
    const config = svc.running.services.config
    crawlerInfra =
      mode === 'production'
        ? await createRedisInfra(REDIS_URL, { claimIdleMs: 60_000, heartbeatMs: 10_000 }, config.REDIS_PREFIX)
        : svc.running.services.infra
    site = animatedSite()
    const launch = () => chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
    ;[crawlerBrowser, viewerBrowser] = await Promise.all([launch(), launch()])
  }, machineDeadline(120_000))

  afterAll(async () => {
    await crawlerBrowser?.close().catch(() => {})
    await viewerBrowser?.close().catch(() => {})
    if (mode === 'production') await crawlerInfra?.close()
    await svc?.stop()
    site?.stop()
    logs?.restore()
  }, 60_000)

  test('frames reach the viewer only while someone watches, and the page says when the crawl has ended', async () => {
    const auditId = `aud_${randomBytes(8).toString('hex')}`
    const token = await createViewerToken(crawlerInfra.kv, auditId, 300)
    const link = viewerLink(svc.url, auditId, token)

    const published: string[] = []
    const unsub = await crawlerInfra.pubsub.subscribe(viewerChannels.frames(auditId), (m) => published.push(m))
    const crawlPage = await (await crawlerBrowser.newContext({ viewport: { width: 1280, height: 720 } })).newPage()
    await crawlPage.goto(`${site.url}/one`)
    const cast = await attachScreencast(crawlPage, { auditId, pubsub: crawlerInfra.pubsub, kv: crawlerInfra.kv, log })

    // Nobody watches yet: nothing is published (nor encoded).
    await Bun.sleep(1_500)
    expect(published.length).toBe(0)

    const viewer = await viewerBrowser.newPage()
    await viewer.goto(link)
    await until(async () => (await framesShown(viewer)) >= 5, 15_000, 'frames in the viewer', { rethrow: true })
    const picture = () => viewer.evaluate(() => (document.getElementById('screen') as HTMLCanvasElement).toDataURL('image/png'))
    const first = await picture()
    expect(first.length).toBeGreaterThan(1_000)
    await until(async () => (await picture()) !== first, 5_000, 'the picture changes', { rethrow: true })
    expect(await viewer.textContent('#url')).toBe(`${site.url}/one`)
    const message = JSON.parse(published[0]!)
    expect(message).toMatchObject({ type: 'frame', url: `${site.url}/one` })

    // The crawl moves on: the next page takes over the stream, the previous one is detached.
    const nextPage = await crawlPage.context().newPage()
    await nextPage.goto(`${site.url}/two`)
    const cast2 = await attachScreencast(nextPage, { auditId, pubsub: crawlerInfra.pubsub, kv: crawlerInfra.kv, log })
    await cast.detach()
    await crawlPage.close()
    await until(async () => (await viewer.textContent('#url')) === `${site.url}/two`, 10_000, 'the viewer follows the next page', {
      rethrow: true,
    })

    // A later page takes the stream once its tab has a page (touch: the crawl says so when the page's document
    // is there; a tab only attached stays behind the one shown); when it goes, the latest page still attached
    // takes it back.
    const third = await crawlPage.context().newPage()
    await third.goto(`${site.url}/three`)
    const cast3 = await attachScreencast(third, { auditId, pubsub: crawlerInfra.pubsub, kv: crawlerInfra.kv, log })
    cast3.touch(`${site.url}/three`)
    await until(async () => (await viewer.textContent('#url')) === `${site.url}/three`, 10_000, 'the viewer follows the third page', {
      rethrow: true,
    })
    await cast3.detach()
    await third.close()
    await until(
      async () => (await viewer.textContent('#url')) === `${site.url}/two`,
      10_000,
      'the viewer returns to the page still attached',
      { rethrow: true },
    )

    // The last viewer leaves: publishing stops at once.
    await viewer.close()
    await Bun.sleep(700)
    const afterLeave = published.length
    await Bun.sleep(1_500)
    expect(published.length).toBe(afterLeave)

    // Someone opens the link again, then the crawl ends while they watch.
    const viewer2 = await viewerBrowser.newPage()
    await viewer2.goto(link)
    await until(async () => (await framesShown(viewer2)) >= 3, 15_000, 'frames for the second viewer', { rethrow: true })
    await endViewer(crawlerInfra.pubsub, crawlerInfra.kv, auditId)
    await viewer2.waitForSelector('#ended:not([hidden])', { timeout: 5_000 })
    expect(await viewer2.textContent('#ended h1')).toBe('This crawl has ended')
    expect(await viewer2.isHidden('#live')).toBe(true)
    // The ended page sends the person to the audit's report page where the server has a dashboard to sign in
    // to (the embedded default); without one (production here: no OIDC_ISSUER) it names the get_audit call.
    if (mode === 'embedded') {
      expect(await viewer2.getAttribute('#ended a.report-link', 'href')).toBe(`/dashboard/audits/${auditId}`)
    } else {
      expect(await viewer2.textContent('#ended')).toContain(`get_audit {"auditId": "${auditId}"}`)
    }

    // A fresh open of the link after the end: the ended page, never a frame.
    const late = await viewerBrowser.newPage()
    await late.goto(link)
    await late.waitForSelector('#ended:not([hidden])', { timeout: 5_000 })
    expect(await framesShown(late)).toBe(0)

    await cast2.detach()
    await unsub()
    await Promise.all([viewer2.close(), late.close(), nextPage.close()])

    // The token never reached the server's logs (it travels in the fragment and the socket's first message).
    const text = logs.lines.join('')
    expect(text).toContain(auditId)
    expect(text).not.toContain(token)
  }, 90_000)

  test(
    'static pages keep moving while watched; a chosen lane is followed; the latest frame and progress greet the next viewer',
    async () => {
      const auditId = `aud_${randomBytes(8).toString('hex')}`
      const deps = { auditId, pubsub: crawlerInfra.pubsub, kv: crawlerInfra.kv, log }
      const frames: Array<{ lane: number; url: string; lanes: number; bytes: number; ts: number }> = []
      const unsub = await crawlerInfra.pubsub.subscribe(viewerChannels.frames(auditId), (m) => {
        const f = JSON.parse(m)
        if (f.type === 'frame') frames.push({ lane: f.lane, url: f.url, lanes: f.lanes, bytes: f.data.length, ts: f.ts })
      })
      const context = await crawlerBrowser.newContext({ viewport: { width: 1280, height: 800 } })
      const [lane0, lane1] = [await context.newPage(), await context.newPage()]
      await lane0.goto(`${site.url}/static/0`)
      await lane1.goto(`${site.url}/static/1`)
      const c0 = await attachScreencast(lane0, deps, 0)
      const c1 = await attachScreencast(lane1, deps, 1)
      c1.touch(`${site.url}/static/1`)
      await crawlerInfra.kv.set(viewerKeys.watching(auditId), '1', 30)
      await crawlerInfra.pubsub.publish(viewerChannels.control(auditId), 'watch')

      // A page that never repaints still moves: stills of the focused tab keep coming (about ten a second on a
      // quiet machine, measured by bench/viewer-fps), never more than MAX_FPS.
      await until(() => frames.length >= 1, machineDeadline(10_000), 'the first frame')
      const n0 = frames.length
      await until(() => frames.length >= n0 + 10, machineDeadline(10_000), 'ten more frames of pages that never repaint')
      // The cap, by when the frames were sent (their ts), not when they arrived: a busy subscriber gets them
      // in bursts.
      const sent = frames.slice(n0).map((f) => f.ts)
      const rate = (sent.length - 1) / ((sent.at(-1)! - sent[0]!) / 1000)
      expect(rate).toBeLessThanOrEqual(MAX_FPS + 1)
      // The most recently active lane is shown (once the view has stayed its least time on the first one), and
      // the frames say how many lanes there are.
      await until(() => frames.at(-1)?.lane === 1, machineDeadline(5_000), 'the most recently active lane on screen')
      expect(frames.at(-1)).toMatchObject({ lane: 1, url: `${site.url}/static/1`, lanes: 2 })

      // A viewer chooses lane 0: it is followed, even when lane 1 starts the next page.
      await crawlerInfra.pubsub.publish(viewerChannels.control(auditId), 'focus:0')
      await until(() => frames.at(-1)?.lane === 0, machineDeadline(5_000), 'lane 0 on screen')
      c1.touch(`${site.url}/static/1`)
      const touched = frames.length
      await until(() => frames.length >= touched + 3, machineDeadline(5_000), 'three frames after lane 1 moved on')
      expect(frames.slice(touched).every((f) => f.lane === 0 && f.url === `${site.url}/static/0`)).toBe(true)
      // Back to following the latest page.
      await crawlerInfra.pubsub.publish(viewerChannels.control(auditId), 'focus:auto')
      c1.touch(`${site.url}/static/1`)
      await until(() => frames.at(-1)?.lane === 1, machineDeadline(5_000), 'the latest lane again')

      // A slow link asks for lighter frames.
      const normal = frames.slice(-5).reduce((n, f) => n + f.bytes, 0) / 5
      await crawlerInfra.pubsub.publish(viewerChannels.control(auditId), 'quality:low')
      // Frames already on their way keep the old quality: the average of the last five drops once they are through.
      const lastFive = () => frames.slice(-5).reduce((n, f) => n + f.bytes, 0) / 5
      const from = frames.length
      await until(() => frames.length >= from + 5 && lastFive() < normal * 0.8, machineDeadline(5_000), 'light frames')
      expect(lastFive()).toBeLessThan(normal * 0.8)

      // The latest frame is kept for the next viewer (at most a second old).
      const latest = JSON.parse((await crawlerInfra.kv.get(viewerKeys.latest(auditId)))!)
      expect(latest).toMatchObject({ type: 'frame', lanes: 2 })

      // Nobody watches: no more frames.
      await crawlerInfra.kv.del(viewerKeys.watching(auditId))
      await crawlerInfra.pubsub.publish(viewerChannels.control(auditId), 'unwatch')
      // Frames sent before the capture heard it may still arrive, later on a busy machine.
      await Bun.sleep(machineDeadline(400))
      const stopped = frames.length
      await Bun.sleep(1_000)
      expect(frames.length).toBe(stopped)
      await c0.detach()
      await c1.detach()
      await unsub()
      await context.close()
    },
    machineDeadline(60_000),
  )

  test('a link with a wrong token shows "not valid", never frames', async () => {
    const auditId = `aud_${randomBytes(8).toString('hex')}`
    await createViewerToken(crawlerInfra.kv, auditId, 300)
    const page = await viewerBrowser.newPage()
    await page.goto(viewerLink(svc.url, auditId, randomBytes(32).toString('base64url')))
    await page.waitForSelector('#invalid:not([hidden])', { timeout: 5_000 })
    expect(await page.textContent('#invalid h1')).toBe('This viewer link is not valid')
    expect(await framesShown(page)).toBe(0)
    await page.close()
  }, 30_000)

  test('attach is safe on a page that closes under it, and detach is idempotent', async () => {
    const auditId = `aud_${randomBytes(8).toString('hex')}`
    const context = await crawlerBrowser.newContext()
    for (let i = 0; i < 5; i++) {
      const page = await context.newPage()
      await page.goto(`${site.url}/one`)
      const cast = await attachScreencast(page, { auditId, pubsub: crawlerInfra.pubsub, kv: crawlerInfra.kv, log })
      await page.close()
      await cast.detach()
      await cast.detach()
    }
    await context.close()
  }, 30_000)
})
