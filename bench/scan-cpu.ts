// Where a scan's CPU goes. The scan's gatherer (crawler/gather, as the scan worker runs it: a page made ahead,
// axe's shared finisher) runs in this process, one scan after another over the capacity bench's pages, while
// every Chromium process's CPU is sampled from /proc by its kind (browser, renderer, GPU, zygote, network and
// storage utilities), with this process's own beside it (the gatherer's node side: the protocol, the plain-HTTP
// chain and probes, the egress proxy, and the fixture sites, which run here too). A renderer that ends between
// two samples loses at most one interval. Each Chromium to compare runs in its own rounds, alternating, and
// the first is the reference of the ratios: by default Debian's headless shell, the one scans use, against
// its full browser in headless mode.
//
//   bun bench/scan-cpu.ts [--scans=N per round] [--rounds=N] [--sites=N] [--sample-ms=M] [--no-axe]
//                         [--chromium=PATH[,PATH]] [--trace=FILE (a Chromium trace of the first round)] [--result=FILE]
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { BrowserPool, FULL_CHROMIUM, HEADLESS_SHELL } from '../crawler/browser.ts'
import { gather } from '../crawler/gather/index.ts'
import { WarmPages } from '../crawler/gather/warm-page.ts'
import { createLogger } from '../shared/lib/log.ts'
import type { Browser } from 'playwright-core'
import { descendantsOf, kernelSharePct, machineCpuTimes, parseStat, readAll } from './capacity-lib/cpu.ts'
import { pct } from './capacity-lib/phases.ts'
import { kindFromCmdline } from './lib/proc-memory.ts'
import { startFixtures, stopFixtures } from './compare-lib/fixtures.ts'
import { SITE_MIX } from './scan-capacity.ts'
import { flag, intFlag, settle, writeResult } from './lib/stats.ts'

const HZ = 100

function kindOf(pid: number): string {
  try {
    return kindFromCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
  } catch {
    return 'gone'
  }
}

/** A process's children, from /proc/<pid>/task/<tid>/children (every thread's). */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
      if (text) out.push(...text.split(' ').map(Number))
    }
  } catch {}
  return out
}

/** Each Chromium process's CPU as last seen, by kind; walks the tree from the browser on every sample. */
class Sampler {
  private seen = new Map<number, { kind: string; ticks: number; base: number }>()
  private timer: ReturnType<typeof setInterval> | null = null
  /** CPU this process spent sampling, taken out of its own figure. */
  cost = 0

  constructor(private root: number) {}

  sample(): void {
    const c0 = process.cpuUsage()
    const stack = [this.root]
    for (let i = 0; i < 10_000 && stack.length; i++) {
      const pid = stack.pop()!
      let own: number | undefined
      try {
        own = parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'))?.own
      } catch {}
      if (own === undefined) continue
      const known = this.seen.get(pid)
      // A process the zygote forked shows the zygote's command line until it sets its own: asked again.
      if (known?.kind === 'zygote' && pid !== this.root) known.kind = kindOf(pid)
      if (known) known.ticks = own
      // A process first seen now counts from zero (it started after the last sample), unless it is there at start.
      else this.seen.set(pid, { kind: kindOf(pid), ticks: own, base: this.timer ? 0 : own })
      stack.push(...childrenOf(pid))
    }
    const c = process.cpuUsage(c0)
    this.cost += (c.user + c.system) / 1e6
  }

  start(ms: number): void {
    this.sample()
    this.timer = setInterval(() => this.sample(), ms)
  }

  /** CPU-seconds per kind since start. */
  stop(): Record<string, number> {
    this.sample()
    if (this.timer) clearInterval(this.timer)
    const out: Record<string, number> = {}
    for (const p of this.seen.values()) out[p.kind] = (out[p.kind] ?? 0) + (p.ticks - p.base) / HZ
    return out
  }
}

/** The browser process below this one: the outermost process named chrom* (Debian's /usr/bin/chromium is a script). */
function browserPid(): number {
  const all = readAll()
  const mine = descendantsOf(process.pid, all).filter((pid) => /chrom/.test(all.get(pid)!.comm))
  const top = mine.find((pid) => !mine.includes(all.get(pid)!.ppid))
  if (top === undefined) throw new Error('no Chromium below this process')
  return top
}

export interface Round {
  chromium: string
  scans: number
  /** CPU-seconds per scan by Chromium process kind, Chromium's in all, this process's, and the sum. */
  perScan: Record<string, number>
  /** Median ms of each phase the gatherer reports. */
  phases: Record<string, number>
}

interface RoundOptions {
  urls: string[]
  scans: number
  sampleMs: number
  axe: boolean
  trace?: string
}

/** The pool's browser, reached through a context opened and closed for it. */
async function browserOf(pool: BrowserPool): Promise<Browser | null> {
  const context = await pool.newContext({})
  const browser = context.browser()
  await context.close()
  return browser
}

/** One Chromium: a warm-up scan of each page, then `scans` scans, each once the next page made ahead is ready. */
async function round(executable: string, o: RoundOptions): Promise<Round> {
  const browser = new BrowserPool(executable, createLogger('warn'))
  const policy = { allowPrivate: true, trustedHosts: [] }
  const warm = new WarmPages(browser, policy, 1)
  const opts = { policy, browser, navTimeoutMs: 15_000, probeTimeoutMs: 5_000, warm, axe: o.axe }
  try {
    warm.prepare()
    for (const u of o.urls) await gather(u, opts)
    await settle()
    const sampler = new Sampler(browserPid())
    const raw = o.trace ? await browserOf(browser) : null
    await raw?.startTracing(undefined, { categories: ['toplevel', 'disabled-by-default-devtools.timeline', 'v8', 'blink', 'cc', 'viz'] })
    const own0 = process.cpuUsage()
    sampler.start(o.sampleMs)
    const phases: Record<string, number[]> = {}
    for (let i = 0; i < o.scans; i++) {
      await warm.ready(10_000)
      const g = await gather(o.urls[i % o.urls.length]!, opts)
      for (const [k, v] of Object.entries(g.timings)) (phases[k] ??= []).push(v)
    }
    await Bun.sleep(300) // the last slot's release and the next one's making count too
    const byKind = sampler.stop()
    const own = process.cpuUsage(own0)
    if (raw && o.trace) await Bun.write(o.trace, await raw.stopTracing())
    const perScan: Record<string, number> = {}
    for (const [k, v] of Object.entries(byKind)) perScan[`chromium ${k}`] = v / o.scans
    const chromium = Object.values(byKind).reduce((a, b) => a + b, 0) / o.scans
    const node = ((own.user + own.system) / 1e6 - sampler.cost) / o.scans
    Object.assign(perScan, { 'chromium, all': chromium, 'this process': node, 'in all': chromium + node })
    return {
      chromium: executable,
      scans: o.scans,
      perScan,
      phases: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, pct(v, 50)])),
    }
  } finally {
    await warm.close()
    await browser.close()
  }
}

/** The rows in a stable order: the sums last. */
function table(rounds: Round[]): string {
  const keys = [...new Set(rounds.flatMap((r) => Object.keys(r.perScan)))]
  const sums = ['chromium, all', 'this process', 'in all']
  const rows = [...keys.filter((k) => !sums.includes(k)).sort(), ...sums]
  const head = `${'CPU-s per scan'.padEnd(28)}${rounds.map((r, i) => `#${i + 1} ${short(r.chromium)}`.padStart(30)).join('')}`
  const lines = rows.map((k) => `${k.padEnd(28)}${rounds.map((r) => (r.perScan[k] ?? 0).toFixed(3).padStart(30)).join('')}`)
  return [head, ...lines].join('\n')
}

const short = (path: string) => path.split('/').at(-1) ?? path

async function main() {
  const scans = intFlag('scans', 30, 1, 500)
  const rounds = intFlag('rounds', 2, 1, 10)
  const given = flag('chromium')
  const executables = typeof given === 'string' ? given.split(',') : [HEADLESS_SHELL, FULL_CHROMIUM]
  const siteCount = flag('sites') ? intFlag('sites', SITE_MIX.length, 1, SITE_MIX.length) : SITE_MIX.length
  const { started, failed } = await startFixtures(SITE_MIX.slice(0, siteCount))
  for (const f of failed) console.log(`fixture ${f.name} did not start: ${f.error}`)
  const urls = started.filter((s) => s.scanUrl.startsWith('http://')).map((s) => s.scanUrl)
  const trace = flag('trace')
  const o = { urls, scans, sampleMs: intFlag('sample-ms', 10, 2, 1000), axe: flag('no-axe') !== true }
  const loadStart = loadavg()[0]!
  const cpuStart = machineCpuTimes()
  console.log(`scan CPU: ${scans} scans a round over ${started.map((s) => s.name).join(', ')}; load average ${loadStart.toFixed(2)}`)
  const done: Round[] = []
  try {
    for (let r = 0; r < rounds; r++)
      for (const exe of executables) {
        done.push(await round(exe, { ...o, ...(r === 0 && exe === executables[0] && typeof trace === 'string' ? { trace } : {}) }))
        const last = done.at(-1)!
        const phases = Object.entries(last.phases).map(([k, v]) => `${k} ${v}`)
        console.log(
          `#${done.length} ${last.chromium}: ${last.perScan['in all']!.toFixed(3)} CPU-s a scan; phases (median ms) ${phases.join(', ')}`,
        )
      }
  } finally {
    await stopFixtures(started)
  }
  console.log(table(done))
  const mean = (exe: string, key: string) => {
    const xs = done.filter((d) => d.chromium === exe).map((d) => d.perScan[key] ?? NaN)
    return xs.reduce((a, b) => a + b, 0) / xs.length
  }
  const [ref, ...others] = executables
  for (const exe of others)
    for (const key of ['chromium browser', 'chromium, all', 'in all'])
      console.log(`${short(exe)} / ${short(ref!)}, ${key}: ${(mean(exe, key) / mean(ref!, key)).toFixed(2)}x`)
  const kernelPct = kernelSharePct(cpuStart)
  console.log(
    `load average at the end: ${loadavg()[0]!.toFixed(2)}; the kernel's share of the machine's busy CPU: ${kernelPct.toFixed(0)}%`,
  )
  await writeResult({ bench: 'scan-cpu', load: { start: loadStart, end: loadavg()[0], kernelSharePct: kernelPct }, rounds: done })
}

if (import.meta.main) {
  await main()
  process.exit(0)
}
