// What a person watching a crawl sees: a real Chromium opens an audit's browserViewer link as the audit
// starts, and every message its page receives on the viewer's socket is timed. Measured on a 100-page site
// of ordinary static pages (the hard case: a page that paints once gives the screencast almost nothing), and,
// as the reference in the same run, on a site whose pages keep painting (a CSS animation), where Chromium's
// screencast alone is plenty.
//
// Printed per site: frames a second (median and 10th percentile over the 1-second windows of the crawl),
// the time from opening the link to the first frame, frames per page crawled, the share of pages that showed
// at least once, and the replay kept with the audit; the static site's rates as ratios of the reference's.
//
//   bun bench/viewer-fps.ts             100 static pages, 40 animated ones
//   bun bench/viewer-fps.ts --quick     40 and 20
//   bun bench/viewer-fps.ts --busy      with two processes spinning on the CPUs throughout (a busy machine)
//   options: --pages=N --result=FILE
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { chromium } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../crawler/browser.ts'
import { listAuditFrames } from '../shared/db/audit-frames.ts'
import { createAccount, createApiKey } from '../shared/db/accounts.ts'
import { connectClient, textJson } from '../test/harness/client.ts'
import { startCrawlSite } from './lib/crawl-site.ts'
import { startBenchService } from './lib/service.ts'
import { castStats } from '../crawler/viewer/audit-cast.ts'
import { relayStats } from '../api/viewer/service.ts'
import { flag, fmtMs, fmtRatio, intFlag, summarize, table, writeResult } from './lib/stats.ts'

export const TARGETS = { fpsMedian: 10, firstFrameMs: 1_000, framesPerPage: 1 } as const

const quick = flag('quick') === true
const busy = flag('busy') === true
const staticPages = intFlag('pages', quick ? 40 : 100, 5, 500)
const animatedPages = quick ? 20 : 40

export interface ViewerRun {
  site: 'static' | 'animated'
  pages: number
  pagesScanned: number
  crawlMs: number
  frames: number
  fpsMedian: number
  fpsP10: number
  /** From opening the link as the audit starts (before its first page) to the first frame. */
  firstFrameMs: number
  /** From opening the link while the crawl runs (a person joining) to the first frame. */
  joinFirstFrameMs: number
  framesPerPage: number
  pagesShown: number
  replayFrames: number
  replayBytes: number
}

export interface ViewerFpsResult {
  bench: 'viewer-fps'
  busy: boolean
  load: number[]
  runs: ViewerRun[]
  targets: typeof TARGETS
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
  const browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS })
  const cast0 = { ...castStats }
  const relay0 = { ...relayStats }
  const frames: Array<{ at: number; url: string }> = []
  let crawlEndedAt = 0
  try {
    const page = await browser.newPage()
    page.on('websocket', (ws) => {
      ws.on('framereceived', (f) => {
        if (typeof f.payload !== 'string' || !f.payload.startsWith('{"type":"frame"')) return
        const url = /"url":"([^"]*)"/.exec(f.payload)?.[1] ?? ''
        frames.push({ at: performance.now(), url })
      })
    })
    const opened = performance.now()
    // The service listens on a port of its own choosing: the link's path and fragment, at that address.
    const link = new URL(browserViewer)
    await page.goto(`${base}${link.pathname}${link.hash}`)
    // A second person opens the link while the crawl runs: the latest frame should be there at once.
    let joinFirst = NaN
    const join = (async () => {
      for (let i = 0; i < 600 && frames.length === 0; i++) await Bun.sleep(50)
      await Bun.sleep(1_500)
      const second = await browser.newPage()
      let t0 = 0
      second.on('websocket', (ws) =>
        ws.on('framereceived', (f) => {
          if (Number.isNaN(joinFirst) && typeof f.payload === 'string' && f.payload.startsWith('{"type":"frame"'))
            joinFirst = performance.now() - t0
        }),
      )
      t0 = performance.now()
      await second.goto(`${base}${link.pathname}${link.hash}`).catch(() => {})
    })()
    // Until the audit ends (its viewer closes) or a deadline.
    const deadline = Date.now() + 15 * 60_000
    let result: any = null
    for (let i = 0; i < 10_000 && Date.now() < deadline; i++) {
      const r = await client.callTool({ name: 'get_audit', arguments: { auditId } }, undefined, { timeout: 60_000 })
      const a = textJson((r.content as Array<{ text: string }>)[0]!.text)
      if (a.status !== 'queued' && a.status !== 'running') {
        result = a
        crawlEndedAt = performance.now()
        break
      }
      await Bun.sleep(250)
    }
    if (!result) throw new Error(`audit ${auditId} did not finish`)
    await join
    const diff = <T extends Record<string, number>>(a: T, b: T) =>
      Object.fromEntries(Object.entries(a).map(([k, v]) => [k, Math.round(v - b[k]!)]))
    console.log(site, 'crawler side', diff(castStats, cast0), 'relay', diff(relayStats, relay0))
    const first = frames[0]?.at ?? NaN
    // Frames a second over the crawl, in 1-second windows from the first frame to the end.
    const windows: number[] = []
    for (let t = first; t + 1000 <= crawlEndedAt; t += 1000) windows.push(frames.filter((f) => f.at >= t && f.at < t + 1000).length)
    const fps = summarize(windows)
    const sorted = [...windows].sort((a, b) => a - b)
    const crawled = new Set<string>()
    const pagesSection = await client.callTool({ name: 'get_audit', arguments: { auditId, section: 'pages', limit: 100 } }, undefined, {
      timeout: 60_000,
    })
    for (const p of textJson((pagesSection.content as Array<{ text: string }>)[0]!.text).items ?? []) crawled.add(p.url)
    const shownUrls = new Set(frames.map((f) => f.url))
    const replay = await listAuditFrames(sql, auditId)
    const scanned = result.result?.pagesScanned ?? crawled.size
    return {
      site,
      pages,
      pagesScanned: scanned,
      crawlMs: crawlEndedAt - opened,
      frames: frames.length,
      fpsMedian: fps.median,
      fpsP10: sorted[Math.floor(sorted.length * 0.1)] ?? NaN,
      firstFrameMs: first - opened,
      joinFirstFrameMs: joinFirst,
      framesPerPage: frames.length / Math.max(1, scanned),
      pagesShown: [...crawled].filter((u) => shownUrls.has(u)).length / Math.max(1, crawled.size),
      replayFrames: replay.length,
      replayBytes: replay.reduce((n, f) => n + f.bytes, 0),
    }
  } finally {
    await browser.close().catch(() => {})
  }
}

const load0 = loadavg()
console.log(`viewer-fps: load average ${load0.map((l) => l.toFixed(2)).join(' ')}${busy ? ', with two CPU burners' : ''}`)
const svc = await startBenchService('production', { ROLE: 'all', LOG_LEVEL: 'error', AUDIT_CONCURRENCY: '2' })
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

const [st, an] = runs as [ViewerRun, ViewerRun]
console.log(
  table([
    [
      'site',
      'pages',
      'crawl',
      'frames',
      'fps median',
      'fps p10',
      'first frame: at start',
      'joining',
      'frames/page',
      'pages shown',
      'replay',
    ],
    ...runs.map((r) => [
      r.site,
      String(r.pagesScanned),
      fmtMs(r.crawlMs),
      String(r.frames),
      r.fpsMedian.toFixed(1),
      String(r.fpsP10),
      fmtMs(r.firstFrameMs),
      fmtMs(r.joinFirstFrameMs),
      r.framesPerPage.toFixed(1),
      `${Math.round(r.pagesShown * 100)}%`,
      `${r.replayFrames} frames, ${Math.round(r.replayBytes / 1024)} KB`,
    ]),
  ]),
)
console.log(
  `static / animated: fps ${fmtRatio(st.fpsMedian / an.fpsMedian)}, frames per page ${fmtRatio(st.framesPerPage / an.framesPerPage)}\n` +
    `targets (static site): fps median >= ${TARGETS.fpsMedian} (${st.fpsMedian >= TARGETS.fpsMedian ? 'met' : 'MISSED'}), ` +
    `first frame <= ${TARGETS.firstFrameMs} ms for a person joining (${st.joinFirstFrameMs <= TARGETS.firstFrameMs ? 'met' : 'MISSED'}; ` +
    `${fmtMs(st.firstFrameMs)} when opened as the audit starts, before its first page), ` +
    `frames per page >= ${TARGETS.framesPerPage} (${st.framesPerPage >= TARGETS.framesPerPage ? 'met' : 'MISSED'})\n` +
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
)
await writeResult({ bench: 'viewer-fps', busy, load: load0, runs, targets: TARGETS } satisfies ViewerFpsResult)
process.exit(0)
