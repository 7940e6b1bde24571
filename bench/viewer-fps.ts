// What a person watching a crawl sees: a real Chromium opens an audit's browserViewer link as the audit
// starts, and a second one joins while it runs. Measured on a site of ordinary static pages (the hard case:
// a page that paints once gives the screencast almost nothing), and, as the reference in the same run, on a
// site whose pages keep painting (a CSS animation), where Chromium's screencast alone is plenty.
//
// Each frame is timed twice in the viewer's page: when its WebSocket receives it, and when the browser has
// painted it (the page hands a decoded frame to its canvas; the next animation frame after that). When
// "received" is short the crawler or the relay is; when only "painted" is, the viewer's browser is (the
// bench's last lines say which). The crawler's side
// (screencast frames Chromium sent, stills and what they took, frames published) and the relay's (sent,
// dropped for a full socket buffer, requests for lighter frames) are printed beside them.
//
// Printed per site: frames a second received and painted (median and 10th percentile over the 1-second
// windows of the crawl), the time from opening the link to the first frame (as the audit starts; for a
// person joining, from the viewer page's navigation start, with the bench's tab opening beside it), frames
// per page crawled, the share of pages shown, the frames' JPEG width and quality
// against the readable floor (READABLE, crawler/viewer/lane-cast.ts) and their median size, and the replay.
//
//   bun bench/viewer-fps.ts             100 static pages, 40 animated ones
//   bun bench/viewer-fps.ts --quick     40 and 20
//   bun bench/viewer-fps.ts --busy      with two processes spinning on the CPUs throughout (a busy machine)
//   options: --pages=N --result=FILE
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { chromium, type Browser, type Page } from 'playwright-core'
import { relayStats } from '../api/viewer/service.ts'
import { CHROMIUM_ARGS, fullChromiumPath } from '../crawler/browser.ts'
import { castStats } from '../crawler/viewer/capture.ts'
import { READABLE } from '../crawler/viewer/lane-cast.ts'
import { listAuditFrames } from '../shared/db/audit-frames.ts'
import { createAccount, createApiKey } from '../shared/db/accounts.ts'
import { connectClient, textJson } from '../test/harness/client.ts'
import { jpegInfo } from '../shared/lib/jpeg.ts'
import { startCrawlSite } from './lib/crawl-site.ts'
import { settingsFromEnv, startBenchService } from './lib/service.ts'
import { flag, fmtMs, fmtRatio, intFlag, summarize, table, writeResult } from './lib/stats.ts'

export const TARGETS = { fpsMedian: 10, fpsP10: 5, firstFrameMs: 1_000, framesPerPage: 1 } as const

const quick = flag('quick') === true
const busy = flag('busy') === true
const staticPages = intFlag('pages', quick ? 40 : 100, 5, 500)
const animatedPages = quick ? 20 : 40

interface Rate {
  median: number
  p10: number
}

export interface ViewerRun {
  site: 'static' | 'animated'
  pages: number
  pagesScanned: number
  crawlMs: number
  frames: number
  framesPainted: number
  received: Rate
  painted: Rate
  /** From opening the link as the audit starts (before its first page) to the first frame received. */
  firstFrameMs: number
  /**
   * A person joining while the crawl runs: from the viewer page's navigation start (its browser's own clock
   * zero, as a page's load metrics count) to the first frame received, and painted. The target is judged
   * on this; opening the tab before it is the bench's browser, not the service.
   */
  joinFirstFrameMs: number
  joinFirstPaintMs: number
  /** The bench's browser opening a tab for the viewer (over CDP, before the navigation starts). */
  joinTabMs: number
  /** The service's part of joining: from the page opening its socket to the first frame received. */
  joinSocketToFrameMs: number
  framesPerPage: number
  pagesShown: number
  /** Frames meeting the readable floor (width and JPEG quality), of those received. */
  readable: number
  minWidth: number
  minQuality: number
  medianBytes: number
  crawler: typeof castStats
  relay: typeof relayStats
  /** The service's process (crawler, relay and bench in one): its timers' lateness and its share of a CPU. */
  loop: { lagMedianMs: number; lagP90Ms: number; cpuShare: number }
  replayFrames: number
  replayBytes: number
}

export interface ViewerFpsResult {
  bench: 'viewer-fps'
  busy: boolean
  load: number[]
  loadAtEnd: number[]
  runs: ViewerRun[]
  targets: typeof TARGETS
}

/**
 * Runs in the viewer's page before its own script: each frame message is noted as its socket receives it
 * (time, URL, size and the head of its JPEG for the header), and each frame the page shows (its canvas's
 * frame count changes) as painted on the next animation frame. The page's clock is the epoch's, as the
 * bench's Date.now().
 */
const RECORDER = `(() => {
  const rec = { recv: [], paint: [], socketAt: 0, navAt: performance.timeOrigin }
  Object.defineProperty(window, '__viewerBench', { value: rec })
  const Native = window.WebSocket
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args)
      rec.socketAt = rec.socketAt || Date.now()
      this.addEventListener('message', (ev) => {
        if (typeof ev.data !== 'string' || !ev.data.startsWith('{"type":"frame"')) return
        const url = /"url":"([^"]*)"/.exec(ev.data.slice(0, 4000))
        const data = /"data":"([A-Za-z0-9+/=]{0,1600})/.exec(ev.data)
        rec.recv.push({ t: Date.now(), url: url ? url[1] : '', bytes: ev.data.length, head: data ? data[1] : '' })
      })
    }
  }
  new MutationObserver((list) => {
    for (const m of list) if (m.target.id === 'screen') requestAnimationFrame(() => rec.paint.push(Date.now()))
  }).observe(document, { attributes: true, attributeFilter: ['data-frame'], subtree: true })
})()`

interface Recorded {
  recv: Array<{ t: number; url: string; bytes: number; head: string }>
  paint: number[]
  /** When the page opened its socket, and when its navigation started (epoch milliseconds). */
  socketAt: number
  navAt: number
}

const recorded = (page: Page): Promise<Recorded> =>
  page
    .evaluate(() => (window as unknown as { __viewerBench: Recorded }).__viewerBench)
    .catch(() => ({ recv: [], paint: [], socketAt: 0, navAt: 0 }))

/** Frames a second over 1-second windows from `from` to `to`: median and 10th percentile. */
function rate(times: number[], from: number, to: number): Rate {
  const windows: number[] = []
  for (let t = from; t + 1000 <= to; t += 1000) windows.push(times.filter((x) => x >= t && x < t + 1000).length)
  const sorted = [...windows].sort((a, b) => a - b)
  return { median: summarize(windows).median, p10: sorted[Math.floor(sorted.length * 0.1)] ?? NaN }
}

/** A site of n pages that never stop painting, linked in a chain and all from the start page. */
function animatedSite(n: number) {
  const page = (i: number) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Animated ${i}</title><style>
    body{margin:0;font:32px sans-serif}#box{width:160px;height:160px;background:#c33;animation:spin 1s linear infinite}
    @keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}</style></head>
    <body><h1>Animated page ${i}</h1><div id="box"></div>
    <nav>${Array.from({ length: n }, (_, j) => `<a href="/p/${j}">${j}</a>`).join(' ')}</nav></body></html>`
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      const m = /^\/p\/(\d+)$/.exec(path)
      if (path === '/' || m) return new Response(page(m ? Number(m[1]) : 0), { headers: { 'content-type': 'text/html; charset=utf-8' } })
      return new Response('not found', { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/`, stop: () => server.stop(true) }
}

/** Two processes that keep both CPUs busy until stopped. */
function burners() {
  const code = 'const end = Date.now() + 3_600_000; while (Date.now() < end) { Math.sqrt(Math.random()) }'
  const procs = [0, 1].map(() => Bun.spawn([process.execPath, '-e', code], { stdout: 'ignore', stderr: 'ignore' }))
  return () => {
    for (const p of procs) p.kill()
  }
}

/** A person opening the viewer link: a page of its own with the recorder in. */
async function openViewer(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage()
  await page.addInitScript(RECORDER)
  await page.goto(url).catch(() => {})
  return page
}

/** Polls get_audit until the audit has ended; its answer. */
async function auditEnd(client: Client, auditId: string) {
  const deadline = Date.now() + 15 * 60_000
  for (let i = 0; i < 10_000 && Date.now() < deadline; i++) {
    const r = await client.callTool({ name: 'get_audit', arguments: { auditId } }, undefined, { timeout: 60_000 })
    const a = textJson((r.content as Array<{ text: string }>)[0]!.text)
    if (a.status !== 'queued' && a.status !== 'running') return a
    await Bun.sleep(250)
  }
  throw new Error(`audit ${auditId} did not finish`)
}

/** How late this process's timers fire (its event loop runs the crawl, the relay and the bench) and its CPU. */
function loopWatch() {
  const lags: number[] = []
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    lags.push(Math.max(0, now - last - 100))
    last = now
  }, 100)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  return () => {
    clearInterval(timer)
    const cpu = process.cpuUsage(cpu0)
    const s = summarize(lags)
    return {
      lagMedianMs: Math.round(s.median),
      lagP90Ms: Math.round(s.p90),
      cpuShare: (cpu.user + cpu.system) / 1000 / (performance.now() - t0),
    }
  }
}

const counts = <T extends Record<string, number>>(now: T, before: T): T =>
  Object.fromEntries(Object.entries(now).map(([k, v]) => [k, Math.round(v - before[k]!)])) as T

async function measure(
  base: string,
  client: Client,
  sql: Parameters<typeof listAuditFrames>[0],
  siteUrl: string,
  site: ViewerRun['site'],
  pages: number,
): Promise<ViewerRun> {
  const started = await client.callTool(
    { name: 'audit_app', arguments: { url: siteUrl, options: { maxPages: pages, maxDepth: 5 } } },
    undefined,
    { timeout: 60_000 },
  )
  const { auditId, browserViewer } = textJson((started.content as Array<{ text: string }>)[0]!.text)
  // The person's browser watching: the full one.
  const browser = await chromium.launch({ executablePath: fullChromiumPath(), args: CHROMIUM_ARGS })
  const [cast0, relay0] = [{ ...castStats }, { ...relayStats }]
  const loop = loopWatch()
  try {
    // The service listens on a port of its own choosing: the link's path and fragment, at that address.
    const link = new URL(browserViewer)
    const url = `${base}${link.pathname}${link.hash}`
    const opened = Date.now()
    const viewer = await openViewer(browser, url)
    // A second person opens the link while the crawl runs: the latest frame should be there at once.
    const join = (async () => {
      for (let i = 0; i < 600 && (await recorded(viewer)).recv.length === 0; i++) await Bun.sleep(100)
      await Bun.sleep(1_500)
      const t0 = Date.now()
      const second = await openViewer(browser, url)
      for (let i = 0; i < 100 && (await recorded(second)).paint.length === 0; i++) await Bun.sleep(100)
      const r = await recorded(second)
      const nav = r.navAt || NaN
      return {
        recv: (r.recv[0]?.t ?? NaN) - nav,
        paint: (r.paint[0] ?? NaN) - nav,
        socket: (r.recv[0]?.t ?? NaN) - r.socketAt,
        tab: nav - t0,
      }
    })()
    const result = await auditEnd(client, auditId)
    const crawlEndedAt = Date.now()
    const joined = await join
    const seen = await recorded(viewer)
    return runOf(site, pages, { seen, opened, crawlEndedAt, joined, result, auditId }, client, sql, {
      crawler: counts(castStats, cast0),
      relay: counts(relayStats, relay0),
      loop: loop(),
    })
  } finally {
    await browser.close().catch(() => {})
  }
}

/** One site's figures, from what the first viewer recorded. */
async function runOf(
  site: ViewerRun['site'],
  pages: number,
  m: {
    seen: Recorded
    opened: number
    crawlEndedAt: number
    joined: { recv: number; paint: number; socket: number; tab: number }
    result: any
    auditId: string
  },
  client: Client,
  sql: Parameters<typeof listAuditFrames>[0],
  sides: Pick<ViewerRun, 'crawler' | 'relay' | 'loop'>,
): Promise<ViewerRun> {
  const { seen, opened, crawlEndedAt, result, auditId } = m
  const recv = seen.recv.map((f) => f.t)
  const first = recv[0] ?? NaN
  const crawled = new Set<string>()
  const section = await client.callTool({ name: 'get_audit', arguments: { auditId, section: 'pages', limit: 100 } }, undefined, {
    timeout: 60_000,
  })
  for (const p of textJson((section.content as Array<{ text: string }>)[0]!.text).items ?? []) crawled.add(p.url)
  const shownUrls = new Set(seen.recv.map((f) => f.url))
  const infos = seen.recv.map((f) => {
    try {
      return jpegInfo(f.head.slice(0, f.head.length - (f.head.length % 4)))
    } catch {
      return null
    }
  })
  const ok = infos.filter((i) => i && i.width >= READABLE.minWidth && i.quality >= READABLE.minQuality).length
  const replay = await listAuditFrames(sql, auditId)
  const scanned = result.result?.pagesScanned ?? crawled.size
  return {
    site,
    pages,
    pagesScanned: scanned,
    crawlMs: crawlEndedAt - opened,
    frames: recv.length,
    framesPainted: seen.paint.length,
    received: rate(recv, first, crawlEndedAt),
    painted: rate(seen.paint, first, crawlEndedAt),
    firstFrameMs: first - opened,
    joinFirstFrameMs: m.joined.recv,
    joinFirstPaintMs: m.joined.paint,
    joinSocketToFrameMs: m.joined.socket,
    joinTabMs: m.joined.tab,
    framesPerPage: recv.length / Math.max(1, scanned),
    pagesShown: [...crawled].filter((u) => shownUrls.has(u)).length / Math.max(1, crawled.size),
    readable: ok / Math.max(1, infos.length),
    minWidth: Math.min(...infos.map((i) => i?.width ?? 0)),
    minQuality: Math.min(...infos.map((i) => i?.quality ?? 0)),
    medianBytes: summarize(seen.recv.map((f) => f.bytes * 0.75)).median,
    ...sides,
    replayFrames: replay.length,
    replayBytes: replay.reduce((n, f) => n + f.bytes, 0),
  }
}

const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ')
const load0 = loadavg()
console.log(`viewer-fps: load average ${fmtLoad(load0)}${busy ? ', with two CPU burners' : ''}`)
const svc = await startBenchService('production', { ROLE: 'all', LOG_LEVEL: 'error', AUDIT_CONCURRENCY: '2', ...settingsFromEnv() })
const stopBurning = busy ? burners() : () => {}
const runs: ViewerRun[] = []
try {
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, 'scale')
  const client = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
  const statics = startCrawlSite(staticPages)
  const animated = animatedSite(animatedPages)
  try {
    runs.push(await measure(svc.url, client, sql, `${statics.url}/`, 'static', staticPages))
    runs.push(await measure(svc.url, client, sql, animated.url, 'animated', animatedPages))
  } finally {
    statics.stop()
    animated.stop()
    await client.close()
  }
} finally {
  stopBurning()
  await svc.stop()
}
const loadAtEnd = loadavg()
report(runs, loadAtEnd)
await writeResult({ bench: 'viewer-fps', busy, load: load0, loadAtEnd, runs, targets: TARGETS } satisfies ViewerFpsResult)
process.exit(0)

/**
 * Which side keeps a site's frames a second under the target: the crawler (fewer frames sent than the target,
 * with no frame dropped on the way), the relay (frames dropped for a full socket buffer), or the viewer's
 * browser (frames received but fewer painted).
 */
function shortSide(r: ViewerRun): string {
  const target = TARGETS.fpsMedian
  if (r.received.median < target) {
    if (r.relay.dropped > 0) return `the relay (${r.relay.dropped} frames dropped for a full socket buffer)`
    const each = Math.round(r.crawler.stillMs / Math.max(1, r.crawler.stills))
    return `the crawler's side (${r.received.median.toFixed(1)} received; its stills ${each} ms each)`
  }
  if (r.painted.median < target)
    return `the viewer's browser (${r.received.median.toFixed(1)} received, ${r.painted.median.toFixed(1)} painted)`
  return 'neither'
}

function report(all: ViewerRun[], endLoad: number[]) {
  const rateOf = (r: Rate) => `${r.median.toFixed(1)} / ${r.p10}`
  console.log(
    table([
      [
        'site',
        'pages',
        'crawl',
        'frames',
        'fps recv (med/p10)',
        'fps painted',
        'first frame',
        'joining (socket to frame, painted; tab opened in)',
        'frames/page',
        'shown',
        'readable',
        'size',
      ],
      ...all.map((r) => [
        r.site,
        String(r.pagesScanned),
        fmtMs(r.crawlMs),
        `${r.frames} (${r.framesPainted} painted)`,
        rateOf(r.received),
        rateOf(r.painted),
        fmtMs(r.firstFrameMs),
        `${fmtMs(r.joinFirstFrameMs)} (socket ${fmtMs(r.joinSocketToFrameMs)}, painted ${fmtMs(r.joinFirstPaintMs)}; tab ${fmtMs(r.joinTabMs)})`,
        r.framesPerPage.toFixed(1),
        `${Math.round(r.pagesShown * 100)}%`,
        `${Math.round(r.readable * 100)}% (min ${r.minWidth} px, q${r.minQuality})`,
        `${Math.round(r.medianBytes / 1024)} KB`,
      ]),
    ]),
  )
  for (const r of all) {
    const c = r.crawler
    console.log(
      `${r.site}: crawler ${c.screencastFrames} screencast frames, ${c.stills} stills (${Math.round(c.stillMs / Math.max(1, c.stills))} ms each; not shown: ` +
        `${c.stillsMovedOn} after the view moved on, ${c.stillsOutOfOrder} after a later one, ${c.stillsEmpty} empty), ` +
        `${c.published} published (${c.skippedRate} held for the rate cap and replaced by a newer one, ${c.skippedInFlight} with 4 in flight, ${c.skippedNarrow} too narrow); relay ${r.relay.sent} sent to ` +
        `both viewers, ${r.relay.dropped} dropped for a full buffer, ${r.relay.lowRequests} requests for lighter frames; replay ` +
        `${r.replayFrames} frames, ${Math.round(r.replayBytes / 1024)} KB; the service's process: timers late by ${r.loop.lagMedianMs} ms ` +
        `(p90 ${r.loop.lagP90Ms} ms), ${Math.round(r.loop.cpuShare * 100)}% of a CPU`,
    )
  }
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED')
  const verdict = (r: ViewerRun) =>
    `${r.site}: fps median >= ${TARGETS.fpsMedian} ${met(r.received.median >= TARGETS.fpsMedian)}, p10 >= ${TARGETS.fpsP10} ` +
    `${met(r.received.p10 >= TARGETS.fpsP10)}, joining <= ${TARGETS.firstFrameMs} ms ${met(r.joinFirstFrameMs <= TARGETS.firstFrameMs)}, ` +
    `readable ${met(r.readable === 1)}`
  const [st, an] = all as [ViewerRun, ViewerRun]
  console.log(
    `static / animated: fps ${fmtRatio(st.received.median / an.received.median)}, frames per page ${fmtRatio(st.framesPerPage / an.framesPerPage)}\n` +
      `targets (received): ${all.map(verdict).join('; ')}\n` +
      `short of ${TARGETS.fpsMedian} fps: ${all.map((r) => `${r.site}: ${shortSide(r)}`).join('; ')}\n` +
      `load average at the start ${fmtLoad(load0)}, at the end ${fmtLoad(endLoad)}${busy ? ' (with two CPU burners)' : ''}`,
  )
}
