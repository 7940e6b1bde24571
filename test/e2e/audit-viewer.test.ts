// The browserViewer link of a real audit, end to end: audit_app through the SDK client, the link opened in
// a real Chromium while the crawler crawls an animating site, frames shown, and the ended page the moment
// the audit finishes. In both modes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type Mode, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

const PAGES = 12

/** Pages that keep animating and take a moment each, so the crawl lasts long enough to be watched. */
function slowAnimatedSite() {
  const page = (i: number) => `<!doctype html><html><head><title>Page ${i}</title><style>
    #box{width:160px;height:160px;background:#36c;animation:spin .8s linear infinite}
    @keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}</style></head>
    <body><h1>Page ${i}</h1><div id="box"></div>${Array.from({ length: PAGES }, (_, j) => `<a href="/p/${j}">${j}</a>`).join(' ')}
    <img src="/slow.svg" alt=""></body></html>`
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const m = /^\/(?:p\/(\d+))?$/.exec(path)
      if (m) {
        await Bun.sleep(400)
        return new Response(page(Number(m[1] ?? 0)), { headers: { 'content-type': 'text/html' } })
      }
      if (path === '/slow.svg') {
        await Bun.sleep(600)
        return new Response('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>', {
          headers: { 'content-type': 'image/svg+xml' },
        })
      }
      return new Response('not found', { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/`, stop: () => server.stop(true) }
}

describe.each(['production', 'embedded'] as Mode[])('audit_app browserViewer (%s)', (mode) => {
  let svc: TestService
  let client: Client
  let viewerBrowser: Browser
  let site: ReturnType<typeof slowAnimatedSite>

  beforeAll(async () => {
    // A slow, always-painting site on a busy 2-core machine: pages get 20 s to load, so the crawl this test
    // watches is not ended early by its pages timing out.
    svc = await startService(mode, { AUDIT_CONCURRENCY: '1', NAV_TIMEOUT_MS: '20000' })
    client = await connectClient(svc.mcpUrl, await svc.key('scale'))
    viewerBrowser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
    site = slowAnimatedSite()
  }, machineDeadline(120_000))

  afterAll(async () => {
    await viewerBrowser?.close().catch(() => {})
    await client?.close().catch(() => {})
    await svc?.stop()
    site?.stop()
  }, 60_000)

  test('the link shows the crawl live, then "This crawl has ended" when the audit finishes', async () => {
    const started = payload(
      await client.callTool({ name: 'audit_app', arguments: { url: site.url, options: { maxPages: PAGES, maxDepth: 2 } } }),
    )
    const link = new URL(started.browserViewer as string)
    expect(link.pathname).toBe(`/viewer/${started.auditId}`)
    expect(link.hash.length).toBeGreaterThan(40)
    // The harness binds port 0, which BASE_URL cannot know in advance: open the same path and fragment
    // on the address the service really listens on.
    const url = `${svc.url}${link.pathname}${link.hash}`

    const viewer = await viewerBrowser.newPage()
    await viewer.goto(url)
    await until(async () => Number(await viewer.textContent('#frames')) >= 3, 30_000, 'frames of the crawl in the viewer', {
      everyMs: 100,
      rethrow: true,
    })
    expect(await viewer.textContent('#url')).toStartWith(site.url)

    const finished = await until(
      async () => {
        const a = payload(await client.callTool({ name: 'get_audit', arguments: { auditId: started.auditId } }))
        return ['completed', 'failed', 'cancelled'].includes(a.status) ? a : null
      },
      120_000,
      'the audit finishing',
      { everyMs: 100, rethrow: true },
    )
    expect(finished.status).toBe('completed')

    await viewer.waitForSelector('#ended:not([hidden])', { timeout: 10_000 })
    expect(await viewer.textContent('#ended h1')).toBe('This crawl has ended')

    const late = await viewerBrowser.newPage()
    await late.goto(url)
    await late.waitForSelector('#ended:not([hidden])', { timeout: 10_000 })
    expect(Number(await late.textContent('#frames'))).toBe(0)
    await Promise.all([viewer.close(), late.close()])
  }, 180_000)
})
