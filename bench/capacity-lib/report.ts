// What the capacity bench prints: tables per phase, CPU per scan by process group, the ratios, and how many
// machines like this one 1,000 scans an hour take.
import { fmtMs, fmtRatio, table } from '../lib/stats.ts'
import { OUTCOMES, type ScanCall } from './drive.ts'
import { type CpuSpent, type LighthouseCpu, type OpenRun, pct, type SaturationRun, type Sequence } from './phases.ts'

export const GROUPS = ['api', 'crawler', 'chromium', 'postgres', 'redis', 'bench client', 'other']
const PHASES = ['pageOpen', 'pageLoad', 'networkQuiet', 'pageRead', 'axe', 'browser', 'httpChain', 'probes', 'checks', 'total']

const s2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a')
const s3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : 'n/a')

/** CPU-seconds per scan (or run): the machine's and each group's. */
export function perUnit(cpu: CpuSpent | undefined, units: number): Record<string, number> {
  if (!cpu || units <= 0) return { machine: NaN }
  const out: Record<string, number> = { machine: cpu.machine / units }
  for (const [g, v] of Object.entries(cpu.groups)) out[g] = v / units
  return out
}

export function saturationTable(runs: SaturationRun[], cores: number): string {
  const rows = [['in flight', 'completed', 'scans/min', 'p50', 'p95', 'other outcomes', 'machine busy', 'CPU-s/scan']]
  for (const r of runs) {
    const others = OUTCOMES.filter((o) => o !== 'completed' && r.outcomes[o]).map((o) => `${o} ${r.outcomes[o]}`)
    rows.push([
      String(r.inFlight),
      String(r.completed),
      r.perMinute.toFixed(1),
      fmtMs(r.p50),
      fmtMs(r.p95),
      others.join(', ') || '-',
      `${Math.round((100 * r.cpu.machine) / (r.cpu.wallS * cores))}%`,
      s3(r.cpu.machine / Math.max(1, r.completed)),
    ])
  }
  return table(rows)
}

export function openTable(runs: OpenRun[]): string {
  const rows = [['rate', 'scans/min', 'sent', ...OUTCOMES, 'p50', 'p95', 'queued: first third', 'last third', 'max', 'bounded']]
  for (const r of runs) {
    rows.push([
      `${Math.round(r.share * 100)}%`,
      r.perMinute.toFixed(1),
      String(r.sent + r.notSent),
      ...OUTCOMES.map((o) => String(r.outcomes[o])),
      fmtMs(r.p50),
      fmtMs(r.p95),
      s2(r.queue.first),
      s2(r.queue.last),
      String(r.queue.max),
      r.queue.bounded ? 'yes' : 'NO',
    ])
  }
  return table(rows)
}

/**
 * A run's slowest calls, each with where its time went: queued before a worker took it (the scan's record),
 * the worker's `total` and its phases over 50 ms, and the rest of the call's wall time (the api and the
 * protocol both ways, and the wait for a worker when the record did not say).
 */
export function slowestLine(r: OpenRun): string {
  return r.slowest
    .map((c) => {
      const head = `${fmtMs(c.ms)} sent at ${c.sentS.toFixed(1)} s`
      const total = c.timings.total
      if (total === undefined) return `${head}: no timings`
      const phases = PHASES.filter((p) => p !== 'total' && p !== 'browser' && (c.timings[p] ?? 0) > 50).map((p) => `${p} ${c.timings[p]}`)
      const queued = c.queuedMs === null ? 'queued ?' : `queued ${fmtMs(c.queuedMs)}`
      return `${head}: ${queued}, worker ${fmtMs(total)} (${phases.join(', ') || 'no phase over 50 ms'}), the rest ${fmtMs(Math.max(0, c.ms - total))}`
    })
    .join(' | ')
}

/** The queue depth every `every` seconds, as "t=5s q=0 r=2". */
export function queueLine(r: OpenRun, every = 10): string {
  const picked = r.samples.filter((s, i) => i === 0 || Math.floor(s.atS / every) !== Math.floor(r.samples[i - 1]!.atS / every))
  return picked.map((s) => `t=${Math.round(s.atS)}s q=${s.queued} r=${s.running}`).join(', ')
}

export function cpuTable(columns: Array<{ name: string; perUnit: Record<string, number> }>): string {
  const rows = [['CPU-seconds per scan / run', ...columns.map((c) => c.name)]]
  for (const g of ['machine', ...GROUPS, 'lighthouse']) {
    if (columns.every((c) => !Number.isFinite(c.perUnit[g] ?? NaN))) continue
    rows.push([g, ...columns.map((c) => s3(c.perUnit[g] ?? NaN))])
  }
  return table(rows)
}

export function medianTimings(calls: ScanCall[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const k of PHASES) {
    const xs = calls.flatMap((c) => (typeof c.timings?.[k] === 'number' ? [c.timings[k]] : []))
    if (xs.length) out[k] = pct(xs, 50)
  }
  return out
}

export function sequenceTable(seq: Sequence): string {
  const iso = medianTimings(seq.isolated)
  const b2b = medianTimings(seq.backToBack)
  const wall = (cs: ScanCall[]) =>
    pct(
      cs.filter((c) => c.outcome === 'completed').map((c) => c.ms),
      50,
    )
  const rows = [['median (ms)', 'wall', ...PHASES]]
  rows.push(['isolated', fmtMs(wall(seq.isolated)), ...PHASES.map((k) => fmtMs(iso[k] ?? NaN))])
  rows.push(['back to back', fmtMs(wall(seq.backToBack)), ...PHASES.map((k) => fmtMs(b2b[k] ?? NaN))])
  return table(rows)
}

export interface Arithmetic {
  scansPerHourTarget: number
  /** Machines by throughput: the target rate over 80% of this machine's saturation rate. */
  byRate: number
  /** Machines by CPU: the target's CPU-seconds an hour over 80% of this machine's cores. */
  byCpu: number
  lines: string[]
}

/** How many machines like this one (its `cores`) 1,000 scans an hour take, two ways. */
export function machinesFor(satPerMinute: number, cpuPerScan: number, cores: number, target = 1_000): Arithmetic {
  const perHour = satPerMinute * 60
  const byRate = target / (0.8 * perHour)
  const coreSeconds = target * cpuPerScan
  const byCpu = coreSeconds / (3_600 * cores * 0.8)
  const lines = [
    `by rate: ${target} scans/h / (0.8 x ${perHour.toFixed(0)} scans/h at saturation) = ${s2(byRate)} machines -> ${Math.max(1, Math.ceil(byRate))}`,
    `by CPU:  ${target} scans/h x ${s3(cpuPerScan)} CPU-s/scan = ${coreSeconds.toFixed(0)} CPU-s/h; / (3,600 s x ${cores} cores x 0.8) = ${s2(byCpu)} machines -> ${Math.max(1, Math.ceil(byCpu))}`,
  ]
  return { scansPerHourTarget: target, byRate, byCpu, lines }
}

export function lighthouseLine(lh: LighthouseCpu, name = 'Lighthouse'): string {
  if (!lh.available) return `${name}: skipped (${lh.reason ?? 'unavailable'})`
  return `${name}: ${lh.runs} runs, wall median ${fmtMs(pct(lh.wallMs, 50))}, machine ${s3((lh.cpu?.machine ?? NaN) / lh.runs)} CPU-s/run, its tree ${s3((lh.cpu?.groups.lighthouse ?? NaN) / lh.runs)} CPU-s/run`
}

export const ratio = (a: number, b: number) => fmtRatio(a / b)
