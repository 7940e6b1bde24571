// What axe costs a scan, step by step: the machine's CPU (/proc/stat, every process) per iteration of a fresh
// context with a blank page (its renderer), then of one loading one of scan-capacity's pages, then the same
// with axe's source sent as a string that is only parsed (the protocol's share), the same for the package's
// own minified build (17 characters past ASCII: what asciiOnly saves), with axe evaluated (sending and
// compiling it), and with axe also run (the scan's own path: runAxe on a one-frame page). Each step in turn
// for --iterations, --rounds times; the differences between steps are what each part costs. Run it on a
// quiet machine.
//
//   bun bench/axe-cost.ts [--iterations=N (default 60)] [--rounds=N (default 2)]
import { BrowserPool, chromiumPath } from '../crawler/browser.ts'
import { AXE_SOURCE, evaluateAxe, minifiedAxe, runAxe } from '../crawler/gather/axe.ts'
import { scanContextOptions } from '../crawler/gather/page-reader.ts'
import { startEgressProxy } from '../shared/egress/proxy.ts'
import { createLogger } from '../shared/lib/log.ts'
import { machineBusySeconds } from './capacity-lib/cpu.ts'
import { startFixtures, stopFixtures } from './compare-lib/fixtures.ts'
import { SITE_MIX } from './scan-capacity.ts'
import { intFlag, settle } from './lib/stats.ts'

type Step = 'blank' | 'load' | 'sendPackaged' | 'send' | 'evaluate' | 'run'
const STEPS: Step[] = ['blank', 'load', 'sendPackaged', 'send', 'evaluate', 'run']
/** axe's source as a string literal the page only parses: what sending it costs, without compiling it. */
const SENT_ONLY = `void ${JSON.stringify(AXE_SOURCE)}.length`
/** The same for the package's minified build as it ships, before asciiOnly. */
const PACKAGED_SENT_ONLY = `void ${JSON.stringify(minifiedAxe())}.length`

async function main(): Promise<void> {
  const iterations = intFlag('iterations', 60, 5, 1_000)
  const rounds = intFlag('rounds', 2, 1, 10)
  const { started, failed } = await startFixtures(SITE_MIX)
  for (const f of failed) console.log(`fixture ${f.name} did not start: ${f.error}`)
  const urls = started.map((s) => s.scanUrl)
  const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
  const proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
  const once = async (step: Step, url: string) => {
    const context = await pool.newContext(scanContextOptions(proxy))
    try {
      const page = await context.newPage()
      if (step === 'blank') return
      await page.goto(url, { waitUntil: 'load', timeout: 15_000 })
      if (step === 'send') await evaluateAxe(page, SENT_ONLY)
      if (step === 'sendPackaged') await evaluateAxe(page, PACKAGED_SENT_ONLY)
      if (step === 'evaluate' || step === 'run') await evaluateAxe(page)
      if (step === 'run') await runAxe(page, { preloaded: Promise.resolve(true) })
    } finally {
      await context.close()
    }
  }
  const perStep: Record<Step, number[]> = { blank: [], load: [], sendPackaged: [], send: [], evaluate: [], run: [] }
  try {
    console.log(`axe cost: ${iterations} iterations a step over ${urls.length} pages, ${rounds} rounds`)
    for (let r = 0; r < rounds; r++) {
      for (const step of STEPS) {
        await once(step, urls[0]!)
        await settle()
        const before = machineBusySeconds()
        for (let i = 0; i < iterations; i++) await once(step, urls[i % urls.length]!)
        perStep[step].push((machineBusySeconds() - before) / iterations)
      }
      const s = Object.fromEntries(STEPS.map((k) => [k, perStep[k][r]!])) as Record<Step, number>
      console.log(
        `round ${r + 1}: machine CPU-s an iteration: a context and its blank page ${s.blank.toFixed(3)}, with the page loaded ${s.load.toFixed(3)}; axe's source sent ${(s.send - s.load).toFixed(3)} ` +
          `(as packaged ${(s.sendPackaged - s.load).toFixed(3)}), ` +
          `sent and compiled ${(s.evaluate - s.load).toFixed(3)}, run ${(s.run - s.evaluate).toFixed(3)}; axe in all ${(s.run - s.load).toFixed(3)} ` +
          `of ${s.run.toFixed(3)} (${(((s.run - s.load) / s.run) * 100).toFixed(0)}%)`,
      )
    }
  } finally {
    await pool.close()
    await proxy.stop()
    await stopFixtures(started)
  }
}

if (import.meta.main) await main()
