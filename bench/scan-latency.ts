// Wall time of scan_app, as a caller sees it through the official MCP SDK client, on a local fixture
// page with a warm browser; reference: a bare Playwright page load of the same page in the same
// Chromium with the same flags, measured in the same run. Target: median scan under 2 s.
//
// A scan is more than a page load by design: the api records the scan and queues a job, a worker
// loads the page through the egress proxy, waits for network quiet (up to 1 s), fetches the page over
// plain HTTP and probes a few paths, runs the checks, stores the report and tells the api, which
// reads it back. The ratio scan/page-load says how much that costs on top of the load itself; the
// worker's own timings from the report split it up.
//
// Scans and reference loads alternate (scan, load, scan, load, ...) so drift falls on both. The
// service runs in this process (api and crawler workers together, as the test harness boots it);
// Chromium runs in its own processes either way.
//
//   bun bench/scan-latency.ts            15 scans per mode after 2 warm-up scans, embedded and production
//   bun bench/scan-latency.ts --quick    5 scans after 1 warm-up
//   options: --scans=N --warmup=N --mode=embedded|production|both --site=spa|hardened|weak|api
//   (api: the careless API SPA of test/fixtures/sites/lib/api-spa.ts, whose page calls its API while it loads)
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../crawler/browser.ts'
import { hardenedSite, spaSite, testCertificate, weakSite, type Site } from '../test/fixtures/sites.ts'
import { startApiSpa } from '../test/fixtures/sites/lib/api-spa.ts'
import { connectClient, payload } from '../test/harness/client.ts'
import type { Mode } from '../test/harness/service.ts'
import { startBenchService } from './lib/service.ts'
import { flag, fmtMs, fmtRatio, intFlag, settle, summarize, table, withTimeout, writeResult, type Summary } from './lib/stats.ts'

export const TARGET_MEDIAN_MS = 2_000
const SCAN_TIMEOUT_MS = 60_000

type SiteName = 'spa' | 'hardened' | 'weak' | 'api'

export interface ModeResult {
  mode: Mode
  scan: Summary
  pageLoad: Summary
  pageLoadNetworkIdle: Summary
  /** Medians of the worker's own timings from the reports (ms). */
  worker: Record<string, number>
  /** Median of (wall time - worker total): api, queue, database and MCP round trips. */
  outsideWorkerMs: number
  /** The slowest scan, split the same way, to tell a slow page from a slow hand-off. */
  slowest: { wallMs: number; workerMs: number; browserMs: number }
  ratio: number
}

export interface LatencyResult {
  bench: 'scan-latency'
  site: SiteName
  scans: number
  warmup: number
  modes: ModeResult[]
  target: number
}

async function startSite(name: SiteName, tls: ReturnType<typeof testCertificate> | null): Promise<Site> {
  if (name === 'hardened') return hardenedSite(tls!)
  if (name === 'weak') return weakSite()
  if (name === 'api') return startApiSpa(true)
  return spaSite()
}

/** One bare page load in a fresh context, as the reference: time to `load`, then to network quiet. */
async function bareLoad(browser: Browser, url: string): Promise<{ load: number; idle: number }> {
  const t0 = performance.now()
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' })
  try {
    const page = await context.newPage()
    const res = await page.goto(url, { waitUntil: 'load', timeout: 15_000 })
    if (!res || res.status() >= 400) throw new Error(`reference load of ${url}: HTTP ${res?.status()}`)
    const load = performance.now() - t0
    await page.waitForLoadState('networkidle', { timeout: 1_000 }).catch(() => {})
    return { load, idle: performance.now() - t0 }
  } finally {
    await context.close().catch(() => {})
  }
}

async function scanOnce(client: Client, url: string): Promise<{ ms: number; timings: Record<string, number> }> {
  const t0 = performance.now()
  const r = await client.callTool({ name: 'scan_app', arguments: { url } }, undefined, { timeout: SCAN_TIMEOUT_MS })
  const ms = performance.now() - t0
  const body = payload(r)
  if (r.isError) throw new Error(`scan_app failed: ${JSON.stringify(body.error ?? body)}`)
  return { ms, timings: (body.timings ?? {}) as Record<string, number> }
}

const medianOf = (xs: number[]) => summarize(xs).median

async function benchMode(
  mode: Mode,
  site: Site,
  reference: Browser,
  opts: { scans: number; warmup: number; spki: string | null },
  log: (l: string) => void,
): Promise<ModeResult> {
  const svc = await startBenchService(mode, opts.spki ? { TRUSTED_CERT_SPKI: opts.spki } : {})
  let client: Client | null = null
  try {
    client = await connectClient(svc.mcpUrl, await svc.key('free'))
    for (let i = 0; i < opts.warmup; i++) {
      await withTimeout(scanOnce(client, site.url), SCAN_TIMEOUT_MS + 5_000, 'warm-up scan')
      await bareLoad(reference, site.url)
    }
    const scans: number[] = []
    const loads: number[] = []
    const idles: number[] = []
    const worker: Record<string, number[]> = {}
    const outside: number[] = []
    let slowest = { wallMs: -1, workerMs: NaN, browserMs: NaN }
    for (let i = 0; i < opts.scans; i++) {
      // A quiet machine before each timed run, on both sides (bench/lib/stats.ts settle).
      await settle()
      const s = await withTimeout(scanOnce(client, site.url), SCAN_TIMEOUT_MS + 5_000, `scan ${i + 1}`)
      scans.push(s.ms)
      for (const [k, v] of Object.entries(s.timings)) if (typeof v === 'number') (worker[k] ??= []).push(v)
      if (typeof s.timings.total === 'number') outside.push(s.ms - s.timings.total)
      if (s.ms > slowest.wallMs) slowest = { wallMs: s.ms, workerMs: s.timings.total ?? NaN, browserMs: s.timings.browser ?? NaN }
      await settle()
      const b = await bareLoad(reference, site.url)
      loads.push(b.load)
      idles.push(b.idle)
    }
    const scan = summarize(scans)
    const pageLoad = summarize(loads)
    const result: ModeResult = {
      mode,
      scan,
      pageLoad,
      pageLoadNetworkIdle: summarize(idles),
      worker: Object.fromEntries(Object.entries(worker).map(([k, v]) => [k, medianOf(v)])),
      outsideWorkerMs: outside.length ? medianOf(outside) : NaN,
      slowest,
      ratio: scan.median / pageLoad.median,
    }
    log(`  ${mode}: scan median ${fmtMs(scan.median)}, bare load median ${fmtMs(pageLoad.median)}`)
    return result
  } finally {
    await client?.close().catch(() => {})
    await svc.stop()
  }
}

export async function benchScanLatency(
  opts: { quick?: boolean; scans?: number; warmup?: number; modes?: Mode[]; site?: SiteName; log?: (line: string) => void } = {},
): Promise<LatencyResult> {
  const log = opts.log ?? ((l: string) => console.log(l))
  const scans = opts.scans ?? (opts.quick ? 5 : 15)
  const warmup = opts.warmup ?? (opts.quick ? 1 : 2)
  const modes = opts.modes ?? ['embedded', 'production']
  const siteName = opts.site ?? 'spa'
  const tls = siteName === 'hardened' ? testCertificate() : null
  const executablePath = chromiumPath('')

  const site = await startSite(siteName, tls)
  const reference = await chromium.launch({
    executablePath,
    args: [...CHROMIUM_ARGS, ...(tls ? [`--ignore-certificate-errors-spki-list=${tls.spki}`] : [])],
    timeout: 30_000,
  })
  try {
    log(
      `scan_app latency: ${siteName} fixture (${site.url}), warm browser, official SDK client, ${warmup} warm-up + ${scans} scans per mode`,
    )
    log(`load average (1 min) at start: ${loadavg()[0]!.toFixed(2)}`)
    log(
      `reference: bare Playwright load of the same page, fresh context each time, ${executablePath ?? "Playwright's Chromium"} with CHROMIUM_ARGS`,
    )
    const results: ModeResult[] = []
    for (const mode of modes) results.push(await benchMode(mode, site, reference, { scans, warmup, spki: tls?.spki ?? null }, log))

    log('')
    const rows = [
      ['mode', 'n', 'min', 'median', 'p90', 'max', 'bare load median', 'ratio scan/load', `median < ${TARGET_MEDIAN_MS / 1000} s`],
    ]
    for (const r of results) {
      rows.push([
        r.mode,
        String(r.scan.n),
        fmtMs(r.scan.min),
        fmtMs(r.scan.median),
        fmtMs(r.scan.p90),
        fmtMs(r.scan.max),
        fmtMs(r.pageLoad.median),
        fmtRatio(r.ratio),
        r.scan.median < TARGET_MEDIAN_MS ? 'met' : 'NOT met',
      ])
    }
    log(table(rows))
    log('')
    const keys = ['browser', 'httpChain', 'probes', 'checks', 'gather', 'total']
    const wrows = [['where the time goes (medians)', ...keys, 'outside worker', 'bare load to network quiet']]
    for (const r of results) {
      wrows.push([r.mode, ...keys.map((k) => fmtMs(r.worker[k] ?? NaN)), fmtMs(r.outsideWorkerMs), fmtMs(r.pageLoadNetworkIdle.median)])
    }
    log(table(wrows))
    log('(worker timings come from the reports; "outside worker" = wall time - worker total: MCP, api, queue, database)')
    for (const r of results) {
      const w = r.slowest
      log(
        `slowest ${r.mode} scan: ${fmtMs(w.wallMs)} = worker ${fmtMs(w.workerMs)} (browser ${fmtMs(w.browserMs)}) + outside ${fmtMs(w.wallMs - w.workerMs)}`,
      )
    }
    return { bench: 'scan-latency', site: siteName, scans, warmup, modes: results, target: TARGET_MEDIAN_MS }
  } finally {
    await reference.close().catch(() => {})
    await site.stop()
  }
}

if (import.meta.main) {
  const mode = flag('mode')
  const siteFlag = flag('site')
  if (siteFlag !== undefined && !['spa', 'hardened', 'weak', 'api'].includes(String(siteFlag)))
    throw new Error('--site must be spa, hardened, weak or api')
  if (mode !== undefined && mode !== 'embedded' && mode !== 'production' && mode !== 'both')
    throw new Error('--mode must be embedded, production or both')
  const result = await benchScanLatency({
    quick: flag('quick') === true,
    scans: flag('scans') ? intFlag('scans', 15, 1, 500) : undefined,
    warmup: flag('warmup') ? intFlag('warmup', 2, 0, 50) : undefined,
    modes: mode === 'embedded' || mode === 'production' ? [mode] : undefined,
    site: siteFlag as SiteName | undefined,
  })
  await writeResult(result)
  process.exit(0)
}
