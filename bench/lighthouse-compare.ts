// Wall time of one Lighthouse audit against one scan_app scan, side by side in one run, on the same local
// fixture page with the same Chromium binary and the project's flags (crawler/browser.ts CHROMIUM_ARGS).
// Target: scan_app at least 10 times faster (Lighthouse median / scan_app median >= 10).
//
// - Lighthouse, API: its programmatic API under node (bench/compare-lib/lighthouse-runner.mjs), Chromium
//   launched once by chrome-launcher and kept warm, default config (every category it runs by default),
//   one warm-up run, then N runs. The conservative side: nothing of Chromium's start-up is counted.
// - Lighthouse, CLI: `node node_modules/lighthouse/cli/index.js URL --chrome-flags=...`, what a user runs:
//   a node process and a fresh Chromium per run, timed from spawn to exit.
// - scan_app: the real service (api and crawler workers in this process, as the test harness boots it),
//   warm (its browser launched, warm-up scans done), called through the official MCP SDK client.
// Runs are interleaved (Lighthouse, then a share of the scans, and so on), so drift falls on both sides.
//
//   bun bench/lighthouse-compare.ts           Lighthouse API 1+3 runs, CLI 3 runs, scan_app 2+10 scans
//   bun bench/lighthouse-compare.ts --quick   Lighthouse API 1 run (no warm-up, no CLI), scan_app 1+3 scans
//   options: --lighthouse=api|cli|both  --lh-runs=N  --scans=N  --warmup=N  --site=spa|weak|hardened
//            --mode=embedded|production  --result=FILE (JSON)
//            --no-settle (do not wait for a quiet machine before each timed run: scans back to back, each
//            overlapping what the previous one left running)
import { loadavg } from 'node:os'
import { CHROMIUM_ARGS, chromiumPath, fullChromiumPath } from '../crawler/browser.ts'
import { hardenedSite, spaSite, testCertificate, weakSite, type Site } from '../test/fixtures/sites.ts'
import type { Mode } from '../test/harness/service.ts'
import {
  lighthouseVersion,
  runLighthouseCli,
  startLighthouseApi,
  type LighthouseApi,
  type LighthouseRun,
} from './compare-lib/lighthouse.ts'
import { startOurs, type Ours } from './compare-lib/ours.ts'
import { textTable } from './compare-lib/text.ts'
import { flag, fmtMs, fmtRatio, intFlag, settle, summarize, withTimeout, writeResult, type Summary } from './lib/stats.ts'

export const TARGET_RATIO = 10

type SiteName = 'spa' | 'weak' | 'hardened'
type LhMode = 'api' | 'cli'

export interface LighthouseCompareResult {
  bench: 'lighthouse-compare'
  site: SiteName
  url: string
  lighthouseVersion: string
  chromium: string
  chromeFlags: string[]
  mode: Mode
  lighthouse: Partial<Record<LhMode, { runs: Summary; lhTotal: Summary; categories: Record<string, number | null>; ratio: number }>>
  scanApp: Summary
  /** Medians of the worker's timings from the reports, and of the time outside the worker. */
  scanAppSplit: Record<string, number>
  target: number
}

async function startSite(name: SiteName, tls: ReturnType<typeof testCertificate> | null): Promise<Site> {
  if (name === 'hardened') return hardenedSite(tls!)
  if (name === 'weak') return weakSite()
  return spaSite()
}

function chromiumVersion(path: string | undefined): string {
  if (!path) return "Playwright's Chromium"
  const r = Bun.spawnSync([path, '--version'], { stdout: 'pipe', stderr: 'ignore' })
  return `${path} (${r.stdout.toString().trim() || 'version unknown'})`
}

/** Splits `total` scans over `rounds` as evenly as possible. */
function shares(total: number, rounds: number): number[] {
  return Array.from({ length: rounds }, (_, i) => Math.floor(((i + 1) * total) / rounds) - Math.floor((i * total) / rounds))
}

export async function compareWithLighthouse(
  opts: {
    quick?: boolean
    lighthouse?: LhMode[]
    lhRuns?: number
    scans?: number
    warmup?: number
    site?: SiteName
    mode?: Mode
    /** Wait for a quiet machine before each timed run (default true). */
    settle?: boolean
    log?: (l: string) => void
  } = {},
): Promise<LighthouseCompareResult> {
  const log = opts.log ?? ((l: string) => console.log(l))
  const quick = opts.quick ?? false
  const lhModes = opts.lighthouse ?? (quick ? ['api'] : ['api', 'cli'])
  const lhRuns = opts.lhRuns ?? (quick ? 1 : 3)
  const lhWarmup = quick ? 0 : 1
  const scans = opts.scans ?? (quick ? 3 : 10)
  const warmup = opts.warmup ?? (quick ? 1 : 2)
  const siteName = opts.site ?? 'spa'
  const mode = opts.mode ?? 'production'
  const tls = siteName === 'hardened' ? testCertificate() : null
  // Lighthouse in the full browser its users run; scan_app in the Chromium the service picks (the headless shell).
  const chromePath = fullChromiumPath()
  const chromeFlags = [...CHROMIUM_ARGS, ...(tls ? [`--ignore-certificate-errors-spki-list=${tls.spki}`] : [])]

  const site = await startSite(siteName, tls)
  let ours: Ours | null = null
  let api: LighthouseApi | null = null
  try {
    log(`Lighthouse ${lighthouseVersion()} vs scan_app on the ${siteName} fixture (${site.url})`)
    log(
      `Chromium: Lighthouse ${chromiumVersion(chromePath)}, scan_app ${chromiumVersion(chromiumPath(''))}; flags for both: ${chromeFlags.join(' ')}`,
    )
    log(`load average (1 min) at start: ${loadavg()[0]!.toFixed(2)}`)
    ours = await startOurs(mode, tls ? [tls.spki] : [])
    for (let i = 0; i < warmup; i++) await ours.scan(site.url)
    log(
      `scan_app: service in ${mode} mode, warm (${warmup} warm-up scan${warmup === 1 ? '' : 's'}), official MCP SDK client, ${scans} scans`,
    )
    if (lhModes.includes('api')) {
      api = await startLighthouseApi(site.url, chromePath, chromeFlags)
      log(
        `Lighthouse API: node + chrome-launcher, Chromium launched once (${fmtMs(api.launchMs)}), ${lhWarmup} warm-up + ${lhRuns} runs, default categories`,
      )
      for (let i = 0; i < lhWarmup; i++) {
        const w = await api.run()
        log(`  warm-up run: ${fmtMs(w.ms)}`)
      }
    }
    if (lhModes.includes('cli')) log(`Lighthouse CLI: node cli/index.js --chrome-flags=..., a fresh Chromium per run, ${lhRuns} runs`)

    const lh: Record<LhMode, LighthouseRun[]> = { api: [], cli: [] }
    const scanMs: number[] = []
    const timings: Record<string, number[]> = {}
    const perRound = shares(scans, lhRuns)
    // Before each timed run, on both sides, the machine is let go quiet (bench/lib/stats.ts settle): the
    // worker opens its next page after a scan, and Lighthouse's node process winds down after a run.
    const settleFirst = opts.settle ?? true
    const settled: number[] = []
    for (let round = 0; round < lhRuns; round++) {
      for (const m of lhModes) {
        if (settleFirst) settled.push(await settle())
        const r = m === 'api' ? await api!.run() : await runLighthouseCli(site.url, chromePath, chromeFlags)
        if (r.runtimeError) throw new Error(`Lighthouse ${m} run ${round + 1}: runtime error ${r.runtimeError}`)
        lh[m].push(r)
        log(`  Lighthouse ${m} run ${round + 1}: ${fmtMs(r.ms)} (Lighthouse's own total ${fmtMs(r.lhTotalMs ?? NaN)})`)
      }
      const batch: number[] = []
      for (let i = 0; i < perRound[round]!; i++) {
        if (settleFirst) settled.push(await settle())
        const s = await withTimeout(ours.scan(site.url), 70_000, 'scan_app')
        scanMs.push(s.ms)
        batch.push(s.ms)
        for (const [k, v] of Object.entries(s.report.timings ?? {})) if (typeof v === 'number') (timings[k] ??= []).push(v)
        if (typeof s.report.timings?.total === 'number') (timings.outside ??= []).push(s.ms - s.report.timings.total)
      }
      if (batch.length) log(`  scan_app x${batch.length}: ${batch.map((ms) => fmtMs(ms)).join(', ')}`)
    }

    if (settleFirst)
      log(`  waited for a quiet machine before each run: median ${fmtMs(summarize(settled).median)}, max ${fmtMs(Math.max(...settled))}`)
    const scanApp = summarize(scanMs)
    const result: LighthouseCompareResult = {
      bench: 'lighthouse-compare',
      site: siteName,
      url: site.url,
      lighthouseVersion: lighthouseVersion(),
      chromium: chromiumVersion(chromePath),
      chromeFlags,
      mode,
      lighthouse: {},
      scanApp,
      scanAppSplit: Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, summarize(v).median])),
      target: TARGET_RATIO,
    }
    const rows = [
      ['side', 'n', 'min', 'median', 'max', "Lighthouse's own total (median)", 'ratio Lighthouse/scan_app', `>= ${TARGET_RATIO}x`],
    ]
    for (const m of lhModes) {
      const runs = summarize(lh[m].map((r) => r.ms))
      const lhTotal = summarize(lh[m].map((r) => r.lhTotalMs ?? NaN).filter(Number.isFinite))
      const ratio = runs.median / scanApp.median
      result.lighthouse[m] = { runs, lhTotal, categories: lh[m][lh[m].length - 1]?.categories ?? {}, ratio }
      rows.push([
        m === 'api' ? 'Lighthouse, API (warm Chromium)' : 'Lighthouse, CLI (new Chromium per run)',
        String(runs.n),
        fmtMs(runs.min),
        fmtMs(runs.median),
        fmtMs(runs.max),
        fmtMs(lhTotal.median),
        `${fmtRatio(ratio)}x`,
        ratio >= TARGET_RATIO ? 'met' : 'NOT met',
      ])
    }
    rows.push(['scan_app (warm service)', String(scanApp.n), fmtMs(scanApp.min), fmtMs(scanApp.median), fmtMs(scanApp.max), '', '', ''])
    log('')
    log(textTable(rows, [1, 2, 3, 4, 5, 6]))
    const split = ['browser', 'httpChain', 'probes', 'checks', 'total', 'outside'].filter((k) => timings[k]?.length)
    if (split.length) {
      log(
        `scan_app split (medians of the worker's own timings in the reports; "outside" = wall time - worker total: MCP, api, queue, database): ` +
          split.map((k) => `${k} ${fmtMs(summarize(timings[k]!).median)}`).join(', '),
      )
    }
    const phases = ['pageOpen', 'pageLoad', 'networkQuiet', 'pageRead', 'axe'].filter((k) => timings[k]?.length)
    if (phases.length)
      log(`  browser phase, in order (medians): ${phases.map((k) => `${k} ${fmtMs(summarize(timings[k]!).median)}`).join(', ')}`)
    const cats = result.lighthouse.api?.categories ?? result.lighthouse.cli?.categories ?? {}
    log(
      `Lighthouse categories run (its defaults), scores of the last run: ${Object.entries(cats)
        .map(([k, v]) => `${k} ${v ?? 'n/a'}`)
        .join(', ')}`,
    )
    const verdicts = lhModes.map((m) => {
      const r = result.lighthouse[m]!
      return `${r.ratio >= TARGET_RATIO ? 'met' : 'NOT met'} against the ${m === 'api' ? 'API with a warm Chromium' : 'CLI'} (${fmtRatio(r.ratio)}x)`
    })
    log(`Target: scan_app at least ${TARGET_RATIO}x faster than Lighthouse (median / median): ${verdicts.join('; ')}.`)
    if (lhModes.length > 1) {
      log(
        'The CLI is how Lighthouse is usually run (a new Chromium each time); the API with a warm Chromium is like for like with our warm service.',
      )
    }
    return result
  } finally {
    await api?.stop().catch(() => {})
    await ours?.stop().catch(() => {})
    await site.stop()
  }
}

if (import.meta.main) {
  const quick = flag('quick') === true
  const lhFlag = flag('lighthouse')
  if (lhFlag !== undefined && lhFlag !== 'api' && lhFlag !== 'cli' && lhFlag !== 'both')
    throw new Error('--lighthouse must be api, cli or both')
  const siteFlag = flag('site')
  if (siteFlag !== undefined && siteFlag !== 'spa' && siteFlag !== 'weak' && siteFlag !== 'hardened')
    throw new Error('--site must be spa, weak or hardened')
  const mode = flag('mode')
  if (mode !== undefined && mode !== 'embedded' && mode !== 'production') throw new Error('--mode must be embedded or production')
  const result = await compareWithLighthouse({
    quick,
    lighthouse: lhFlag === 'both' ? ['api', 'cli'] : lhFlag === 'api' || lhFlag === 'cli' ? [lhFlag] : undefined,
    lhRuns: flag('lh-runs') ? intFlag('lh-runs', 3, 1, 50) : undefined,
    scans: flag('scans') ? intFlag('scans', 10, 1, 500) : undefined,
    warmup: flag('warmup') ? intFlag('warmup', 2, 0, 50) : undefined,
    site: siteFlag as SiteName | undefined,
    mode: mode as Mode | undefined,
    settle: flag('no-settle') !== true,
  })
  await writeResult(result)
  process.exit(0)
}
