// How fast this machine is, for the tests that wait on it. Speed is measured in bench/, never asserted in a
// test; but a test still has to give up some time, and a deadline set on a quiet machine is too short on a
// slower core or beside other heavy work (the suite on 2 cores at a load average of 11 to 24 took 45 minutes
// where it takes 12). machineDeadline() stretches such a deadline by both, so a hung start-up still fails,
// with its name, instead of a slow one.
import { readFileSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'

/** On-CPU time of this process's main thread so far (ms), from /proc; null where there is no /proc. */
export function mainThreadCpuMs(): number | null {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  } catch {
    return null
  }
}

/**
 * How much slower this machine's CPU is than the one the stall limit was set on: the best of seven runs of
 * a fixed single-threaded workload of the kind a large request costs (decoding 4 MB of bytes as UTF-8,
 * failing to parse it as JSON, hashing it), against REFERENCE_WORKLOAD_MS measured on a quiet machine of
 * this kind. Never below 1: a faster machine keeps the limit as set. On-CPU time, so load from other
 * processes does not count, only a slower core does (two machines of one kind can differ by 2x).
 */
export const REFERENCE_WORKLOAD_MS = 16
export function cpuSlowness(): { factor: number; workloadMs: number } {
  const bytes = new Uint8Array(4 << 20)
  let x = 12345
  for (let i = 0; i < bytes.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    bytes[i] = x >>> 24
  }
  let best = Number.POSITIVE_INFINITY
  for (let run = 0; run < 7; run++) {
    const cpu0 = mainThreadCpuMs()
    const t0 = performance.now()
    const text = new TextDecoder().decode(bytes)
    try {
      JSON.parse(text)
    } catch {}
    new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
    const cpu1 = mainThreadCpuMs()
    best = Math.min(best, cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : performance.now() - t0)
  }
  return { factor: Math.max(1, best / REFERENCE_WORKLOAD_MS), workloadMs: best }
}

/**
 * The most a deadline is stretched. Past it a wait is taken for a hang: at 8x a minute's start-up becomes
 * eight, still inside the runner's 20 minutes a file (scripts/run-tests.ts).
 */
const MAX_STRETCH = 8

let stretch: number | null = null
/**
 * How much longer than on a quiet machine of the reference kind things take here: the core's slowness
 * (cpuSlowness) times the share of a core each runnable process gets (the load average over the cores,
 * at least 1). Measured once per process.
 */
export function machineSlowness(): number {
  if (stretch === null) {
    const busy = Math.max(1, loadavg()[0]! / availableParallelism())
    stretch = Math.min(MAX_STRETCH, cpuSlowness().factor * busy)
  }
  return stretch
}

/** A deadline set on a quiet machine (ms), stretched for this one: for start-up hooks and waits on services. */
export function machineDeadline(ms: number): number {
  return Math.round(ms * machineSlowness())
}
