// What one live frame costs, on both sides of the live view: the CPU of the crawler's Chromium per frame (by
// kind of process: the browser, which encodes the JPEG and sends it over the protocol; the GPU process, whose
// display compositor copies the tab's picture; the tab's renderer), for a live still at the readable size
// (1280x800, quality 60: a one-frame screencast, crawler/viewer/capture.ts), the replay's smaller still, and a
// frame of the live screencast on a page that keeps painting; then, in a second Chromium as a person's
// browser, what the viewer's page spends to decode one such frame and show it (api/viewer/client.ts does
// the same: its bytes from base64, createImageBitmap, handed to a bitmaprenderer canvas). From these, the
// share of a core that ten frames a second take on each side. bench/viewer-fps measures the whole; this
// says what a frame costs on this machine.
//
//   bun bench/frame-cost.ts [--frames=N (default 40)] [--rounds=N (default 2)] [--chromium=PATH (the crawler's)]
import { readFileSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { BrowserPool, CHROMIUM_ARGS, chromiumPath, fullChromiumPath } from '../crawler/browser.ts'
import { captureJpeg } from '../crawler/viewer/capture.ts'
import { LIVE_FRAME } from '../crawler/viewer/lane-cast.ts'
import { REPLAY_FRAME } from '../crawler/viewer/replay.ts'
import { scanContextOptions } from '../crawler/gather/page-reader.ts'
import { startEgressProxy } from '../shared/egress/proxy.ts'
import { createLogger } from '../shared/lib/log.ts'
import { descendantsOf, readAll } from './capacity-lib/cpu.ts'
import { startCrawlSite } from './lib/crawl-site.ts'
import { kindFromCmdline } from './lib/proc-memory.ts'
import { flag, intFlag, settle, table } from './lib/stats.ts'

const HZ = 100

/** CPU-seconds so far of each kind of process in `roots`' trees. */
function cpuByKind(roots: number[]): Record<string, number> {
  const all = readAll()
  const out: Record<string, number> = {}
  for (const pid of roots.flatMap((r) => [r, ...descendantsOf(r, all)])) {
    const s = all.get(pid)
    if (!s) continue
    let kind = s.comm
    try {
      kind = kindFromCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
    } catch {}
    out[kind] = (out[kind] ?? 0) + (s.own + s.children) / HZ
  }
  return out
}

/** This process's children now (a browser launched after this reading is the one not in it). */
const children = () => new Set([...readAll().values()].filter((s) => s.ppid === process.pid).map((s) => s.pid))

/** Milliseconds of CPU per call of `fn`, by kind, over `n` calls (one call first, uncounted). */
async function perCall(n: number, roots: number[], fn: (i: number) => Promise<unknown>): Promise<Record<string, number>> {
  await fn(-1)
  await settle()
  const before = cpuByKind(roots)
  for (let i = 0; i < n; i++) await fn(i)
  const after = cpuByKind(roots)
  const out: Record<string, number> = {}
  for (const k of Object.keys(after)) {
    const ms = ((after[k]! - (before[k] ?? 0)) / n) * 1000
    if (ms >= 0.05) out[k] = ms
  }
  return out
}

const ANIMATED = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Animated</title><style>
  body{margin:0;font:24px sans-serif}#box{width:160px;height:160px;background:#c33;animation:spin 1s linear infinite}
  @keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}</style></head>
  <body><h1>A page that keeps painting</h1><div id="box"></div><p>${'Text of the page. '.repeat(200)}</p></body></html>`

/** The live screencast's next frame on `page`'s session (the ack sent at once, as lane-cast.ts does). */
async function screencastFrames(page: Page) {
  const cdp = await page.context().newCDPSession(page)
  let waiting: (() => void) | null = null
  cdp.on('Page.screencastFrame', (f: { sessionId: number }) => {
    cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {})
    const w = waiting
    waiting = null
    w?.()
  })
  const f = LIVE_FRAME.normal
  await cdp.send('Page.startScreencast', {
    format: 'jpeg',
    quality: f.quality,
    maxWidth: f.maxWidth,
    maxHeight: f.maxHeight,
    everyNthFrame: 1,
  })
  return {
    next: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5_000)
        waiting = () => {
          clearTimeout(timer)
          resolve()
        }
      }),
    stop: () => cdp.send('Page.stopScreencast').catch(() => {}),
  }
}

/**
 * `n` stills of `page`, each after its heading was numbered anew and painted, so the viewer's browser never
 * decodes a picture it has shown before.
 */
async function distinctPictures(page: Page, n: number, round: number): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    await page.evaluate(async (text) => {
      document.querySelector('h1')!.textContent = text
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))
    }, `Frame ${round}.${i}`)
    out.push((await captureJpeg(page, 1, 60)) ?? '')
  }
  return out
}

/** The viewer page's work for one frame: its base64 read, decoded off screen, handed to the canvas, painted. */
const SHOW_FRAME = async (data: string) => {
  const bytes = (Uint8Array as unknown as { fromBase64: (s: string) => Uint8Array<ArrayBuffer> }).fromBase64(data)
  const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/jpeg' }))
  const canvas = document.getElementById('screen') as HTMLCanvasElement
  canvas.getContext('bitmaprenderer')!.transferFromImageBitmap(bitmap)
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))
}
const VIEWER_PAGE = '<!doctype html><body style="margin:0"><canvas id="screen" width="1280" height="800"></canvas></body>'

const fmt = (r: Record<string, number>) =>
  Object.entries(r)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ')
const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0)

async function main(): Promise<void> {
  const frames = intFlag('frames', 40, 5, 1_000)
  const rounds = intFlag('rounds', 2, 1, 10)
  const site = startCrawlSite(10)
  const given = flag('chromium')
  const pool = new BrowserPool(chromiumPath(typeof given === 'string' ? given : ''), createLogger('warn'))
  const proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
  let viewer: Browser | null = null
  try {
    const before = children()
    const context = await pool.newContext(scanContextOptions(proxy))
    const crawler = [...children()].filter((p) => !before.has(p))
    const page = await context.newPage()
    await page.goto(site.url, { waitUntil: 'load' })
    const painting = await context.newPage()
    await painting.setContent(ANIMATED)
    const known = children()
    viewer = await chromium.launch({ executablePath: fullChromiumPath(), args: CHROMIUM_ARGS })
    const person = [...children()].filter((p) => !known.has(p))
    const viewerPage = await viewer.newPage({ viewport: { width: 1280, height: 900 } })
    await viewerPage.setContent(VIEWER_PAGE)
    const cast = await captureJpeg(painting, 1, 60)
    const seen: number[] = []
    const results: Array<{ step: string; byKind: Record<string, number> }> = []
    console.log(`frame cost: ${frames} frames a step, ${rounds} rounds; ms of CPU per frame by process`)
    const live = LIVE_FRAME.normal
    for (let r = 0; r < rounds; r++) {
      const step = async (name: string, roots: number[], fn: (i: number) => Promise<unknown>) =>
        results.push({ step: name, byKind: await perCall(frames, roots, fn) })
      await step('live still 1280x800 q60', crawler, () => captureJpeg(page, live.scale, live.quality))
      await step('replay still 480x300 q50', crawler, () => captureJpeg(page, REPLAY_FRAME.scale, REPLAY_FRAME.quality))
      await step('a page that paints, 100 ms of it', crawler, () => Bun.sleep(100))
      const screencast = await screencastFrames(painting)
      await step('its screencast, a frame', crawler, () => screencast.next())
      await screencast.stop()
      await viewerPage.setContent(VIEWER_PAGE)
      const pictures = await distinctPictures(page, frames + 1, r)
      seen.push(new Set(pictures).size, pictures.length)
      await step("viewer's page shows a frame", person, (i) => viewerPage.evaluate(SHOW_FRAME, pictures[i + 1]!))
    }
    const rows = results.map(({ step, byKind }) => [step, total(byKind).toFixed(1), ((total(byKind) * 10) / 1000).toFixed(2), fmt(byKind)])
    console.log(table([['step', 'ms a frame', 'cores at 10 fps', 'by process (ms)'], ...rows]))
    const still = (await captureJpeg(page, 1, 60)) ?? ''
    console.log(
      `frames: live ${Math.round(still.length / 1024)} KB of base64 (static page), ${Math.round((cast?.length ?? 0) / 1024)} KB (painting page); ` +
        `for the viewer, different pictures: ${seen.filter((_, i) => i % 2 === 0).join(', ')} of ${seen[1]} a round`,
    )
  } finally {
    await viewer?.close().catch(() => {})
    await pool.close()
    await proxy.stop()
    site.stop()
  }
}

await main()
