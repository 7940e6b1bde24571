// Soak: the production layout under faults for minutes, not seconds. Two api and two crawler processes on a
// PostgreSQL cluster and a Redis server of the soak's own (bench/soak-lib/stores.ts: never the machine's),
// users of several accounts calling scan_app, audit_app and start_directory_run and watching live viewers,
// while a chaos loop kills a crawler or an api (SIGKILL or SIGTERM), restarts Redis empty or pauses
// PostgreSQL, every 30-90 s. Then a drain, and the account from the database: nothing lost, nothing charged
// twice, every failure of ours refunded once; scan latency outside the faults; every process's memory.
//
//   bun bench/soak.ts [--minutes 20] [--drain-minutes 5] [--fault-min 30] [--fault-max 90] [--keep] [--result=FILE]
//
// Loopback only; fixture sites on port 0 in this process. Exits 1 when something was lost, charged twice or
// refunded wrong.
import { rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { createAccount, createApiKey, type Plan } from '../shared/db/accounts.ts'
import { openDatabase, type Database } from '../shared/db/index.ts'
import { addCredits } from '../shared/db/ledger.ts'
import { startAuditSite } from '../test/fixtures/audit-site.ts'
import { slowSite, spaSite, weakSite } from '../test/fixtures/sites.ts'
import { chaosLoop, type Fault, Supervisor } from './soak-lib/chaos.ts'
import { Agent, agentLoop, type LoadLog, newLoadLog, type Workload } from './soak-lib/load.ts'
import { type Slot, sampleRss, signalSlot } from './soak-lib/procs.ts'
import { loadNow, report } from './soak-lib/report.ts'
import { startStores, type SoakStores } from './soak-lib/stores.ts'
import { tally, unfinishedCount } from './soak-lib/tally.ts'
import { withTimeout } from './lib/stats.ts'

function numArg(name: string, fallback: number, min: number, max: number): number {
  const argv = process.argv.slice(2)
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`))
  if (i < 0) return fallback
  const v = Number(argv[i]!.includes('=') ? argv[i]!.split('=')[1] : argv[i + 1])
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`--${name} must be a number in ${min}..${max}`)
  return v
}
const hasArg = (name: string) => process.argv.includes(`--${name}`)
const resultFile = process.argv.find((a) => a.startsWith('--result='))?.slice(9)

const MINUTES = numArg('minutes', 20, 1, 120)
const DRAIN_MS = numArg('drain-minutes', 5, 1, 30) * 60_000
// Seconds between faults: a random gap in [FAULT_MIN, FAULT_MAX].
const FAULT_MIN = numArg('fault-min', 30, 5, 600)
const FAULT_MAX = Math.max(FAULT_MIN, numArg('fault-max', 90, 5, 600))
const t0 = Date.now()
let liveSlots: Slot[] = []
const say = (s: string) => console.log(`[soak +${Math.round((Date.now() - t0) / 1000)} s] ${s}`)

const ACCOUNTS: Array<{ name: string; plan: Plan; credits: number }> = [
  { name: 'scale-1', plan: 'scale', credits: 0 },
  { name: 'scale-2', plan: 'scale', credits: 0 },
  { name: 'launch', plan: 'launch', credits: 0 },
  // 3 audits a week and 2 credits: its later audits are refused (allowance_exhausted), and refunds must return credits.
  { name: 'free', plan: 'free', credits: 2 },
]

async function makeAgents(db: Database, pickApi: () => string | null, log: LoadLog): Promise<Agent[]> {
  const agents: Agent[] = []
  for (const a of ACCOUNTS) {
    const account = await createAccount(db.sql, a.plan, `soak ${a.name}`)
    if (a.credits) await addCredits(db.sql, account.id, a.credits, 'grant', `soak:${account.id}`)
    const key = (await createApiKey(db.sql, account.id)).plaintext
    agents.push(new Agent(a.name, a.plan, key, pickApi, log))
  }
  return agents
}

async function startSites() {
  const scan = [await spaSite(), await weakSite(), await spaSite({ slowFirstByte: true }), await slowSite(1_500)]
  const audit = [0, 1, 2].map(() => startAuditSite({ pages: 8, delayMs: 100 }))
  return {
    scanUrls: scan.map((s) => s.url),
    auditUrls: audit.map((s) => s.url),
    stop: async () => {
      for (const s of [...scan, ...audit]) await s.stop()
    },
  }
}

/** Waits until the database holds no unfinished work and the agents are done, at most until `until`. */
async function drain(db: Database, agentsDone: () => boolean, until: number): Promise<void> {
  for (let i = 0; i < 10_000 && Date.now() < until; i++) {
    const left = await unfinishedCount(db.sql).catch(() => -1)
    if (left === 0 && agentsDone()) return
    if (i % 6 === 0) say(`draining: ${left} unfinished in the database${agentsDone() ? '' : ', users still following'}`)
    await Bun.sleep(5_000)
  }
}

/** Ids the users were given that the database does not hold. */
async function missingIds(db: Database, log: LoadLog): Promise<string[]> {
  const missing: string[] = []
  const scanIds = log.scans.flatMap((s) => (s.scanId ? [s.scanId] : []))
  const auditIds = log.audits.flatMap((a) => (a.auditId ? [a.auditId] : []))
  const runIds = log.runs.flatMap((r) => (r.runId ? [r.runId] : []))
  const have = new Set(
    (
      await db.sql<{ id: string }[]>`
        SELECT id FROM scans WHERE id = ANY(${scanIds}) UNION ALL SELECT id FROM audits WHERE id = ANY(${auditIds})
        UNION ALL SELECT id FROM directory_runs WHERE id = ANY(${runIds})`
    ).map((r) => r.id),
  )
  for (const id of [...scanIds, ...auditIds, ...runIds]) if (!have.has(id)) missing.push(id)
  return missing
}

async function run(stores: SoakStores): Promise<boolean> {
  const loadStart = loadNow()
  say(`stores up in ${stores.dir}; load average ${loadStart}`)
  const db = await openDatabase({ databaseUrl: stores.pg.url, dataDir: stores.dir, max: 3 })
  const sites = await startSites()
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: stores.pg.url,
    REDIS_URL: stores.redis.url,
    REDIS_PREFIX: 'soak:',
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
  }
  const slots: Slot[] = ['api-1', 'api-2', 'crawler-1', 'crawler-2'].map((name) => ({
    name,
    role: name.startsWith('api') ? 'api' : 'crawler',
    proc: null,
    mcpUrl: null,
    lives: [],
  }))
  liveSlots = slots
  const sup = new Supervisor(slots, { env, logDir: stores.dir }, 120_000)
  const log = newLoadLog()
  const faults: Fault[] = []
  const loads: number[] = []
  let ended = false
  try {
    await Promise.all(slots.map((s) => sup.ensureUp(s)))
    say(`processes up: ${slots.map((s) => `${s.name} pid ${s.lives.at(-1)?.pid}`).join(', ')}`)
    const apis = () => slots.filter((s) => s.mcpUrl).map((s) => s.mcpUrl!)
    const pickApi = () => apis()[Math.floor(Math.random() * apis().length)] ?? null
    const agents = await makeAgents(db, pickApi, log)
    const loadUntil = Date.now() + MINUTES * 60_000
    const w: Workload = {
      scanSites: sites.scanUrls,
      auditSites: sites.auditUrls,
      loadUntil,
      followUntil: loadUntil + DRAIN_MS,
      gapMs: [4_000, 14_000],
      apiBase: () => pickApi()?.replace(/\/api\/mcp$/, '') ?? null,
    }
    const supervising = sup.run(() => ended)
    const sampling = (async () => {
      for (let i = 0; i < 100_000 && !ended; i++) {
        for (const s of slots) sampleRss(s)
        loads.push(loadavg()[0]!)
        await Bun.sleep(10_000)
      }
    })()
    let agentsDone = false
    const users = Promise.all(agents.map((a) => agentLoop(a, w, log))).finally(() => (agentsDone = true))
    await chaosLoop(sup, stores, loadUntil, faults, say, [FAULT_MIN * 1_000, FAULT_MAX * 1_000])
    await Bun.sleep(Math.max(0, loadUntil - Date.now()))
    say(`load ends (${log.scans.length} scans, ${log.audits.length} audits, ${log.runs.length} runs asked so far); draining`)
    await Promise.all(slots.map((s) => sup.ensureUp(s)))
    const drainStart = Date.now()
    await drain(db, () => agentsDone, loadUntil + DRAIN_MS)
    const drainMs = Date.now() - drainStart
    for (const s of slots) sampleRss(s)
    ended = true
    await withTimeout(Promise.all([supervising, sampling, users]), 60_000, 'loops ending').catch((e) => say(String(e)))
    const t = await tally(db.sql)
    const missing = await missingIds(db, log)
    // scan_app calls answered scanner_unavailable: what became of their scans.
    const unavailableIds = log.scans.flatMap((s) => (s.code === 'scanner_unavailable' && s.scanId ? [s.scanId] : []))
    const unavailable = Object.fromEntries(
      (
        await db.sql<{ k: string; n: number }[]>`
          SELECT status || COALESCE(': ' || (error->>'code'), '') AS k, count(*)::int AS n FROM scans WHERE id = ANY(${unavailableIds}) GROUP BY 1`
      ).map((r) => [r.k, r.n]),
    )
    const restartFailures = sup.restarts.filter((r) => r.error).map((r) => `${r.slot}: ${r.error}`)
    const text = report({
      minutes: MINUTES,
      t0,
      faults,
      log,
      tally: t,
      missing,
      unavailable,
      slots,
      loads,
      loadStart,
      drainMs,
      restartFailures,
    })
    console.log(`\n${text}\n`)
    if (resultFile)
      await Bun.write(
        resultFile,
        JSON.stringify({ text, faults, tally: t, log, slots: slots.map((s) => ({ name: s.name, lives: s.lives })) }, null, 2),
      )
    const lost = t.unfinished.scans.length + t.unfinished.audits.length + t.unfinished.runs.length + missing.length
    return lost === 0 && t.chargedTwice.length === 0 && t.refunds.wrong.length === 0 && t.creditsMismatch.length === 0
  } finally {
    ended = true
    await Promise.all(slots.map((s) => signalSlot(s, 'SIGTERM', 30_000).catch(() => 0)))
    await db.close().catch(() => {})
    await sites.stop()
  }
}

const stores = await startStores()
// Stopped from outside (Ctrl-C): the service's processes, then the stores, never left running.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, async () => {
    say(`${sig}: stopping`)
    await Promise.all(liveSlots.map((s) => signalSlot(s, 'SIGKILL').catch(() => 0)))
    await stores.stop().catch(() => {})
    process.exit(130)
  })
}
let good = false
try {
  good = await run(stores)
} catch (e) {
  console.error('soak failed:', e)
} finally {
  await stores.stop().catch(() => {})
  if (!hasArg('keep')) rmSync(stores.dir, { recursive: true, force: true })
  else say(`kept ${stores.dir} (process logs: ${join(stores.dir, '*.log')})`)
}
process.exit(good ? 0 : 1)
