// How fast audit_app answers under load: 20 callers at once (each its own account and MCP session, as 20
// agents would be), each starting audits one after another through the official SDK client against the
// service in production mode (PostgreSQL, Redis; ROLE=api, so the audits queue and no browser competes for
// the CPU). Each call checks the target (it must resolve and answer: a local site), charges the allowance in
// a transaction, mints the live-viewer link and queues the audit. Reference in the same run: the same 20
// callers calling get_account (one database read through the same MCP path).
//
// Layout: the service and the target site each run in a process of their own and this process holds only
// the callers, as in real use (callers never share the api's event loop). `--inproc` runs all three in
// this process, the layout of the first version of this bench: there the callers' own CPU (20 SDK clients)
// queues on the same thread as the server's, and latency grows with it.
//
//   bun bench/audit-start-latency.ts            20 callers x 10 audits, after a warm-up
//   bun bench/audit-start-latency.ts --quick    20 callers x 5
//   options: --callers=N --calls=N --inproc --result=FILE
//            --profile-dir=DIR (Bun CPU profile of the service's process, written when it stops)
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { createAccount, createApiKey } from '../shared/db/accounts.ts'
import { connectClient } from '../test/harness/client.ts'
import { cpuMs, runAsChild, spawnChild } from './lib/child.ts'
import { startBenchService } from './lib/service.ts'
import { flag, fmtMs, fmtRatio, intFlag, type Summary, table, writeResult } from './lib/stats.ts'
import { errorMessage } from '../shared/errors.ts'

export const TARGET_P99_MS = 100

const quick = flag('quick') === true
const callers = intFlag('callers', 20, 1, 100)
const calls = intFlag('calls', quick ? 5 : 10, 1, 20)
const inproc = flag('inproc') === true

export interface AuditStartResult {
  bench: 'audit-start-latency'
  callers: number
  calls: number
  load: number[]
  layout: 'processes' | 'inproc'
  auditApp: Summary & { p99: number }
  getAccount: Summary & { p99: number }
  /** CPU time of the service's process per call (processes layout only). */
  serviceCpuMsPerCall: { auditApp: number; getAccount: number }
  targetP99Ms: number
}

function stats(samples: number[]): Summary & { p99: number } {
  const s = [...samples].sort((a, b) => a - b)
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN
  const mid = s.length >> 1
  return {
    n: s.length,
    min: s[0] ?? NaN,
    median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2,
    p90: at(90),
    p99: at(99),
    max: s[s.length - 1] ?? NaN,
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
  }
}

/** Every caller makes `n` calls one after another, all callers at once; the latency of each call. */
async function round(clients: Client[], n: number, call: (c: Client, i: number) => Promise<void>): Promise<number[]> {
  const samples: number[] = []
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < n; i++) {
        const t0 = performance.now()
        await call(c, i)
        samples.push(performance.now() - t0)
      }
    }),
  )
  return samples
}

interface ServiceInfo {
  mcpUrl: string
  keys: string[]
}

/** The service in production mode, with one account (plan scale) and key per caller. */
async function startService(n: number) {
  const svc = await startBenchService('production', { ROLE: 'api', LOG_LEVEL: 'error' })
  const sql = svc.running.services.db.sql
  const keys: string[] = []
  for (let i = 0; i < n; i++) keys.push((await createApiKey(sql, (await createAccount(sql, 'scale')).id)).plaintext)
  return { info: { mcpUrl: svc.mcpUrl, keys } satisfies ServiceInfo, stop: () => svc.stop() }
}

/** The site the audits are started on: one small page. */
function startSite() {
  const site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response('<!doctype html><title>Site</title><p>Hello</p>', { headers: { 'content-type': 'text/html' } }),
  })
  return { info: { url: `http://127.0.0.1:${site.port}/` }, stop: async () => void site.stop(true) }
}

const serve = flag('serve')
if (serve === 'service' || serve === 'site') {
  const s = serve === 'service' ? await startService(callers) : startSite()
  await runAsChild(s.info, s.stop)
}

const load = loadavg()
console.log(
  `audit-start-latency: ${callers} callers x ${calls} calls; layout ${inproc ? 'one process' : 'service, site and callers in processes of their own'}; ` +
    `load average ${load.map((l) => l.toFixed(2)).join(' ')}`,
)
const stops: Array<() => Promise<void>> = []
const clients: Client[] = []
let result: AuditStartResult
try {
  let service: ServiceInfo
  let servicePid = Number.NaN
  let siteUrl: string
  if (inproc) {
    const s = await startService(callers)
    stops.push(s.stop)
    service = s.info
    const site = startSite()
    stops.push(site.stop)
    siteUrl = site.info.url
  } else {
    const profileDir = flag('profile-dir')
    const bunArgs = typeof profileDir === 'string' ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${profileDir}`] : []
    const s = await spawnChild<ServiceInfo>(import.meta.path, ['--serve=service', `--callers=${callers}`], {
      readyTimeoutMs: 60_000,
      bunArgs,
    })
    stops.push(s.stop)
    service = s.info
    servicePid = s.pid
    const site = await spawnChild<{ url: string }>(import.meta.path, ['--serve=site'], { readyTimeoutMs: 30_000 })
    stops.push(site.stop)
    siteUrl = site.info.url
  }
  for (const key of service.keys) clients.push(await connectClient(service.mcpUrl, key))
  const tool = (name: string, args: Record<string, unknown>) => async (c: Client) => {
    const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`)
  }
  /** A round, with the service's CPU time per call. */
  const measured = async (call: (c: Client) => Promise<void>) => {
    const cpu0 = await cpuMs(servicePid)
    const samples = await round(clients, calls, call)
    return { samples, cpuPerCall: ((await cpuMs(servicePid)) - cpu0) / samples.length }
  }
  const audit = tool('audit_app', { url: siteUrl, options: { maxPages: 1 } })
  // Warm-up: one of each per caller (connections, prepared statements, the JIT).
  await round(clients, 1, tool('get_account', {}))
  await round(clients, 1, audit)
  const a = await measured(audit)
  const g = await measured(tool('get_account', {}))
  result = {
    bench: 'audit-start-latency',
    callers,
    calls,
    load,
    layout: inproc ? 'inproc' : 'processes',
    auditApp: stats(a.samples),
    getAccount: stats(g.samples),
    serviceCpuMsPerCall: { auditApp: a.cpuPerCall, getAccount: g.cpuPerCall },
    targetP99Ms: TARGET_P99_MS,
  }
} finally {
  for (const c of clients) await c.close().catch(() => {})
  for (const stop of stops.reverse()) await stop().catch((e) => console.error(`stop failed: ${errorMessage(e)}`))
}

const row = (name: string, s: Summary & { p99: number }) => [name, String(s.n), fmtMs(s.median), fmtMs(s.p90), fmtMs(s.p99), fmtMs(s.max)]
console.log(
  table([
    ['call', 'n', 'median', 'p90', 'p99', 'max'],
    row('audit_app', result.auditApp),
    row('get_account (reference)', result.getAccount),
  ]),
)
if (!inproc) {
  const cpu = result.serviceCpuMsPerCall
  console.log(`service CPU per call: audit_app ${cpu.auditApp.toFixed(2)} ms, get_account ${cpu.getAccount.toFixed(2)} ms`)
}
console.log(
  `audit_app / get_account: median ${fmtRatio(result.auditApp.median / result.getAccount.median)}, p99 ${fmtRatio(result.auditApp.p99 / result.getAccount.p99)}\n` +
    `target: audit_app p99 < ${TARGET_P99_MS} ms under ${callers} callers: ${result.auditApp.p99 < TARGET_P99_MS ? 'met' : 'MISSED'}; ` +
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
)
await writeResult(result)
process.exit(0)
