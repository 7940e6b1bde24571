// Run by the SIGTERM test as its own process: crawls the site at argv[2] with a fresh browser pool and
// shuts down on SIGTERM the way a crawler pod does (abort the crawl, close the browser, exit).
import { crawlSite } from '../../../crawler/audit/crawl.ts'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { createLogger } from '../../../shared/lib/log.ts'
import { errorMessage } from '../../../shared/errors.ts'

const log = createLogger('error')
const pool = new BrowserPool(chromiumPath(''), log)
const abort = new AbortController()
process.once('SIGTERM', () => abort.abort())
let exitCode = 0
try {
  await crawlSite(
    {
      startUrl: process.argv[2]!,
      maxPages: 10_000,
      maxDepth: 20,
      maxDurationMs: 120_000,
      concurrency: 2,
      navTimeoutMs: 5_000,
      signal: abort.signal,
    },
    { browser: pool, policy: { allowPrivate: true, trustedHosts: [] }, log, trustedSpki: [], probeTimeoutMs: 5_000 },
    {
      onDiscovered: () => {},
      onPageStart: () => {},
      onPage: async (p) => void process.stdout.write(`page ${p.url}\n`),
    },
  )
} catch (e) {
  process.stderr.write(`crawl failed: ${errorMessage(e)}\n`)
  exitCode = 1
} finally {
  await pool.close()
}
process.exit(exitCode)
