// A multi-replica rehearsal on this machine: two api processes and two crawler processes on loopback, with
// the real PostgreSQL and Redis, behind a small round-robin proxy that sends each request to the next api
// (as a Kubernetes Service spreads connections). What a deployment with several pods must get right:
//   - an MCP session opened on one api keeps working while its requests alternate between them;
//   - a stream dropped on one api is resumed with Last-Event-ID on the other and gets the rest;
//   - a viewer on either api sees frames from a crawl on either crawler;
//   - a crawler killed with SIGKILL mid-audit is taken over, nothing lost and nothing charged twice;
//   - an api restarted mid-scan loses nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ChildProcess } from 'node:child_process'
import { boot, type Running } from '../../server/boot.ts'
import { createAccount, createApiKey } from '../../shared/db/accounts.ts'
import type { Sql } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { auditEnded, connectClient, MCP_HEADERS, ok } from '../harness/client.ts'
import { exited, killChildren, spawnCrawler } from '../harness/processes.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until, within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

let a: TestService
let b: Running
let bPort = 0
let sql: Sql
let proxy: ReturnType<typeof roundRobin>
const crawlers: ChildProcess[] = []
const sites: AuditSite[] = []

/** Each request to the next api in turn; bodies and answers streamed through. Counts what each api served. */
function roundRobin(targets: () => string[]) {
  let next = 0
  const served = new Map<string, number>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 120,
    async fetch(req) {
      const list = targets()
      const target = list[next++ % list.length]!
      served.set(target, (served.get(target) ?? 0) + 1)
      const url = new URL(req.url)
      const headers = new Headers(req.headers)
      headers.set('host', new URL(target).host)
      try {
        return await fetch(`${target}${url.pathname}${url.search}`, {
          method: req.method,
          headers,
          body: req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer(),
          redirect: 'manual',
          signal: req.signal,
        })
      } catch {
        return new Response('upstream unavailable', { status: 502 })
      }
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, served, stop: () => server.stop(true) }
}

async function startB(port = 0) {
  b = await boot({ ...a.running.services.config, ROLE: 'api', PORT: port }, createLogger('error'))
  bPort = b.port!
}

beforeAll(async () => {
  // Api A (with no crawler of its own) and api B share PostgreSQL and Redis; two crawler processes do the work.
  a = await startService('production', { ROLE: 'api', JOB_CLAIM_IDLE_MS: '4000', RECOVERY_GRACE_S: '2' })
  sql = a.running.services.db.sql
  await startB()
  for (let i = 0; i < 2; i++)
    crawlers.push(spawnCrawler(a, { JOB_CLAIM_IDLE_MS: '4000', RECOVERY_INTERVAL_MS: '2000', AUDIT_CONCURRENCY: '1' }))
  proxy = roundRobin(() => [a.url, `http://127.0.0.1:${bPort}`])
  // Both crawlers up: each holds a consumer of the scan stream.
  const scan = await startAuditSite({ pages: 1 })
  sites.push(scan)
  const key = await a.key('free')
  const c = await connectClient(`${a.url}/api/mcp`, key)
  await ok(c, 'scan_app', { url: scan.url })
  await c.close()
}, machineDeadline(120_000))

afterAll(async () => {
  killChildren()
  proxy?.stop()
  await b?.stop().catch(() => {})
  await a?.stop()
  for (const s of sites) await s.stop()
}, 60_000)

async function account(plan: 'free' | 'scale' = 'scale') {
  const acct = await createAccount(sql, plan)
  return { accountId: acct.id, key: (await createApiKey(sql, acct.id)).plaintext }
}

describe('two apis and two crawlers behind a round-robin proxy', () => {
  test('an MCP session opened on one api keeps working while its requests alternate', async () => {
    const { key } = await account()
    const before = new Map(proxy.served)
    const c = await connectClient(`${proxy.url}/api/mcp`, key)
    const site = startAuditSite({ pages: 1 })
    sites.push(site)
    for (let i = 0; i < 3; i++) expect((await ok(c, 'get_account', {})).plan).toBe('scale')
    const tools = await c.listTools()
    expect(tools.tools.length).toBe(18)
    const report = await ok(c, 'scan_app', { url: site.url })
    expect(typeof report.score).toBe('number')
    await c.close()
    // Both apis answered requests of the one session.
    for (const target of [a.url, `http://127.0.0.1:${bPort}`])
      expect((proxy.served.get(target) ?? 0) - (before.get(target) ?? 0)).toBeGreaterThan(1)
  }, 60_000)

  test('a stream dropped on one api is resumed with Last-Event-ID on the other and gets the rest', async () => {
    const { key } = await account()
    const site = startAuditSite({ pages: 1, delayMs: 1_500 })
    sites.push(site)
    const ctrl = new AbortController()
    const res = await fetch(`${a.url}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'scan_app', arguments: { url: site.url }, _meta: { progressToken: 'p7' } },
      }),
      signal: ctrl.signal,
    })
    const first = await readUntil(res, (text) => /^id: /m.test(text))
    ctrl.abort()
    const lastId = [...first.matchAll(/^id: (.*)$/gm)].at(-1)![1]!
    const resumed = await fetch(`http://127.0.0.1:${bPort}/api/mcp`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'last-event-id': lastId },
    })
    expect(resumed.status).toBe(200)
    const rest = await readUntil(resumed, (text) => text.includes('"result"'), 60_000)
    const answer = JSON.parse(/^data: (.*"result".*)$/m.exec(rest)![1]!)
    expect(answer.id).toBe(7)
    expect(typeof JSON.parse(answer.result.content[0].text).score).toBe('number')
  }, 90_000)

  test('a viewer on either api sees the frames of a crawl on either crawler', async () => {
    const { key } = await account()
    const site = startAuditSite({ pages: 6, delayMs: 400 })
    sites.push(site)
    const c = await connectClient(`${proxy.url}/api/mcp`, key)
    const started = await ok(c, 'audit_app', { url: site.url, options: { maxPages: 6, maxDepth: 2 } })
    const link = new URL(started.browserViewer)
    const token = decodeURIComponent(link.hash.slice(1))
    const watch = (origin: string) => {
      const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/viewer/${started.auditId}/ws`, { headers: { origin } } as never)
      const frames: string[] = []
      ws.onopen = () => ws.send(token)
      ws.onmessage = (ev) => {
        if (String(ev.data).startsWith('{"type":"frame"')) frames.push(String(ev.data))
      }
      return { ws, frames }
    }
    const onA = watch(a.url)
    const onB = watch(`http://127.0.0.1:${bPort}`)
    await until(() => onA.frames.length >= 2 && onB.frames.length >= 2, 60_000, 'frames on both apis', { everyMs: 100 })
    const done = await auditEnded(c, started.auditId, 90_000, 'the audit to finish')
    expect(done.status).toBe('completed')
    onA.ws.close()
    onB.ws.close()
    await c.close()
  }, 150_000)

  test('a crawler killed with SIGKILL mid-audit is taken over: every page once, charged once, not refunded', async () => {
    const { accountId, key } = await account()
    const site = startAuditSite({ pages: 10, delayMs: 500 })
    sites.push(site)
    const c = await connectClient(`${proxy.url}/api/mcp`, key)
    const started = await ok(c, 'audit_app', { url: site.url, options: { maxPages: 10, maxDepth: 2 } })
    const holder = await until(
      async () => {
        const [r] = await sql<{ worker: string | null; n: number }[]>`
          SELECT a.worker, (SELECT count(*)::int FROM audit_pages p WHERE p.audit_id = a.id) AS n FROM audits a WHERE a.id = ${started.auditId}`
        return r?.worker && r.n >= 2 && r.worker
      },
      60_000,
      'the audit under way on a crawler',
      { everyMs: 100 },
    )
    const victim = crawlers.find((p) => holder.includes(`-${p.pid}-`))!
    expect(victim).toBeDefined()
    process.kill(-victim.pid!, 'SIGKILL')
    await exited(victim)
    const done = await auditEnded(c, started.auditId, 120_000, 'the audit to be taken over and finish')
    expect(done.status).toBe('completed')
    expect(done.attempts).toBe(2)
    const pages = await sql<{ url: string }[]>`SELECT url FROM audit_pages WHERE audit_id = ${started.auditId}`
    expect(pages.map((p) => p.url).sort()).toEqual([...site.pages].sort())
    const ledger = await sql<{ reason: string }[]>`SELECT reason FROM ledger WHERE audit_id = ${started.auditId}`
    expect(ledger.map((l) => l.reason)).toEqual(['audit'])
    expect((await getBalance(sql, accountId)).used).toBe(1)
    await c.close()
    // The survivor carries on alone; a new crawler takes the dead one's place for the next test.
    crawlers.push(spawnCrawler(a, { JOB_CLAIM_IDLE_MS: '4000', RECOVERY_INTERVAL_MS: '2000', AUDIT_CONCURRENCY: '1' }))
  }, 180_000)

  test('an api restarted mid-scan loses nothing: the scan finishes, its result is readable on either api, the session goes on', async () => {
    const { key } = await account('free')
    const site = startAuditSite({ pages: 1, delayMs: 2_500 })
    sites.push(site)
    const onB = await connectClient(`http://127.0.0.1:${bPort}/api/mcp`, key)
    const pending = onB.callTool({ name: 'scan_app', arguments: { url: site.url } }, undefined, { timeout: 60_000 }).catch((e: Error) => e)
    // The scan is recorded and queued: api B goes away under it and comes back on the same port.
    const scanId = await until(
      async () => (await sql<{ id: string }[]>`SELECT id FROM scans WHERE url = ${site.url}`)[0]?.id,
      20_000,
      'the scan recorded',
      { everyMs: 50 },
    )
    const port = bPort
    await within(b.stop(), 30_000, 'api B to stop')
    await pending
    await startB(port)
    const viaA = await connectClient(`${a.url}/api/mcp`, key)
    const scan = await until(
      async () => {
        const s = await ok(viaA, 'get_scan', { scanId })
        return s.status === 'completed' && s
      },
      60_000,
      'the scan to complete',
      { everyMs: 250 },
    )
    expect(typeof scan.report.score).toBe('number')
    // The restarted api reads it too, for a new client and through the proxy.
    const again = await connectClient(`http://127.0.0.1:${bPort}/api/mcp`, key)
    expect((await ok(again, 'get_scan', { scanId })).status).toBe('completed')
    await Promise.all([onB.close().catch(() => {}), viaA.close(), again.close()])
  }, 120_000)
})

/** The text of an SSE response until `enough` holds (or the stream ends), within a deadline. */
async function readUntil(res: Response, enough: (text: string) => boolean, ms = 30_000): Promise<string> {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Date.now() + ms
  while (Date.now() < deadline && !enough(text)) {
    const { value, done } = await within(reader.read(), Math.max(1, deadline - Date.now()), 'an SSE event')
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel().catch(() => {})
  return text
}
