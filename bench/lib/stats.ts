// Small helpers shared by the benchmarks: order statistics, number formatting, a plain-text table,
// the command-line flags every bench understands, and a wait for a quiet machine between timed runs.
import { readFileSync } from 'node:fs'

export interface Summary {
  n: number
  min: number
  median: number
  p90: number
  max: number
  mean: number
}

/** Nearest-rank percentile of an already sorted array (p in 0..100). */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!
}

/** Median as the mean of the two middle values for an even count. */
function median(sorted: number[]): number {
  const n = sorted.length
  if (n === 0) return NaN
  const mid = n >> 1
  return n % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b)
  return {
    n: s.length,
    min: s[0] ?? NaN,
    median: median(s),
    p90: percentile(s, 90),
    max: s[s.length - 1] ?? NaN,
    mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN,
  }
}

export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a')
export const fmtMs = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : 'n/a')
export const fmtRatio = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a')

/** A left-aligned first column and right-aligned others, separated by two spaces. */
export function table(rows: string[][]): string {
  const widths: number[] = []
  for (const r of rows) for (const [i, c] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, c.length)
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** `--name=value` or bare `--name` (true) from argv. */
export function flag(name: string, argv = process.argv.slice(2)): string | true | undefined {
  for (const a of argv) {
    if (a === `--${name}`) return true
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3)
  }
  return undefined
}

export function intFlag(name: string, fallback: number, min: number, max: number): number {
  const v = flag(name)
  if (v === undefined || v === true) return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}..${max} (got ${v})`)
  return n
}

/** Writes a bench's result as JSON where bench/run.ts asked for it (--result=FILE). */
export async function writeResult(result: unknown): Promise<void> {
  const file = flag('result')
  if (typeof file === 'string') await Bun.write(file, JSON.stringify(result, null, 2))
}

/** Rejects after `ms` with a message naming what took too long. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** Busy and total CPU jiffies of the whole machine, from /proc/stat (null where there is none). */
function cpuJiffies(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] as string
    const v = line.trim().split(/\s+/).slice(1).map(Number)
    const idle = (v[3] ?? 0) + (v[4] ?? 0)
    const total = v.reduce((a, b) => a + b, 0)
    return { busy: total - idle, total }
  } catch {
    return null
  }
}

/**
 * Waits until the machine's CPUs are mostly idle (at most `busyShare` busy over a 150 ms window), at most
 * `maxMs`; returns how long it waited. Called before each timed run of a comparison, so one side's
 * leftovers (a browser closing, a worker opening its next page, a node process exiting) never fall on the
 * other side's clock.
 */
export async function settle(maxMs = 5_000, busyShare = 0.15): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < Math.ceil(maxMs / 150); i++) {
    const a = cpuJiffies()
    await Bun.sleep(150)
    const b = cpuJiffies()
    if (!a || !b) break
    const total = b.total - a.total
    if (total > 0 && (b.busy - a.busy) / total <= busyShare) break
  }
  return Math.round(performance.now() - t0)
}
