// The soak's report: what the users asked for and got, what the database holds, the faults, scan latency
// outside them, and the memory of every process.
import { cpus, loadavg, totalmem } from 'node:os'
import { fmtInt, table } from '../lib/stats.ts'
import type { Fault } from './chaos.ts'
import type { LoadLog, ScanCall } from './load.ts'
import type { Slot } from './procs.ts'
import type { Tally } from './tally.ts'

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b)
  if (!s.length) return NaN
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

/** How long after a fault's recovery work still counts as under it (queues refilling, clients reconnecting). */
export const FAULT_TAIL_MS = 10_000

export const duringFault = (t0: number, t1: number, faults: Fault[]) => faults.some((f) => t0 < f.back + FAULT_TAIL_MS && t1 > f.at)

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  return `${cpus().length} x ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB`
}

export const loadNow = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

const counts = (xs: string[]) => {
  const out: Record<string, number> = {}
  for (const x of xs) out[x] = (out[x] ?? 0) + 1
  return Object.entries(out)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')
}

function scanLines(scans: ScanCall[], faults: Fault[]): string[] {
  const ok = scans.filter((s) => s.outcome === 'completed')
  const quiet = ok.filter((s) => !duringFault(s.t0, s.t1, faults))
  const ms = (xs: ScanCall[]) => xs.map((s) => s.t1 - s.t0)
  const fmt = (xs: ScanCall[]) =>
    `p50 ${fmtInt(percentile(ms(xs), 50))} ms, p95 ${fmtInt(percentile(ms(xs), 95))} ms, max ${fmtInt(percentile(ms(xs), 100))} ms (n=${xs.length})`
  const failedQuiet = scans.filter((s) => s.outcome !== 'completed' && !duringFault(s.t0, s.t1, faults))
  return [
    `scan_app calls: ${scans.length}; ${counts(scans.map((s) => (s.outcome === 'error' ? `error ${s.code}` : s.outcome)))}`,
    `scan_app latency outside faults: ${fmt(quiet)}`,
    `scan_app latency, all completed: ${fmt(ok)}`,
    `scan_app not completed outside faults: ${failedQuiet.length}${failedQuiet.length ? ` (${counts(failedQuiet.map((s) => s.code ?? s.outcome))})` : ''}`,
  ]
}

/** Where a completed scan's time went, from the database: waiting in the queue, then in a worker. */
function scanSplit(t: Tally, faults: Fault[]): string {
  const quiet = t.scanTimes.filter(([c, , f]) => !duringFault(c, f, faults))
  const q = quiet.map(([c, s]) => s - c)
  const w = quiet.map(([, s, f]) => f - s)
  const pp = (xs: number[]) => `p50 ${fmtInt(percentile(xs, 50))} ms, p95 ${fmtInt(percentile(xs, 95))} ms`
  return `every completed scan outside faults (directory runs' too, n=${quiet.length}): queued ${pp(q)}; in a worker ${pp(w)}`
}

function loadLines(log: LoadLog): string[] {
  const a = log.audits
  const viewers = a.flatMap((x) => (x.viewer ? [x.viewer] : []))
  return [
    `audit_app calls: ${a.length}; ${counts(a.map((x) => (x.outcome === 'refused' ? `refused ${x.code}` : x.outcome)))}`,
    `audits followed to: ${counts(a.filter((x) => x.final).map((x) => x.final!))}`,
    `directory runs: ${log.runs.length}; ${counts(log.runs.map((r) => `${r.mode} ${r.outcome === 'refused' ? `refused ${r.code}` : r.outcome}${r.final ? ` -> ${r.final}` : ''}`))}`,
    `viewers: ${viewers.length}; with frames ${viewers.filter((v) => v.frames > 0).length}; ended by ${counts(viewers.map((v) => v.end))}`,
    `reads (get_account, scan_history): ok ${log.reads.ok}, error ${log.reads.error}, transport ${log.reads.transport}`,
  ]
}

function tallyLines(t: Tally, missing: string[]): string[] {
  const obj = (r: Record<string, number>) =>
    Object.entries(r)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')
  const lost = t.unfinished.scans.length + t.unfinished.audits.length + t.unfinished.runs.length + missing.length
  return [
    `database scans: ${obj(t.scans)} (taken over after a fault: ${t.retried.scans})`,
    `database audits: ${obj(t.audits)} (taken over after a fault: ${t.retried.audits})`,
    `database directory runs: ${obj(t.runs)}${t.waitingOnCap.length ? ` (${t.waitingOnCap.length} audit runs still waiting for their account's hourly cap of audit starts: not lost)` : ''}`,
    `LOST: ${lost}${lost ? ` (unfinished ${JSON.stringify(t.unfinished)}, answered but absent ${missing.join(' ')})` : ''}`,
    `CHARGED TWICE: ${t.chargedTwice.length}${t.chargedTwice.length ? ` ${t.chargedTwice.join(' ')}` : ''}; audits without a charge: ${t.notCharged.length}`,
    `REFUNDED RIGHT: ${t.refunds.right} of ${t.refunds.expected} failed (each failed audit is refunded once, no other); wrong: ${t.refunds.wrong.length}${t.refunds.wrong.length ? ` (${t.refunds.wrong.slice(0, 5).join('; ')})` : ''}`,
    `credits column = ledger: ${t.creditsMismatch.length ? `NO ${t.creditsMismatch.join('; ')}` : 'yes, every account'}`,
  ]
}

const mb = (kib: number | undefined) => (kib ? `${Math.round(kib / 1024)}` : '-')

export function rssTable(slots: Slot[]): string {
  const rows = [['process', 'lives', 'start MB', 'start+children MB', 'end MB', 'end+children MB', 'max+children MB', 'ends']]
  for (const s of slots) {
    const first = s.lives[0]
    const last = s.lives.at(-1)
    rows.push([
      s.name,
      String(s.lives.length),
      mb(first?.rssStart?.own),
      mb(first?.rssStart?.group),
      mb(last?.rssLast?.own),
      mb(last?.rssLast?.group),
      mb(Math.max(0, ...s.lives.map((l) => l.rssMaxGroup))),
      s.lives
        .flatMap((l) =>
          l.endedBy ? [`${l.endedBy}${l.orphans ? ` (${l.orphans} children outlived it by 1 s, ${l.orphansAfter60s} by 60 s)` : ''}`] : [],
        )
        .join('; ') || '-',
    ])
  }
  return table(rows)
}

export function faultLines(faults: Fault[], t0: number): string[] {
  return faults.map(
    (f) => `  +${Math.round((f.at - t0) / 1000)} s ${f.what} (${f.detail}), back in ${((f.back - f.at) / 1000).toFixed(1)} s`,
  )
}

export interface ReportInput {
  minutes: number
  t0: number
  faults: Fault[]
  log: LoadLog
  tally: Tally
  missing: string[]
  /** The scans of scan_app calls answered scanner_unavailable, by what the database says of them at the end. */
  unavailable: Record<string, number>
  slots: Slot[]
  loads: number[]
  loadStart: string
  drainMs: number
  restartFailures: string[]
}

export function report(r: ReportInput): string {
  const loads = r.loads.length
    ? `min ${Math.min(...r.loads).toFixed(1)}, mean ${(r.loads.reduce((a, b) => a + b, 0) / r.loads.length).toFixed(1)}, max ${Math.max(...r.loads).toFixed(1)}`
    : 'n/a'
  return [
    `soak of ${r.minutes} min on ${new Date(r.t0).toISOString()}, ${machine()}`,
    `load average (1 min) during the run: ${loads}; at start ${r.loadStart}, at end ${loadNow()}`,
    `faults: ${r.faults.length}`,
    ...faultLines(r.faults, r.t0),
    ...(r.restartFailures.length ? [`process starts that failed: ${r.restartFailures.join('; ')}`] : []),
    ...scanLines(r.log.scans, r.faults),
    scanSplit(r.tally, r.faults),
    `scans whose scan_app answered scanner_unavailable, at the end: ${
      Object.entries(r.unavailable)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }`,
    ...loadLines(r.log),
    `drain after the load: ${Math.round(r.drainMs / 1000)} s`,
    ...tallyLines(r.tally, r.missing),
    `client transport failures (samples): ${r.log.transportSamples.slice(0, 8).join(' | ') || 'none'}`,
    '',
    rssTable(r.slots),
  ].join('\n')
}
