// Our side of bench/crawl-throughput.ts, one crawl per process so the parent measures this process tree's
// memory alone. Same protocol as compare-lib/crawlee-runner.mjs (stdout lines starting "@@bench "):
// {"ready":...} after setup, the crawl starts when "go" arrives on stdin, then {"done":{pages,failed,ms}}.
//
//   audit (default): the real service in production mode (PostgreSQL, Redis, api and crawler workers in
//     this process, AUDIT_CONCURRENCY=N), audit_app through the MCP SDK client, get_audit polled until the
//     audit finishes. Timed from the audit_app call to the poll that sees it finished.
//   engine (--engine): crawlSite from crawler/audit/crawl.ts with a warm browser pool, without the
//     service, database or queue around it.
//
//   bun bench/crawl-ours.ts --site=URL --concurrency=N --pages=N [--engine]
import { createInterface } from 'node:readline'
import { sleep } from '../shared/lib/async.ts'
import { flag, intFlag } from './lib/stats.ts'
import { errorMessage } from '../shared/errors.ts'

const siteFlag = flag('site')
if (typeof siteFlag !== 'string') throw new Error('--site=URL is required')
const site: string = siteFlag
const concurrency = intFlag('concurrency', 1, 1, 16)
const maxPages = intFlag('pages', 200, 1, 500)
const engine = flag('engine') === true
const say = (obj: unknown) => process.stdout.write(`@@bench ${JSON.stringify(obj)}\n`)
const POLL_MS = 250
const LIMIT_MS = 15 * 60_000

async function waitForGo() {
  const lines = createInterface({ input: process.stdin })
  for await (const line of lines) if (line.trim() === 'go') return
  throw new Error('stdin closed before "go"')
}

interface Outcome {
  pages: number
  failed: number
  ms: number
  /** Epoch ms when the audit was judged; absent for the engine alone. */
  endedAt?: number
  /**
   * Epoch ms when the audit's first page started (its lanes open once the scan pages the service keeps made
   * ahead have closed); absent for the engine alone.
   */
  firstPageAt?: number
  detail?: Record<string, unknown>
}

async function viaAudit(): Promise<{ run(): Promise<Outcome>; stop(): Promise<void> }> {
  const { startService } = await import('../test/harness/service.ts')
  const { connectClient, payload } = await import('../test/harness/client.ts')
  const { settingsFromEnv } = await import('./lib/service.ts')
  const svc = await startService('production', {
    AUDIT_CONCURRENCY: String(concurrency),
    AUDIT_MAX_DURATION_S: '900',
    LOG_LEVEL: 'error',
    ...settingsFromEnv(),
  })
  const client = await connectClient(svc.mcpUrl, await svc.key('scale'))
  return {
    async run() {
      const t0 = performance.now()
      const started = await client.callTool({
        name: 'audit_app',
        arguments: { url: site, options: { maxPages, maxDepth: 10, maxDurationSeconds: 900 } },
      })
      const start = payload(started)
      if (started.isError) throw new Error(`audit_app: ${JSON.stringify(start)}`)
      let crawling = false
      for (let i = 0; performance.now() - t0 < LIMIT_MS; i++) {
        await sleep(POLL_MS)
        const got = payload(await client.callTool({ name: 'get_audit', arguments: { auditId: start.auditId } }))
        // The parent reads the tree in detail at each new peak from here on (crawl-throughput.ts).
        if (!crawling && Number(got.progress?.pagesScanned ?? 0) > 0) {
          crawling = true
          say({ crawling })
        }
        if (['completed', 'failed', 'cancelled'].includes(got.status)) {
          const ms = performance.now() - t0
          const p = got.progress ?? {}
          if (got.status !== 'completed') throw new Error(`audit ${got.status}: ${JSON.stringify(got.error ?? {})}`)
          const [first] = await svc.running.services.db.sql<{ at: Date | null }[]>`
            SELECT min(started_at) AS at FROM audit_pages WHERE audit_id = ${start.auditId}`
          return {
            ...(first?.at ? { firstPageAt: first.at.getTime() } : {}),
            pages: Number(p.pagesScanned ?? 0),
            failed: Number(p.pagesFailed ?? 0),
            ms,
            detail: { polls: i + 1, discovered: p.pagesDiscovered },
            // When the audit was judged (the service's clock, this machine's): what the tree held after it is
            // the service at rest again, its scan pages made ahead (crawl-throughput.ts reports it apart).
            ...(Number.isFinite(Date.parse(p.finishedAt)) ? { endedAt: Date.parse(p.finishedAt) } : {}),
          }
        }
      }
      throw new Error(`audit not finished within ${LIMIT_MS} ms`)
    },
    async stop() {
      await client.close().catch(() => {})
      await svc.stop()
    },
  }
}

async function viaEngine(): Promise<{ run(): Promise<Outcome>; stop(): Promise<void> }> {
  const { BrowserPool, chromiumPath } = await import('../crawler/browser.ts')
  const { crawlSite } = await import('../crawler/audit/crawl.ts')
  const { createLogger } = await import('../shared/lib/log.ts')
  const log = createLogger('error')
  const browser = new BrowserPool(chromiumPath(''), log)
  await browser.warm()
  return {
    async run() {
      const t0 = performance.now()
      let pages = 0
      let failed = 0
      const summary = await crawlSite(
        {
          startUrl: site,
          maxPages,
          maxDepth: 10,
          maxDurationMs: LIMIT_MS,
          concurrency,
          navTimeoutMs: 15_000,
          signal: new AbortController().signal,
        },
        { browser, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 8_000 },
        {
          onDiscovered: () => {},
          onPageStart: () => {},
          onPage: async (p) => {
            if (p.ok) pages++
            else failed++
          },
        },
      )
      return { pages, failed, ms: performance.now() - t0, detail: { stoppedBy: summary.stoppedBy, discovered: summary.pagesDiscovered } }
    },
    stop: () => browser.close(),
  }
}

try {
  const side = engine ? await viaEngine() : await viaAudit()
  say({ ready: true, mode: engine ? 'engine (crawlSite)' : 'audit (audit_app + get_audit, production mode)' })
  await waitForGo()
  try {
    say({ done: await side.run() })
  } finally {
    await side.stop()
  }
  process.exit(0)
} catch (e) {
  say({ error: errorMessage(e) })
  process.exit(1)
}
