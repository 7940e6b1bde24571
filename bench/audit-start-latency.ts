// How fast audit_app answers under load: 20 callers at once (each its own account and MCP session, as 20
// agents would be), each starting audits one after another through the official SDK client against the
// service in production mode (PostgreSQL, Redis; ROLE=api, so the audits queue and no browser competes for
// the CPU). Each call checks the target (it must resolve and answer: a local site), charges the allowance in
// a transaction, mints the live-viewer link and queues the audit. Reference in the same run: the same 20
// callers calling get_account (one database read through the same MCP path).
//
//   bun bench/audit-start-latency.ts            20 callers x 10 audits, after a warm-up
//   bun bench/audit-start-latency.ts --quick    20 callers x 5
//   options: --callers=N --calls=N --result=FILE
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadavg } from 'node:os'
import { createAccount, createApiKey } from '../shared/db/accounts.ts'
import { connectClient } from '../test/harness/client.ts'
import { startBenchService } from './lib/service.ts'
import { flag, fmtMs, fmtRatio, intFlag, type Summary, table, writeResult } from './lib/stats.ts'

export const TARGET_P99_MS = 100

const quick = flag('quick') === true
const callers = intFlag('callers', 20, 1, 100)
const calls = intFlag('calls', quick ? 5 : 10, 1, 20)

export interface AuditStartResult {
  bench: 'audit-start-latency'
  callers: number
  calls: number
  load: number[]
  auditApp: Summary & { p99: number }
  getAccount: Summary & { p99: number }
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

const load = loadavg()
console.log(`audit-start-latency: ${callers} callers x ${calls} calls; load average ${load.map((l) => l.toFixed(2)).join(' ')}`)
const svc = await startBenchService('production', { ROLE: 'api', LOG_LEVEL: 'error' })
const site = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response('<!doctype html><title>Site</title><p>Hello</p>', { headers: { 'content-type': 'text/html' } }),
})
const clients: Client[] = []
let result: AuditStartResult
try {
  const sql = svc.running.services.db.sql
  for (let i = 0; i < callers; i++) {
    const account = await createAccount(sql, 'scale')
    clients.push(await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext))
  }
  const url = `http://127.0.0.1:${site.port}/`
  const tool = (name: string, args: Record<string, unknown>) => async (c: Client) => {
    const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`)
  }
  // Warm-up: one of each per caller (connections, prepared statements, the JIT).
  await round(clients, 1, tool('get_account', {}))
  await round(clients, 1, tool('audit_app', { url, options: { maxPages: 1 } }))
  const auditApp = stats(await round(clients, calls, tool('audit_app', { url, options: { maxPages: 1 } })))
  const getAccount = stats(await round(clients, calls, tool('get_account', {})))
  result = { bench: 'audit-start-latency', callers, calls, load, auditApp, getAccount, targetP99Ms: TARGET_P99_MS }
} finally {
  for (const c of clients) await c.close().catch(() => {})
  site.stop(true)
  await svc.stop()
}

const row = (name: string, s: Summary & { p99: number }) => [name, String(s.n), fmtMs(s.median), fmtMs(s.p90), fmtMs(s.p99), fmtMs(s.max)]
console.log(
  table([
    ['call', 'n', 'median', 'p90', 'p99', 'max'],
    row('audit_app', result.auditApp),
    row('get_account (reference)', result.getAccount),
  ]),
)
console.log(
  `audit_app / get_account: median ${fmtRatio(result.auditApp.median / result.getAccount.median)}, p99 ${fmtRatio(result.auditApp.p99 / result.getAccount.p99)}\n` +
    `target: audit_app p99 < ${TARGET_P99_MS} ms under ${callers} callers: ${result.auditApp.p99 < TARGET_P99_MS ? 'met' : 'MISSED'}; ` +
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
)
await writeResult(result)
process.exit(0)
