// How many scans a machine does, what each costs in CPU, and how the service behaves below and above its
// rate. The service runs in production mode as deployed: an api process and a crawler process (bench/
// capacity-lib/layout.ts) on PostgreSQL (a throwaway database) and Redis (a key prefix of its own), scanning a
// mix of the fixture sites of test/fixtures/sites/ through the official MCP SDK client, from several accounts.
//
// a. saturation: closed loop, N scans in flight (1, 2, 4): scans completed a minute; the best is the rate;
// b. open loop: arrivals at a fixed rate (25, 50, 80% of that), from the accounts in turn: p50/p95 and the
//    queue depth over time (bounded below saturation);
// c. above saturation (150%): every call answers a report, rate_limited or queued (scanner_unavailable with
//    the scanId), never a timeout: each counted;
// d. CPU-seconds per scan: the machine's (/proc/stat) and per process group (/proc/<pid>/stat: api, crawler,
//    its Chromium, PostgreSQL, Redis, this client), over the saturation run;
// e. Lighthouse's CPU-seconds per run on the same pages: its API with a warm Chromium, and its CLI as a person
//    or a CI job runs it (launching its own Chromium each run); skipped when absent;
// f. back-to-back scans against isolated ones (each after a wait for a quiet machine), with the reports'
//    per-phase timings.
// Then the ratios and how many such machines 1,000 scans an hour take.
//
//   bun bench/scan-capacity.ts            40 s per saturation run, 60 s per rate, 10 + 10 sequenced scans, 6 runs each of
//                                         Lighthouse's API and CLI (one per page)
//   bun bench/scan-capacity.ts --quick    8 s per run, 2 + 2 sequenced scans, 1 Lighthouse run
//   options: --seconds=S (per run) --sites=N --workers=N (WORKER_CONCURRENCY) --lh-runs=N --no-lighthouse
//            --no-rates (skip b and c: the rate, CPU per scan and sequence alone, for a before/after) --result=FILE
//            --lighthouse-in-shell (Lighthouse in the headless shell our scans use, not the full browser its users run)
//            --sequence=N (isolated and back-to-back scans in f; ten move the ratio by a fifth beside other work)
import { availableParallelism, loadavg } from 'node:os'
import { type StartedFixture, startFixtures, stopFixtures } from './compare-lib/fixtures.ts'
import { type CpuTimes, kernelSharePct, machineCpuTimes } from './capacity-lib/cpu.ts'
import { type Layout, startLayout } from './capacity-lib/layout.ts'
import {
  backToBack,
  drain,
  type LighthouseCpu,
  lighthouseCliCpu,
  lighthouseChromium,
  lighthouseCpu,
  type OpenRun,
  openRate,
  pct,
  saturation,
  type SaturationRun,
  type Sequence,
} from './capacity-lib/phases.ts'
import * as rep from './capacity-lib/report.ts'
import { scanCall } from './capacity-lib/drive.ts'
import { chromiumPath } from '../crawler/browser.ts'
import { flag, fmtMs, intFlag, writeResult } from './lib/stats.ts'

/** The mix of pages: fixture sites served over plain HTTP, of different kinds (an SPA calling its API, a CSP, SEO and accessibility faults, third-party scripts). */
export const SITE_MIX = ['careless-api-spa', 'csp-unsafe', 'seo-a11y-poor', 'third-party', 'weak', 'spa-catch-all']

export interface CapacityOptions {
  quick?: boolean
  seconds?: number
  sites?: number
  workers?: number
  lhRuns?: number
  lighthouse?: boolean
  /** false: phases b and c are skipped (a before/after comparison of the rate and the CPU per scan). */
  rates?: boolean
  /** Lighthouse in the headless shell our scans run in, instead of the full browser its users run. */
  lighthouseInShell?: boolean
  /** Scans in each half of phase f (isolated, then back to back); 10 by default, 2 with quick. */
  sequence?: number
  log?: (l: string) => void
}

export interface CapacityResult {
  bench: 'scan-capacity'
  cores: number
  /** Load averages, and the kernel's share of the machine's busy CPU over the bench (machineCpuTimes). */
  load: { start: number; end: number; kernelSharePct: number }
  sites: string[]
  saturation: SaturationRun[]
  saturationPerMinute: number
  open: OpenRun[]
  overload: OpenRun | null
  sequence: {
    isolatedMs: number
    backToBackMs: number
    ratio: number
    isolated: Record<string, number>
    backToBack: Record<string, number>
  }
  cpuPerScan: Record<string, number>
  lighthouse: LighthouseCpu & { cpuPerRun: Record<string, number> }
  lighthouseCli: LighthouseCpu & { cpuPerRun: Record<string, number> }
  ratios: {
    cpuOursVsLighthouse: number
    cpuOursVsLighthouseProcesses: number
    cpuOursVsLighthouseCli: number
    p95OverP50At80: number
    backToBackOverIsolated: number
  }
  machines: rep.Arithmetic
}

async function startSites(n: number, log: (l: string) => void): Promise<StartedFixture[]> {
  const { started, failed } = await startFixtures(SITE_MIX.slice(0, n))
  for (const f of failed) log(`fixture ${f.name} did not start: ${f.error}`)
  const plain = started.filter((s) => s.scanUrl.startsWith('http://'))
  if (!plain.length) throw new Error('no fixture site of the mix started')
  return plain
}

/** b and c: arrivals at 25, 50, 80% and 150% of the saturation rate. */
async function rates(layout: Layout, urls: string[], satPerMinute: number, ms: number, log: (l: string) => void) {
  const open: OpenRun[] = []
  log(`b. open loop: arrivals at a fixed rate for ${ms / 1000} s each, from ${layout.accounts.length} accounts in turn`)
  for (const share of [0.25, 0.5, 0.8]) {
    await drain(layout)
    open.push(await openRate(layout, urls, share, satPerMinute, ms, share === 0.8))
    log(`   ${Math.round(share * 100)}%: ${rep.queueLine(open.at(-1)!)}`)
  }
  log(rep.openTable(open))
  if (open.at(-1)?.slowest.length) log(`   slowest at 80%: ${rep.slowestLine(open.at(-1)!)}`)
  log(`c. above saturation: 150% for ${ms / 1000} s`)
  await drain(layout)
  const overload = await openRate(layout, urls, 1.5, satPerMinute, ms)
  log(rep.openTable([overload]))
  log(`   queue: ${rep.queueLine(overload)}`)
  for (const d of overload.details) log(`   ${d}`)
  log(`   the queue drained ${fmtMs(await drain(layout))} after the last answer`)
  return { open, overload }
}

/** Runs phases a, b, c (unless --no-rates) and f on a started layout. */
async function phases(layout: Layout, urls: string[], o: Required<Omit<CapacityOptions, 'log'>>, log: (l: string) => void) {
  const ms = o.seconds * 1000
  const cores = availableParallelism()
  log(`a. saturation: closed loop, ${o.seconds} s per run`)
  const sat = await saturation(layout, urls, o.quick ? [1, 2] : [1, 2, 4], ms)
  log(rep.saturationTable(sat, cores))
  const best = sat.reduce((a, b) => (b.perMinute > a.perMinute ? b : a))
  log(`   saturation: ${best.perMinute.toFixed(1)} scans/min (${best.inFlight} in flight)`)
  const { open, overload } = o.rates ? await rates(layout, urls, best.perMinute, ms, log) : { open: [], overload: null }
  const n = o.sequence
  log(`f. ${n} isolated scans (each after a wait for a quiet machine), then ${n} back to back`)
  const seq: Sequence = await backToBack(layout, urls, n)
  log(rep.sequenceTable(seq))
  return { sat, best, open, overload, seq, cores }
}

export async function benchScanCapacity(opts: CapacityOptions = {}): Promise<CapacityResult> {
  const log = opts.log ?? ((l: string) => console.log(l))
  const quick = opts.quick ?? false
  const o = {
    quick,
    seconds: opts.seconds ?? (quick ? 8 : 40),
    sites: opts.sites ?? (quick ? 3 : SITE_MIX.length),
    workers: opts.workers ?? 0,
    lhRuns: opts.lhRuns ?? (quick ? 1 : 6),
    lighthouse: opts.lighthouse ?? true,
    rates: opts.rates ?? true,
    lighthouseInShell: opts.lighthouseInShell ?? false,
    sequence: opts.sequence ?? (quick ? 2 : 10),
  }
  const loadStart = loadavg()[0]!
  const cpuStart = machineCpuTimes()
  log(`scan capacity: ${availableParallelism()} CPUs, load average (1 min) ${loadStart.toFixed(2)}`)
  const sites = await startSites(o.sites, log)
  const urls = sites.map((s) => s.scanUrl)
  log(`pages: ${sites.map((s) => s.name).join(', ')}`)
  let layout: Layout | null = null
  try {
    layout = await startLayout({
      accounts: ['launch', 'launch', 'launch', 'launch'],
      env: o.workers ? { WORKER_CONCURRENCY: String(o.workers) } : {},
    })
    log(`Chromium: ours ${chromiumPath('') ?? "Playwright's"}; Lighthouse ${lighthouseChromium(o.lighthouseInShell) ?? "Playwright's"}`)
    log(`service: api pid ${layout.api.lives[0]?.pid}, crawler pid ${layout.crawler.lives[0]?.pid}; warm-up scan per page`)
    for (const u of urls) {
      const w = await scanCall(layout.accounts[0]!.client, u, performance.now())
      if (w.outcome !== 'completed') log(`  warm-up scan of ${u}: ${w.outcome} ${w.detail ?? ''}`)
    }
    const r = await phases(layout, urls, o, log)
    log(`e. Lighthouse on the same pages`)
    const lh: LighthouseCpu = o.lighthouse
      ? await lighthouseCpu(urls, o.lhRuns, log, o.lighthouseInShell)
      : { available: false, reason: '--no-lighthouse', runs: 0, wallMs: [] }
    log(rep.lighthouseLine(lh))
    const cli: LighthouseCpu = o.lighthouse
      ? await lighthouseCliCpu(urls, o.lhRuns, log, o.lighthouseInShell)
      : { available: false, reason: '--no-lighthouse', runs: 0, wallMs: [] }
    log(rep.lighthouseLine(cli, 'Lighthouse CLI'))
    return report(r, { lh, cli }, { sites, loadStart, cpuStart }, log)
  } finally {
    await layout?.stop()
    await stopFixtures(sites)
  }
}

function report(
  r: Awaited<ReturnType<typeof phases>>,
  { lh, cli }: { lh: LighthouseCpu; cli: LighthouseCpu },
  ctx: { sites: StartedFixture[]; loadStart: number; cpuStart: CpuTimes },
  log: (l: string) => void,
): CapacityResult {
  const cpuPerScan = rep.perUnit(r.best.cpu, r.best.completed)
  const lhPerRun = rep.perUnit(lh.cpu, lh.runs)
  const cliPerRun = rep.perUnit(cli.cpu, cli.runs)
  log('d. CPU per scan (the saturation run) and per Lighthouse run; "other": the rest of the machine')
  log(
    rep.cpuTable([
      { name: `ours (${r.best.inFlight} in flight)`, perUnit: cpuPerScan },
      ...(lh.available ? [{ name: 'Lighthouse API', perUnit: lhPerRun }] : []),
      ...(cli.available ? [{ name: 'Lighthouse CLI', perUnit: cliPerRun }] : []),
    ]),
  )
  const wall = (xs: Sequence['isolated']) =>
    pct(
      xs.filter((c) => c.outcome === 'completed').map((c) => c.ms),
      50,
    )
  const at80 = r.open.at(-1)
  // The processes alone: on a machine doing other work too, "machine" takes some of it in.
  const oursProcs = ['api', 'crawler', 'chromium', 'postgres', 'redis'].reduce((a, g) => a + (cpuPerScan[g] ?? NaN), 0)
  const ratios = {
    cpuOursVsLighthouse: cpuPerScan.machine! / (lhPerRun.machine ?? NaN),
    cpuOursVsLighthouseProcesses: oursProcs / (lhPerRun.lighthouse ?? NaN),
    cpuOursVsLighthouseCli: cpuPerScan.machine! / (cliPerRun.machine ?? NaN),
    p95OverP50At80: at80 ? at80.p95 / at80.p50 : NaN,
    backToBackOverIsolated: wall(r.seq.backToBack) / wall(r.seq.isolated),
  }
  log(
    `ratios: CPU per page ours/Lighthouse API: machine ${rep.ratio(ratios.cpuOursVsLighthouse, 1)}, processes ${rep.ratio(ratios.cpuOursVsLighthouseProcesses, 1)} (${oursProcs.toFixed(3)} CPU-s: api, crawler, Chromium, PostgreSQL, Redis; against Lighthouse's node and Chromium); ours/Lighthouse CLI: machine ${rep.ratio(ratios.cpuOursVsLighthouseCli, 1)}; p95/p50 at 80% ${rep.ratio(ratios.p95OverP50At80, 1)}; back-to-back/isolated ${rep.ratio(ratios.backToBackOverIsolated, 1)}`,
  )
  // The machine's figures take in whatever else ran (on a busy machine, more of it during Lighthouse's longer
  // runs): there, the processes' own figures are the ones to compare.
  log(
    `ours less by: the machine ${(1 / ratios.cpuOursVsLighthouse).toFixed(1)}x than Lighthouse's API, ${(1 / ratios.cpuOursVsLighthouseCli).toFixed(1)}x than its CLI; processes ${(1 / ratios.cpuOursVsLighthouseProcesses).toFixed(1)}x than the API's`,
  )
  const machines = rep.machinesFor(r.best.perMinute, cpuPerScan.machine!, r.cores)
  log(`machines like this one (${r.cores} cores) for 1,000 scans an hour, at 80% of capacity:`)
  for (const l of machines.lines) log(`  ${l}`)
  const loadEnd = loadavg()[0]!
  const kernelPct = kernelSharePct(ctx.cpuStart)
  log(
    `load average (1 min) at the end: ${loadEnd.toFixed(2)}; the kernel's share of the machine's busy CPU over the bench: ${kernelPct.toFixed(0)}%`,
  )
  return {
    bench: 'scan-capacity',
    cores: r.cores,
    load: { start: ctx.loadStart, end: loadEnd, kernelSharePct: kernelPct },
    sites: ctx.sites.map((s) => s.name),
    saturation: r.sat,
    saturationPerMinute: r.best.perMinute,
    open: r.open.map((x) => ({ ...x, samples: x.samples })),
    overload: r.overload,
    sequence: {
      isolatedMs: wall(r.seq.isolated),
      backToBackMs: wall(r.seq.backToBack),
      ratio: ratios.backToBackOverIsolated,
      isolated: rep.medianTimings(r.seq.isolated),
      backToBack: rep.medianTimings(r.seq.backToBack),
    },
    cpuPerScan,
    lighthouse: { ...lh, cpuPerRun: lhPerRun },
    lighthouseCli: { ...cli, cpuPerRun: cliPerRun },
    ratios,
    machines,
  }
}

if (import.meta.main) {
  const result = await benchScanCapacity({
    quick: flag('quick') === true,
    seconds: flag('seconds') ? intFlag('seconds', 40, 2, 600) : undefined,
    sites: flag('sites') ? intFlag('sites', SITE_MIX.length, 1, SITE_MIX.length) : undefined,
    workers: flag('workers') ? intFlag('workers', 2, 1, 16) : undefined,
    lhRuns: flag('lh-runs') ? intFlag('lh-runs', 6, 1, 50) : undefined,
    lighthouse: flag('no-lighthouse') !== true,
    rates: flag('no-rates') !== true,
    lighthouseInShell: flag('lighthouse-in-shell') === true,
    sequence: flag('sequence') ? intFlag('sequence', 10, 1, 100) : undefined,
  })
  await writeResult(result)
  process.exit(0)
}
