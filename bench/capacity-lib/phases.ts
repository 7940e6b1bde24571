// The capacity bench's phases, each on the running layout: saturation (closed loop), arrivals at a fixed
// rate (open loop), arrivals above saturation, back-to-back against isolated scans, and Lighthouse's CPU on
// the same pages. Each returns its numbers; bench/scan-capacity.ts prints them.
import { CHROMIUM_ARGS, chromiumPath, fullChromiumPath } from '../../crawler/browser.ts'
import { runLighthouseCli, startLighthouseApi } from '../compare-lib/lighthouse.ts'
import { settle, withTimeout } from '../lib/stats.ts'
import { machineBusySeconds, reapedChildrenSeconds, snapshot, spent, type GroupSpec } from './cpu.ts'
import { closedLoop, openLoop, queueBounded, scanCall, scanRecord, tally, type Outcome, type QueueSample, type ScanCall } from './drive.ts'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type Layout, pidOf } from './layout.ts'
import { errorMessage } from '../../shared/errors.ts'

export type CpuSpent = ReturnType<typeof spent>

/** Nearest-rank percentile (p in 0..100); NaN for no samples. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  if (!s.length) return NaN
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

/**
 * The Chromium Lighthouse runs in: the full browser, as its users run it (chrome-launcher starts the installed
 * Chrome), or with `shell` the headless shell our scans run in (--lighthouse-in-shell), for the same engine on
 * both sides.
 */
export function lighthouseChromium(shell: boolean): string | undefined {
  return shell ? chromiumPath('') : fullChromiumPath()
}

/** The process groups of our side: api, crawler, the crawler's Chromium, PostgreSQL, Redis, this client. */
export function oursSpec(layout: Layout): GroupSpec {
  return {
    roots: [
      { group: 'bench client', pid: process.pid, ownOnly: true },
      { group: 'api', pid: pidOf(layout.api) },
      { group: 'crawler', pid: pidOf(layout.crawler), childGroup: 'chromium' },
    ],
    comms: [
      { group: 'postgres', comm: 'postgres' },
      { group: 'redis', comm: /^redis-server/ },
    ],
  }
}

export interface SaturationRun {
  inFlight: number
  completed: number
  perMinute: number
  outcomes: Record<Outcome, number>
  p50: number
  p95: number
  cpu: CpuSpent
}

export async function saturation(layout: Layout, urls: string[], inFlight: number[], durationMs: number): Promise<SaturationRun[]> {
  const out: SaturationRun[] = []
  const spec = oursSpec(layout)
  for (const n of inFlight) {
    const a = snapshot(spec)
    const { calls, wallMs } = await closedLoop(layout.accounts, urls, { inFlight: n, durationMs, maxCalls: 10_000 })
    const cpu = spent(a, snapshot(spec))
    const ok = calls.filter((c) => c.outcome === 'completed').map((c) => c.ms)
    out.push({
      inFlight: n,
      completed: ok.length,
      perMinute: (ok.length * 60_000) / wallMs,
      outcomes: tally(calls),
      p50: pct(ok, 50),
      p95: pct(ok, 95),
      cpu,
    })
  }
  return out
}

export interface OpenRun {
  share: number
  perMinute: number
  sent: number
  notSent: number
  outcomes: Record<Outcome, number>
  p50: number
  p95: number
  samples: QueueSample[]
  queue: { first: number; last: number; bounded: boolean; max: number }
  cpu: CpuSpent
  /** Error details, the first few. */
  details: string[]
  /** The slowest completed calls, slowest first: where a long tail went (report.ts slowestLine). */
  slowest: SlowCall[]
}

export interface SlowCall {
  ms: number
  /** s since the phase started, when the call was sent. */
  sentS: number
  /** The worker's timings from its report. */
  timings: Record<string, number>
  /** How long the scan waited for a worker (its startedAt less its createdAt), when known. */
  queuedMs: number | null
}

/** The `n` slowest completed calls, slowest first, with the timings their answers carried. */
export function slowestCalls(calls: ScanCall[], n = 3): Array<SlowCall & { scanId?: string }> {
  return calls
    .filter((c) => c.outcome === 'completed')
    .sort((a, b) => b.ms - a.ms)
    .slice(0, n)
    .map((c) => ({ ms: c.ms, sentS: c.sentAt / 1000, timings: c.timings ?? {}, queuedMs: null, ...(c.scanId ? { scanId: c.scanId } : {}) }))
}

/** The slowest calls with each scan's own record (drive.ts scanRecord), asked for once the run is over. */
async function explainSlowest(calls: ScanCall[], owners: Map<string, Client>): Promise<SlowCall[]> {
  const out: SlowCall[] = []
  for (const { scanId, ...c } of slowestCalls(calls)) {
    const owner = scanId ? owners.get(scanId) : undefined
    const record = owner && scanId ? await scanRecord(owner, scanId) : null
    out.push(record ? { ...c, timings: { ...c.timings, ...record.timings }, queuedMs: record.queuedMs } : c)
  }
  return out
}

/**
 * `records`: ask the slowest scans for their own records (explainSlowest) once the run is over. Only where they
 * are printed: after the 150% run, those calls would come before the queue's drain is timed and shorten it.
 */
export async function openRate(
  layout: Layout,
  urls: string[],
  share: number,
  satPerMinute: number,
  durationMs: number,
  records = false,
): Promise<OpenRun> {
  const spec = oursSpec(layout)
  const perMinute = Math.max(1, share * satPerMinute)
  const a = snapshot(spec)
  const r = await openLoop(layout.accounts, urls, { perMinute, durationMs, maxOutstanding: 400, sampleMs: 1_000 }, () => layout.queue())
  const cpu = spent(a, snapshot(spec))
  const ok = r.calls.filter((c) => c.outcome === 'completed').map((c) => c.ms)
  return {
    share,
    perMinute,
    sent: r.calls.length,
    notSent: r.notSent,
    outcomes: tally(r.calls),
    p50: pct(ok, 50),
    p95: pct(ok, 95),
    samples: r.samples,
    queue: { ...queueBounded(r.samples, durationMs / 1000), max: Math.max(0, ...r.samples.map((s) => s.queued)) },
    cpu,
    details: [...new Set(r.calls.filter((c) => c.detail && c.outcome !== 'completed').map((c) => `${c.outcome}: ${c.detail}`))].slice(0, 5),
    slowest: records ? await explainSlowest(r.calls, r.owners) : slowestCalls(r.calls).map(({ scanId: _, ...c }) => c),
  }
}

/** Waits (at most maxMs) until no scan is queued or running: what a phase left behind does not fall on the next. */
export async function drain(layout: Layout, maxMs = 120_000): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < 10_000 && performance.now() - t0 < maxMs; i++) {
    const q = await withTimeout(layout.queue(), 5_000, 'queue depth').catch(() => null)
    if (q && q.queued === 0 && q.running === 0) break
    await Bun.sleep(500)
  }
  return performance.now() - t0
}

export interface Sequence {
  isolated: ScanCall[]
  backToBack: ScanCall[]
}

/** `n` scans each after a wait for a quiet machine, then `n` one right after another, from one account. */
export async function backToBack(layout: Layout, urls: string[], n: number): Promise<Sequence> {
  const client = layout.accounts[0]!.client
  const isolated: ScanCall[] = []
  const backToBack: ScanCall[] = []
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    await settle()
    isolated.push(await scanCall(client, urls[i % urls.length]!, t0, true))
  }
  await settle()
  for (let i = 0; i < n; i++) backToBack.push(await scanCall(client, urls[i % urls.length]!, t0, true))
  return { isolated, backToBack }
}

export interface LighthouseCpu {
  available: boolean
  reason?: string
  runs: number
  wallMs: number[]
  cpu?: CpuSpent
}

/**
 * Lighthouse's API with a warm Chromium (as bench/lighthouse-compare.ts runs it), on each page in turn, after
 * one warm-up run; CPU of the machine and of the runner's tree (node and its Chromium) over the timed runs.
 */
export async function lighthouseCpu(urls: string[], runs: number, log: (l: string) => void, shell = false): Promise<LighthouseCpu> {
  let api: Awaited<ReturnType<typeof startLighthouseApi>> | null = null
  try {
    api = await startLighthouseApi(urls[0]!, lighthouseChromium(shell), [...CHROMIUM_ARGS])
  } catch (e) {
    return { available: false, reason: errorMessage(e), runs: 0, wallMs: [] }
  }
  try {
    log(`Lighthouse ${api.version}: API, warm Chromium, 1 warm-up + ${runs} runs over ${urls.length} pages`)
    await api.run(urls[0])
    await settle()
    const spec: GroupSpec = { trees: [{ group: 'lighthouse', pid: api.pid }] }
    const a = snapshot(spec)
    const wallMs: number[] = []
    for (let i = 0; i < runs; i++) {
      const r = await api.run(urls[i % urls.length])
      if (r.runtimeError) log(`  Lighthouse run ${i + 1}: runtime error ${r.runtimeError}`)
      wallMs.push(r.ms)
    }
    return { available: true, runs, wallMs, cpu: spent(a, snapshot(spec)) }
  } catch (e) {
    return { available: false, reason: errorMessage(e), runs: 0, wallMs: [] }
  } finally {
    await withTimeout(api.stop(), 20_000, 'Lighthouse stop').catch(() => {})
  }
}

/**
 * Lighthouse's CLI, as a person or a CI job runs it (a node process that launches its own Chromium and ends with
 * it), on each page in turn: the machine's CPU over the runs, and the runs' own, as this process's waited-for
 * children (each CLI and the Chromium it launched and reaped).
 */
export async function lighthouseCliCpu(urls: string[], runs: number, log: (l: string) => void, shell = false): Promise<LighthouseCpu> {
  const chromeFlags = [...CHROMIUM_ARGS]
  try {
    log(`Lighthouse CLI: ${runs} runs over ${urls.length} pages, each launching its own Chromium`)
    await settle()
    const a = { at: performance.now(), machine: machineBusySeconds(), tree: reapedChildrenSeconds() }
    const wallMs: number[] = []
    for (let i = 0; i < runs; i++) {
      const r = await runLighthouseCli(urls[i % urls.length]!, lighthouseChromium(shell), chromeFlags)
      if (r.runtimeError) log(`  Lighthouse CLI run ${i + 1}: runtime error ${r.runtimeError}`)
      wallMs.push(r.ms)
    }
    const machine = machineBusySeconds() - a.machine
    const tree = reapedChildrenSeconds() - a.tree
    const cpu = { wallS: (performance.now() - a.at) / 1000, machine, groups: { lighthouse: tree, other: Math.max(0, machine - tree) } }
    return { available: true, runs, wallMs, cpu }
  } catch (e) {
    return { available: false, reason: errorMessage(e), runs: 0, wallMs: [] }
  }
}
