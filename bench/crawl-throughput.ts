// Whole-site crawl throughput and memory: our audit against Crawlee's PlaywrightCrawler on the same local
// fixture site (200 pages by default), in the same run, with the same Chromium and flags, at concurrency
// 1, 2 and 4. Target: at least 2 times Crawlee's pages per minute at equal concurrency, pages per minute
// that grow with concurrency, and a peak resident set at or below Crawlee's, with memory flat over the run.
// It reports; it never fails on a slow run.
//
// Each crawl runs in a child process of its own (ours: bun bench/crawl-ours.ts; Crawlee: node
// compare-lib/crawlee-runner.mjs), started and set up before the clock starts, so its memory can be read
// alone: every 200 ms this process sums the resident set of the child and all its descendants
// (Chromium's browser, renderer, GPU and utility processes) from /proc, and at each new peak its proportional
// set and both sets by kind of process (lib/proc-memory.ts). Our peak is the tree's from the audit's first
// page until it was judged; what came before (the scan pages the service keeps made ahead, closing) and after
// (those pages made again) is printed apart. Per concurrency
// the order is ours, Crawlee, ours, Crawlee (--rounds pairs), so drift falls on both.
//
//   bun bench/crawl-throughput.ts                      200 pages, concurrency 1,2,4, 2 rounds
//   bun bench/crawl-throughput.ts --quick              60 pages, concurrency 1,2,4, 1 round
//   options: --pages=N --concurrency=1,2,4 --rounds=N --engine (crawlSite instead of the audit tools)
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { CHROMIUM_ARGS, chromiumPath } from '../crawler/browser.ts'
import { startCrawlSite } from './lib/crawl-site.ts'
import { formatByKind, treeMemory, treeRssBytes, type TreeMemory } from './lib/proc-memory.ts'
import { flag, fmtRatio, intFlag, table, withTimeout, writeResult } from './lib/stats.ts'

export const TARGET_RATIO = 2
const SAMPLE_MS = 200
const RUN_LIMIT_MS = 15 * 60_000

const quick = flag('quick') === true
const pages = intFlag('pages', quick ? 60 : 200, 10, 500)
const rounds = intFlag('rounds', quick ? 1 : 2, 1, 10)
const concurrencies = String(flag('concurrency') === undefined ? '1,2,4' : flag('concurrency'))
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n >= 1 && n <= 16)
// The audit tools if they are there, else the crawl engine alone; --engine forces the engine.
const auditToolsPresent =
  existsSync(join(import.meta.dir, '../api/mcp/tools/audit_app.ts')) && existsSync(join(import.meta.dir, '../crawler/audit-worker.ts'))
const engine = flag('engine') === true || !auditToolsPresent

type Side = 'ours' | 'crawlee'

export interface RunResult {
  side: Side
  concurrency: number
  pages: number
  failed: number
  seconds: number
  pagesPerMinute: number
  peakRssMb: number
  /** At the peak of the resident sum: the proportional set (shared pages counted once) and both by kind. */
  atPeak: TreeMemory | null
  /** Ours: the most the tree held after the audit was judged and before the bench saw it (scan pages made again). */
  afterEndMb?: number
  /** Ours: the most the tree held before the audit's first page started (the scan pages made ahead, closing). */
  beforeStartMb?: number
  /** Tree RSS when the crawl started, and at 25, 50, 75 and 100% of its duration. */
  rssAtMb: [number, number, number, number, number]
  samples: number
}

export interface CrawlThroughputResult {
  bench: 'crawl-throughput'
  pages: number
  oursMode: string
  crawleeVersion: string
  runs: RunResult[]
  /** Per concurrency: median pages/min of each side and the ratio ours/crawlee. */
  byConcurrency: Array<{
    concurrency: number
    ours: number
    crawlee: number
    ratio: number
    oursPeakMb: number
    crawleePeakMb: number
    /** The proportional set at each side's peak (the most over its runs). */
    oursPssMb: number
    crawleePssMb: number
  }>
  target: number
}

// ---- one crawl in a child process ----

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  const reader = stream.getReader()
  let buf = ''
  for (let i = 0; i < 10_000_000; i++) {
    const { done, value } = await reader.read()
    if (done) return
    buf += decoder.decode(value, { stream: true })
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      yield buf.slice(0, nl)
      buf = buf.slice(nl + 1)
    }
  }
}

/** The detailed reading with the highest resident sum, or null. */
const highest = (ps: Array<{ rss: number; memory: TreeMemory }>): TreeMemory | null =>
  ps.reduce<{ rss: number; memory: TreeMemory } | null>((best, p) => (best && best.rss >= p.rss ? best : p), null)?.memory ?? null

async function runOne(side: Side, siteUrl: string, concurrency: number): Promise<{ result: RunResult; info: Record<string, unknown> }> {
  const storage = mkdtempSync(join(tmpdir(), 'appaudit-crawlee-'))
  const cmd =
    side === 'ours'
      ? [
          process.execPath,
          join(import.meta.dir, 'crawl-ours.ts'),
          `--site=${siteUrl}`,
          `--concurrency=${concurrency}`,
          `--pages=${pages}`,
          ...(engine ? ['--engine'] : []),
        ]
      : [
          'node',
          join(import.meta.dir, 'compare-lib/crawlee-runner.mjs'),
          JSON.stringify({
            url: siteUrl,
            concurrency,
            maxPages: pages,
            executablePath: chromiumPath(''),
            args: CHROMIUM_ARGS,
          }),
        ]
  const proc: Subprocess<'pipe', 'pipe', 'inherit'> = Bun.spawn(cmd, {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, CRAWLEE_STORAGE_DIR: storage, CRAWLEE_PURGE_ON_START: 'true' },
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), RUN_LIMIT_MS)
  // `at`: epoch ms, to compare with when our audit was judged (crawl-ours.ts).
  const samples: Array<{ t: number; at: number; rss: number }> = []
  // At each new peak of the resident sum, the tree is read in detail (a few ms): what the peak is made of.
  const peaks: Array<{ at: number; rss: number; memory: TreeMemory }> = []
  let maxRss = -1
  const sample = () => {
    const rss = treeRssBytes(proc.pid)
    const at = Date.now()
    if (rss > maxRss) {
      maxRss = rss
      peaks.push({ at, rss, memory: treeMemory(proc.pid) })
    }
    samples.push({ t: t0 ? performance.now() - t0 : 0, at, rss })
  }
  let sampler: ReturnType<typeof setInterval> | null = null
  let t0 = 0
  let info: Record<string, unknown> = {}
  try {
    let done: { pages: number; failed: number; ms: number; endedAt?: number; firstPageAt?: number } | null = null
    for await (const line of lines(proc.stdout)) {
      if (!line.startsWith('@@bench ')) continue
      const msg = JSON.parse(line.slice(8))
      if (msg.error) throw new Error(`${side}: ${msg.error}`)
      if (msg.ready) {
        info = msg
        sample()
        t0 = performance.now()
        sampler = setInterval(sample, SAMPLE_MS)
        proc.stdin.write('go\n')
        proc.stdin.flush()
      } else if (msg.crawling) {
        // The crawl's first page is in: what the tree held before may have been the service's scan pages
        // made ahead, closing. From here on, each new peak of the crawl is read in detail.
        maxRss = -1
      } else if (msg.done) {
        sample()
        if (sampler) clearInterval(sampler)
        done = msg.done
        // Read on to the end, so the child never blocks on a full pipe while it cleans up.
      }
    }
    if (!done) throw new Error(`${side} at concurrency ${concurrency} ended without a result (exit ${await proc.exited})`)
    // Our audit's peak is the tree's while it crawled, from its first page until it was judged. Before its
    // first page the service was closing the scan pages it keeps made ahead (three renderers at rest, or on
    // their way when the audit came); once judged, it makes them again, which the poll that sees the end can
    // catch. Both are the service at rest, reported apart.
    const endedAt = done.endedAt ?? Number.POSITIVE_INFINITY
    const from = done.firstPageAt ?? Number.NEGATIVE_INFINITY
    const inCrawl = (at: number) => at >= from && at <= endedAt
    const crawled = samples.filter((s) => inCrawl(s.at))
    const during = crawled.length ? crawled : samples.filter((s, i) => i === 0 || s.at <= endedAt)
    const before = samples.filter((s) => s.at < from)
    const after = samples.filter((s) => s.at > endedAt)
    const end = samples[samples.length - 1]!.t
    const at = (f: number) => {
      // The last sample taken at or before that point of the run.
      let best = samples[0]!
      for (const s of samples) if (s.t <= f * end) best = s
      return best.rss / 2 ** 20
    }
    const seconds = done.ms / 1000
    return {
      info,
      result: {
        side,
        concurrency,
        pages: done.pages,
        failed: done.failed,
        seconds,
        pagesPerMinute: (done.pages * 60) / seconds,
        peakRssMb: Math.max(...during.map((s) => s.rss)) / 2 ** 20,
        // The detailed reading at the highest sum of the window (the reset at "crawling" records lower ones too).
        atPeak: highest(peaks.filter((p) => inCrawl(p.at))) ?? highest(peaks.filter((p) => p.at <= endedAt)),
        ...(after.length ? { afterEndMb: Math.max(...after.map((s) => s.rss)) / 2 ** 20 } : {}),
        ...(before.length && crawled.length ? { beforeStartMb: Math.max(...before.map((s) => s.rss)) / 2 ** 20 } : {}),
        rssAtMb: [at(0), at(0.25), at(0.5), at(0.75), at(1)],
        samples: samples.length,
      },
    }
  } finally {
    if (sampler) clearInterval(sampler)
    clearTimeout(timer)
    proc.stdin.end()
    await withTimeout(proc.exited, 30_000, `${side} child exiting`).catch(() => proc.kill('SIGKILL'))
    rmSync(storage, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

// ---- the run ----

const site = startCrawlSite(pages)
const runs: RunResult[] = []
let oursMode = ''
let crawleeVersion = ''
let crawleeNode = ''
try {
  console.log(
    `crawl-throughput: ${pages}-page fixture site at ${site.url}, concurrency ${concurrencies.join(', ')}, ${rounds} round(s) of ours then Crawlee`,
  )
  console.log(
    `ours: ${engine ? `crawl engine crawlSite directly${auditToolsPresent ? ' (--engine)' : ' (the audit tools are not in this tree)'}` : 'the real audit (audit_app, get_audit polled every 250 ms) through the service in production mode'}`,
  )
  for (const c of concurrencies) {
    for (let r = 0; r < rounds; r++) {
      for (const side of ['ours', 'crawlee'] as const) {
        const { result, info } = await runOne(side, site.url, c)
        if (side === 'ours') oursMode = String(info.mode ?? '')
        else {
          crawleeVersion = String(info.crawleeVersion ?? '')
          crawleeNode = String(info.node ?? '')
        }
        runs.push(result)
        console.log(
          `  c=${c} ${side.padEnd(7)} ${result.pages} pages (${result.failed} failed) in ${result.seconds.toFixed(1)} s: ` +
            `${result.pagesPerMinute.toFixed(0)} pages/min, peak ${result.peakRssMb.toFixed(0)} MB` +
            (result.atPeak ? ` (PSS ${result.atPeak.pssMb.toFixed(0)} MB; ${formatByKind(result.atPeak.byKind)})` : '') +
            (result.beforeStartMb !== undefined ? `; before its first page ${result.beforeStartMb.toFixed(0)} MB` : '') +
            (result.afterEndMb !== undefined ? `; after it was judged ${result.afterEndMb.toFixed(0)} MB` : ''),
        )
      }
    }
  }

  const mb = (n: number) => n.toFixed(0)
  const rows = [['concurrency', 'side', 'pages', 'seconds', 'pages/min', 'peak RSS MB', 'PSS MB then', 'RSS MB at 0/25/50/75/100%']]
  for (const r of runs) {
    rows.push([
      String(r.concurrency),
      r.side,
      String(r.pages),
      r.seconds.toFixed(1),
      r.pagesPerMinute.toFixed(0),
      mb(r.peakRssMb),
      r.atPeak ? mb(r.atPeak.pssMb) : '-',
      r.rssAtMb.map(mb).join(' / '),
    ])
  }
  console.log(
    `\nours: ${oursMode}; reference: Crawlee ${crawleeVersion} PlaywrightCrawler under node ${crawleeNode} (same Chromium ${chromiumPath('') ?? "(Playwright's)"}, same flags)\n`,
  )
  console.log(table(rows))

  const byConcurrency = concurrencies.map((c) => {
    const of = (side: Side) => runs.filter((r) => r.concurrency === c && r.side === side)
    const ours = median(of('ours').map((r) => r.pagesPerMinute))
    const crawlee = median(of('crawlee').map((r) => r.pagesPerMinute))
    return {
      concurrency: c,
      ours,
      crawlee,
      ratio: ours / crawlee,
      oursPeakMb: Math.max(...of('ours').map((r) => r.peakRssMb)),
      crawleePeakMb: Math.max(...of('crawlee').map((r) => r.peakRssMb)),
      oursPssMb: Math.max(...of('ours').map((r) => r.atPeak?.pssMb ?? 0)),
      crawleePssMb: Math.max(...of('crawlee').map((r) => r.atPeak?.pssMb ?? 0)),
    }
  })
  const summary = [
    [
      'concurrency',
      'ours pages/min',
      'Crawlee pages/min',
      'ratio ours/Crawlee',
      'target',
      'ours peak MB',
      'Crawlee peak MB',
      'peak <= Crawlee',
      'PSS at peak ours / Crawlee',
    ],
  ]
  for (const b of byConcurrency) {
    summary.push([
      String(b.concurrency),
      b.ours.toFixed(0),
      b.crawlee.toFixed(0),
      fmtRatio(b.ratio),
      b.ratio >= TARGET_RATIO ? `>= ${TARGET_RATIO}: met` : `>= ${TARGET_RATIO}: NOT met`,
      mb(b.oursPeakMb),
      mb(b.crawleePeakMb),
      b.oursPeakMb <= b.crawleePeakMb ? 'yes' : 'no',
      `${mb(b.oursPssMb)} / ${mb(b.crawleePssMb)}`,
    ])
  }
  console.log(
    `\nmedians per concurrency (load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  )
  console.log(table(summary))
  const result: CrawlThroughputResult = {
    bench: 'crawl-throughput',
    pages,
    oursMode,
    crawleeVersion,
    runs,
    byConcurrency,
    target: TARGET_RATIO,
  }
  await writeResult(result)
} finally {
  site.stop()
}
