// The viewer page as a person sees it, in a real Chromium: a placeholder before the first frame (never a
// broken image), the state in step with the frames (crawling from the first frame on, whatever an older
// progress message says), frames painted whole, and the end card with the audit's score and final counts.
// Messages are published as the crawler would; the service relays them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { publishViewerEnd, publishViewerProgress } from '../../crawler/viewer/progress.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { createViewerToken, endViewer, viewerChannels, viewerLink } from '../../shared/protocol/viewer.ts'
import { machineDeadline } from '../harness/machine.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'

const PROGRESS = {
  pagesScanned: 0,
  pagesFailed: 0,
  pagesDiscovered: 1,
  currentUrl: null,
  findings: { critical: 0, high: 0, medium: 0, low: 0 },
  startedAt: new Date().toISOString(),
  lanes: 1,
}

/** A frame message as the crawler publishes one: `data` is the JPEG's base64. */
const frameMessage = (data: string, seq: number) =>
  JSON.stringify({ type: 'frame', url: 'http://site.test/', data, ts: Date.now(), lane: 0, lanes: 1, seq })

/** The images a person would see as broken: shown, yet with nothing decoded. */
const brokenImages = (p: Page) =>
  p.evaluate(() => [...document.images].filter((i) => i.getClientRects().length > 0 && !(i.complete && i.naturalWidth > 0)).length)

describe('the viewer page in a browser', () => {
  let svc: TestService
  let infra: Infra
  let browser: Browser
  let jpeg = ''

  beforeAll(async () => {
    svc = await startService('embedded')
    infra = svc.running.services.infra
    browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
    // A frame as the crawler sends one: a JPEG of a 1280x800 page of text.
    const shot = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await shot.setContent('<h1>A crawled page</h1><p>Some text to read.</p>')
    jpeg = (await shot.screenshot({ type: 'jpeg', quality: 60 })).toString('base64')
    await shot.close()
  }, machineDeadline(120_000))

  afterAll(async () => {
    await browser?.close().catch(() => {})
    await svc?.stop()
  }, 60_000)

  /** Opens a new audit's viewer link in `page` and waits for its socket; returns the audit's id. */
  async function openViewer(page: Page): Promise<string> {
    const auditId = `aud_${randomBytes(8).toString('hex')}`
    const token = await createViewerToken(infra.kv, auditId, 300)
    await page.goto(viewerLink(svc.url, auditId, token))
    await until(
      async () => (await page.textContent('#state')) === 'waiting for the first page',
      machineDeadline(10_000),
      'the socket ready',
      {
        rethrow: true,
      },
    )
    return auditId
  }

  test(
    'a placeholder before the first frame, "crawling" from the first frame on, and the score on the end card',
    async () => {
      const page = await browser.newPage()
      const auditId = await openViewer(page)
      const state = () => page.textContent('#state')

      // Before any frame: the placeholder says what is happening; no image shows, so none shows broken.
      expect(await page.isVisible('#placeholder')).toBe(true)
      expect(await page.textContent('#placeholder-state')).toBe('waiting for the first page')
      expect(await page.isHidden('#screen')).toBe(true)
      expect(await brokenImages(page)).toBe(0)

      // The crawl's last progress still says waiting (its first page is not judged yet) when frames come.
      await publishViewerProgress(infra, auditId, { ...PROGRESS, state: 'waiting' })
      const frame = (seq: number) => frameMessage(jpeg, seq)
      await infra.pubsub.publish(viewerChannels.frames(auditId), frame(1))
      await until(async () => (await page.textContent('#frames')) === '1', machineDeadline(10_000), 'the first frame painted', {
        rethrow: true,
      })
      expect(await state()).toBe('crawling')
      expect(await page.isHidden('#placeholder')).toBe(true)
      expect(await page.evaluate(() => (document.getElementById('screen') as HTMLCanvasElement).width)).toBe(1280)
      expect(await page.getAttribute('#screen', 'data-frame')).toBe('1')
      expect(await brokenImages(page)).toBe(0)

      // An older progress message arriving later does not set the state back.
      await publishViewerProgress(infra, auditId, { ...PROGRESS, pagesDiscovered: 7, state: 'waiting' })
      await until(async () => (await page.textContent('#discovered')) === '7', machineDeadline(10_000), 'the later progress', {
        rethrow: true,
      })
      expect(await state()).toBe('crawling')
      await infra.pubsub.publish(viewerChannels.frames(auditId), frame(2))
      await until(async () => (await page.textContent('#frames')) === '2', machineDeadline(10_000), 'the second frame', { rethrow: true })

      // The audit completes: the end card shows its score and final counts.
      await publishViewerProgress(infra, auditId, {
        ...PROGRESS,
        state: 'crawling',
        pagesScanned: 4,
        pagesDiscovered: 7,
        findings: { critical: 1, high: 2, medium: 0, low: 3 },
      })
      await publishViewerEnd(infra, auditId, 'completed', { score: 87, pagesScanned: 6, pagesFailed: 1, pagesDiscovered: 7 })
      await endViewer(infra.pubsub, infra.kv, auditId)
      await page.waitForSelector('#ended:not([hidden])', { timeout: machineDeadline(10_000) })
      expect(await page.isVisible('#final')).toBe(true)
      expect(await page.textContent('#final-score')).toBe('87')
      expect(await page.textContent('#final-pages')).toBe('7')
      expect(await page.textContent('#final-findings')).toBe('1 critical · 2 high · 0 medium · 3 low')
      await page.close()
    },
    machineDeadline(60_000),
  )

  test(
    'a frame that is not a picture is skipped, and a browser without a bitmap canvas draws frames in a 2d one',
    async () => {
      const context = await browser.newContext()
      await context.addInitScript(() => {
        const native = HTMLCanvasElement.prototype.getContext
        HTMLCanvasElement.prototype.getContext = function (this: HTMLCanvasElement, kind: string, ...rest: unknown[]) {
          return kind === 'bitmaprenderer' ? null : native.call(this, kind as '2d', ...(rest as []))
        } as typeof native
      })
      const page = await context.newPage()
      const auditId = await openViewer(page)
      await infra.pubsub.publish(viewerChannels.frames(auditId), frameMessage(Buffer.from('not a JPEG').toString('base64'), 1))
      await infra.pubsub.publish(viewerChannels.frames(auditId), frameMessage('%%% not base64 %%%', 2))
      await infra.pubsub.publish(viewerChannels.frames(auditId), frameMessage(jpeg, 3))
      await until(async () => (await page.textContent('#frames')) === '1', machineDeadline(10_000), 'the picture painted', {
        rethrow: true,
      })
      // The crawled page's white background, drawn into the 2d canvas at the frame's size.
      const seen = await page.evaluate(() => {
        const c = document.getElementById('screen') as HTMLCanvasElement
        return { width: c.width, height: c.height, pixel: [...c.getContext('2d')!.getImageData(1_200, 700, 1, 1).data] }
      })
      expect(seen).toMatchObject({ width: 1280, height: 800 })
      expect(Math.min(...seen.pixel)).toBeGreaterThan(240)
      expect(await page.isHidden('#placeholder')).toBe(true)
      await context.close()
    },
    machineDeadline(60_000),
  )

  test(
    'an audit that fails ends without a score',
    async () => {
      const page = await browser.newPage()
      const auditId = await openViewer(page)
      await publishViewerProgress(infra, auditId, { ...PROGRESS, state: 'crawling' })
      await publishViewerEnd(infra, auditId, 'failed')
      await endViewer(infra.pubsub, infra.kv, auditId)
      await page.waitForSelector('#ended:not([hidden])', { timeout: machineDeadline(10_000) })
      expect(await page.isHidden('#final')).toBe(true)
      await page.close()
    },
    machineDeadline(60_000),
  )
})
