// Crawlee's PlaywrightCrawler under node, as the reference of bench/crawl-throughput.ts. One crawl per
// process, so the parent measures this process tree's memory alone. Protocol (stdout lines starting
// "@@bench "): {"ready":...} after setup; the crawl starts when "go" arrives on stdin; then
// {"done":{pages,failed,ms}}. Storage goes to CRAWLEE_STORAGE_DIR (a temporary directory the parent
// removes), purged at start.
//
//   node crawlee-runner.mjs '{"url":"http://127.0.0.1:PORT/","concurrency":2,"maxPages":200,
//                             "executablePath":"/usr/bin/chromium","args":["--headless",...]}'
import { Configuration, PlaywrightCrawler } from '@crawlee/playwright'
import { chromium } from 'playwright-core'
import { createInterface } from 'node:readline'

const spec = JSON.parse(process.argv[2] ?? '{}')
const say = (obj) => process.stdout.write(`@@bench ${JSON.stringify(obj)}\n`)

let pages = 0
let failed = 0
const config = new Configuration({ purgeOnStart: true, persistStorage: false, logLevel: 3 /* WARNING */ })
const crawler = new PlaywrightCrawler(
  {
    launchContext: {
      launcher: chromium,
      launchOptions: { executablePath: spec.executablePath, args: spec.args, headless: true },
    },
    headless: true,
    minConcurrency: spec.concurrency,
    maxConcurrency: spec.concurrency,
    maxRequestsPerCrawl: spec.maxPages,
    maxRequestRetries: 1,
    navigationTimeoutSecs: 15,
    requestHandlerTimeoutSecs: 30,
    // No session rotation, fingerprints or block detection: a plain crawl, as ours is.
    useSessionPool: false,
    persistCookiesPerSession: false,
    retryOnBlocked: false,
    browserPoolOptions: { useFingerprints: false },
    async requestHandler({ enqueueLinks }) {
      pages++
      await enqueueLinks({ strategy: 'same-origin' })
    },
    failedRequestHandler() {
      failed++
    },
  },
  config,
)

say({
  ready: true,
  node: process.versions.node,
  crawleeVersion: (await import('@crawlee/playwright/package.json', { with: { type: 'json' } })).default.version,
})
const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  if (line.trim() !== 'go') continue
  const t0 = performance.now()
  try {
    await crawler.run([spec.url])
    say({ done: { pages, failed, ms: performance.now() - t0 } })
  } catch (e) {
    say({ error: e instanceof Error ? e.message : String(e) })
  }
  break
}
await crawler.teardown?.().catch(() => {})
process.exit(0)
