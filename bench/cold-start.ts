// The first scan after a fresh start of the service against a warm one. The service is started as a person or
// an orchestrator starts it, as child processes, so nothing of it is loaded or compiled beforehand:
//
// - embedded: `bun server/main.ts` with no DATABASE_URL or REDIS_URL (PGlite under a DATA_DIR, in-process
//   queue, crawler workers in the same process), as test/harness/embedded-process.ts starts it; the first
//   cycle on a new, empty DATA_DIR (a first run ever), the others on the same directory (a restart);
// - production: `bun server/main.ts` (ROLE=api) and `bun server/crawler.ts` on PostgreSQL (a throwaway
//   database, migrated first as the migration Job does) and Redis, as bench/capacity-lib/layout.ts starts them.
//
// Each cycle: start (timed to the banner, or to the crawler's health line), one scan at once (cold), then
// warm scans, each after a wait for a quiet machine; then stop. The page is the spa fixture.
// Printed per mode: start-up, the first scan, the warm median, the ratio first/warm. Target: first <= 2x warm.
//
//   bun bench/cold-start.ts            3 cycles per mode, 3 warm scans each
//   bun bench/cold-start.ts --quick    1 cycle per mode, 2 warm scans
//   options: --cycles=N --warm=N --mode=embedded|production|both --result=FILE
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { spaSite } from '../test/fixtures/sites.ts'
import { connectClient } from '../test/harness/client.ts'
import { cleanup, startEmbedded, tempDataDir } from '../test/harness/embedded-process.ts'
import type { Mode } from '../test/harness/service.ts'
import { type ScanCall, scanCall } from './capacity-lib/drive.ts'
import { startLayout } from './capacity-lib/layout.ts'
import { pct } from './capacity-lib/phases.ts'
import { flag, fmtMs, fmtRatio, intFlag, settle, table, withTimeout, writeResult } from './lib/stats.ts'

export const TARGET_RATIO = 2

export interface Cycle {
  startMs: number
  firstMs: number
  warmMs: number[]
  /** The reports' own timings of the first scan and the warm median of each. */
  first: Record<string, number>
  warm: Record<string, number>
}

export interface ModeCold {
  mode: Mode
  cycles: Cycle[]
  startMs: number
  firstMs: number
  warmMs: number
  ratio: number
}

export interface ColdStartResult {
  bench: 'cold-start'
  load: { start: number; end: number }
  modes: ModeCold[]
  target: number
}

const KEYS = ['pageOpen', 'pageLoad', 'networkQuiet', 'pageRead', 'axe', 'browser', 'probes', 'checks', 'total']

/** One cold scan and `warm` warm ones on a started service; throws when a scan does not complete. */
async function scans(client: Client, url: string, warm: number, startMs: number): Promise<Cycle> {
  const t0 = performance.now()
  const first = await scanCall(client, url, t0, true)
  if (first.outcome !== 'completed') throw new Error(`the first scan: ${first.outcome} ${first.detail ?? ''}`)
  const warmCalls: ScanCall[] = []
  for (let i = 0; i < warm; i++) {
    await settle()
    const c = await scanCall(client, url, t0, true)
    if (c.outcome !== 'completed') throw new Error(`warm scan ${i + 1}: ${c.outcome} ${c.detail ?? ''}`)
    warmCalls.push(c)
  }
  const med = (k: string) =>
    pct(
      warmCalls.flatMap((c) => (typeof c.timings?.[k] === 'number' ? [c.timings[k]] : [])),
      50,
    )
  return {
    startMs,
    firstMs: first.ms,
    warmMs: warmCalls.map((c) => c.ms),
    first: Object.fromEntries(KEYS.map((k) => [k, first.timings?.[k] ?? NaN])),
    warm: Object.fromEntries(KEYS.map((k) => [k, med(k)])),
  }
}

async function embeddedCycle(dataDir: string, url: string, warm: number): Promise<Cycle> {
  const t0 = performance.now()
  const svc = await startEmbedded(dataDir)
  const startMs = performance.now() - t0
  let client: Client | null = null
  try {
    client = await withTimeout(connectClient(`${svc.base}/api/mcp`, svc.fileKey()), 30_000, 'MCP connect')
    return await scans(client, url, warm, startMs)
  } finally {
    await client?.close().catch(() => {})
    await svc.stop().catch(() => 0)
  }
}

async function productionCycle(url: string, warm: number): Promise<Cycle> {
  const layout = await startLayout({ accounts: ['launch'] })
  try {
    const ready = [layout.api, layout.crawler].map((s) => (s.lives[0]!.readyAt ?? NaN) - s.lives[0]!.startedAt)
    return await scans(layout.accounts[0]!.client, url, warm, Math.max(...ready))
  } finally {
    await layout.stop()
  }
}

function summary(mode: Mode, cycles: Cycle[]): ModeCold {
  const firstMs = pct(
    cycles.map((c) => c.firstMs),
    50,
  )
  const warmMs = pct(
    cycles.flatMap((c) => c.warmMs),
    50,
  )
  return {
    mode,
    cycles,
    startMs: pct(
      cycles.map((c) => c.startMs),
      50,
    ),
    firstMs,
    warmMs,
    ratio: firstMs / warmMs,
  }
}

export async function benchColdStart(
  opts: { quick?: boolean; cycles?: number; warm?: number; modes?: Mode[]; log?: (l: string) => void } = {},
): Promise<ColdStartResult> {
  const log = opts.log ?? ((l: string) => console.log(l))
  const cycles = opts.cycles ?? (opts.quick ? 1 : 3)
  const warm = opts.warm ?? (opts.quick ? 2 : 3)
  const modes = opts.modes ?? ['embedded', 'production']
  const loadStart = loadavg()[0]!
  log(`cold start: ${cycles} cycle(s) per mode, ${warm} warm scans each; load average (1 min) ${loadStart.toFixed(2)}`)
  const site = await spaSite()
  const out: ModeCold[] = []
  try {
    for (const mode of modes) {
      const done: Cycle[] = []
      const dataDir = mode === 'embedded' ? tempDataDir('appaudit-cold-') : ''
      for (let i = 0; i < cycles; i++) {
        await settle()
        const c = mode === 'embedded' ? await embeddedCycle(dataDir, site.url, warm) : await productionCycle(site.url, warm)
        done.push(c)
        log(
          `  ${mode} cycle ${i + 1}: start ${fmtMs(c.startMs)}, first scan ${fmtMs(c.firstMs)}, warm ${c.warmMs.map((m) => fmtMs(m)).join(', ')}`,
        )
        log(`    first: ${KEYS.map((k) => `${k} ${fmtMs(c.first[k]!)}`).join(', ')}`)
        log(`    warm:  ${KEYS.map((k) => `${k} ${fmtMs(c.warm[k]!)}`).join(', ')}`)
      }
      out.push(summary(mode, done))
    }
  } finally {
    await cleanup()
    await site.stop()
  }
  const rows = [['mode', 'cycles', 'start-up', 'first scan', 'warm scan', 'first/warm', `<= ${TARGET_RATIO}x`]]
  for (const m of out)
    rows.push([
      m.mode,
      String(m.cycles.length),
      fmtMs(m.startMs),
      fmtMs(m.firstMs),
      fmtMs(m.warmMs),
      fmtRatio(m.ratio),
      m.ratio <= TARGET_RATIO ? 'met' : 'NOT met',
    ])
  log('')
  log(table(rows))
  const loadEnd = loadavg()[0]!
  log(
    `(medians over the cycles; start-up: spawn to banner, production: the later of api and crawler; load average at the end ${loadEnd.toFixed(2)})`,
  )
  return { bench: 'cold-start', load: { start: loadStart, end: loadEnd }, modes: out, target: TARGET_RATIO }
}

if (import.meta.main) {
  const mode = flag('mode')
  if (mode !== undefined && mode !== 'embedded' && mode !== 'production' && mode !== 'both')
    throw new Error('--mode must be embedded, production or both')
  const result = await benchColdStart({
    quick: flag('quick') === true,
    cycles: flag('cycles') ? intFlag('cycles', 3, 1, 20) : undefined,
    warm: flag('warm') ? intFlag('warm', 3, 1, 50) : undefined,
    modes: mode === 'embedded' || mode === 'production' ? [mode] : undefined,
  })
  await writeResult(result)
  process.exit(0)
}
