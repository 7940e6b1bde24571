// The live viewer in a real Chromium when its connection to the api is lost while the crawl runs (the api
// restarting, a network blip): the page connects again with its token and goes on showing frames, rather
// than asking the person to reload. The api sits behind a relay the test cuts and restores; frames are
// published as a crawler would publish them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { createViewerToken, viewerChannels } from '../../shared/protocol/viewer.ts'
import { machineDeadline } from '../harness/machine.ts'
import { startService, type TestService } from '../harness/service.ts'
import { type Relay, startRelay } from '../harness/tcp-relay.ts'
import { until } from '../harness/wait.ts'

describe('the live viewer losing its connection mid-crawl', () => {
  let svc: TestService
  let relay: Relay
  let browser: Browser
  /** A frame as the crawler sends one (the page shows only frames it can decode): a JPEG of a page. */
  let jpeg = ''

  beforeAll(async () => {
    svc = await startService('production', { ROLE: 'api' })
    relay = await startRelay('127.0.0.1', svc.running.port!)
    browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
    const shot = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await shot.setContent('<h1>A crawled page</h1>')
    jpeg = (await shot.screenshot({ type: 'jpeg', quality: 60 })).toString('base64')
    await shot.close()
  }, machineDeadline(120_000))

  afterAll(async () => {
    await browser?.close().catch(() => {})
    await relay?.stop()
    await svc?.stop()
  }, 60_000)

  test('connects again with its token and shows the frames that follow', async () => {
    const { kv, pubsub } = svc.running.services.infra
    const auditId = `aud_${randomBytes(8).toString('hex')}`
    const token = await createViewerToken(kv, auditId, 300)
    const frame = (n: number) => JSON.stringify({ type: 'frame', url: `http://site/${n}`, data: jpeg, ts: n, lane: 0, lanes: 1, seq: n })
    const page = await browser.newPage()
    await page.goto(`http://127.0.0.1:${relay.port}/viewer/${auditId}#${token}`)
    const frames = async () => Number(await page.textContent('#frames'))
    // Frames until the page shows one: it publishes only while someone watches.
    let n = 0
    await until(
      async () => {
        await pubsub.publish(viewerChannels.frames(auditId), frame(++n))
        return (await frames()) >= 1
      },
      30_000,
      'a first frame in the viewer',
      { everyMs: 200 },
    )
    const before = await frames()

    await relay.cut()
    await Bun.sleep(1_500)
    await relay.restore()
    await until(
      async () => {
        await pubsub.publish(viewerChannels.frames(auditId), frame(++n))
        return (await frames()) > before
      },
      30_000,
      'frames after the connection came back',
      { everyMs: 200 },
    )
    expect(await page.isHidden('#lost')).toBe(true)
    expect(await page.isVisible('#live')).toBe(true)
    await page.close()
  }, 90_000)
})
