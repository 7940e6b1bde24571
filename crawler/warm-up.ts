// Before a crawler process says it is ready: one whole scan of a small page it serves itself on loopback, and
// the first page made ahead for a real scan. Code that runs for the first time in a process runs slower
// (the page reader, axe's merge, the egress proxy, the probes' HTTP client, every check: about 1.7x on the
// first scan measured in bench/cold-start.ts), and the first page made ahead takes about half a second to
// open. Without this, the first user's scan paid for both (3.1-3.3x a warm one). The warm-up runs axe too:
// without it the first scan was still 2.2x a warm one (bench/cold-start.ts, production, 5 cycles), with it
// 1.15x, for 1.6 s more start-up. It waits for axe's shared finishing page as well. The warm-up's report is
// thrown away; nothing of it is stored. Bounded: WARM_UP_DEADLINE_MS, after which the process starts anyway
// (a warm-up that fails is logged, never fatal: a real scan reports its own faults).
import { runChecks } from '../shared/checks/runner.ts'
import { errorMessage } from '../shared/errors.ts'
import { within } from '../shared/lib/async.ts'
import type { Logger } from '../shared/lib/log.ts'
import { buildReport } from '../shared/report/scan-report.ts'
import type { BrowserPool } from './browser.ts'
import { gather } from './gather/index.ts'
import type { WarmPages } from './gather/warm-page.ts'

export const WARM_UP_DEADLINE_MS = 20_000

/** A page with what a scan reads: a stylesheet, scripts inline and external, a form, a cookie, an API call. */
function warmUpSite(req: Request): Response {
  const path = new URL(req.url).pathname
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Warm-up</title><meta name="description" content="A page the crawler scans once at start-up."><link rel="stylesheet" href="/s.css">
</head><body><main><h1>Warm-up</h1><form method="post" action="/login"><label>Password <input type="password" name="p"></label>
<button>Go</button></form><a href="/about">About</a></main><script src="/app.js"></script><script>document.title += ''</script></body></html>`
  if (path === '/') return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8', 'set-cookie': 'w=1; Path=/' } })
  if (path === '/s.css') return new Response('h1{font:2em sans-serif}', { headers: { 'content-type': 'text/css' } })
  if (path === '/app.js') return new Response("fetch('/api/ping').catch(()=>{})", { headers: { 'content-type': 'text/javascript' } })
  if (path === '/api/ping') return Response.json({ ok: true })
  return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } })
}

/**
 * The warm-up: a scan of warmUpSite (only its loopback address is allowed to the scan's egress proxy), its
 * checks and report built and dropped, then the wait for the slot made ahead. Returns what it took.
 */
export async function warmUp(
  deps: { browser: BrowserPool; warm: WarmPages; navTimeoutMs: number; probeTimeoutMs: number },
  log: Logger,
): Promise<{ ms: number; scanned: boolean; slotReady: boolean }> {
  const t0 = performance.now()
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: warmUpSite })
  let scanned = false
  let timings: Record<string, number> = {}
  try {
    const run = async () => {
      const url = `http://127.0.0.1:${server.port}/`
      const g = await gather(url, {
        policy: { allowPrivate: false, trustedHosts: ['127.0.0.1'] },
        browser: deps.browser,
        navTimeoutMs: deps.navTimeoutMs,
        probeTimeoutMs: deps.probeTimeoutMs,
      })
      timings = g.timings
      const t = performance.now()
      const results = runChecks(g.artifacts)
      timings.checks = Math.round(performance.now() - t)
      const meta = {
        id: 'warm-up',
        url,
        finalUrl: g.artifacts.target.finalUrl,
        createdAt: new Date().toISOString(),
        timings,
        probes: g.probes,
      }
      buildReport(meta, results)
      return true
    }
    scanned = await within(
      run().catch((e) => {
        log.warn('warm-up scan failed; starting anyway', { error: errorMessage(e) })
        return false
      }),
      WARM_UP_DEADLINE_MS,
      false,
    )
  } finally {
    server.stop(true)
  }
  const left = Math.max(0, WARM_UP_DEADLINE_MS - (performance.now() - t0))
  const tSlot = performance.now()
  const slotReady = await deps.warm.ready(left)
  const ms = Math.round(performance.now() - t0)
  log.info('warm-up done', { ms, scanned, slotReady, slotWaitMs: Math.round(performance.now() - tSlot), timings })
  return { ms, scanned, slotReady }
}
