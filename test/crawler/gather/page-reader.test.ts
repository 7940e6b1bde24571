// readDocument (crawler/gather/page-reader.ts) reads in one plain evaluation what page.content(), page.title()
// and page.$$eval('script:not([src])') read through Playwright's utility world and injected script: the same
// values, on documents with a doctype, without one, with open and closed shadow roots, and with more inline
// scripts than are kept. Real Chromium.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { readDocument, scanContextOptions } from '../../../crawler/gather/page-reader.ts'
import { startEgressProxy, type EgressProxy } from '../../../shared/egress/proxy.ts'
import { createLogger } from '../../../shared/lib/log.ts'

const LIMITS = { html: 512 * 1024, scripts: 50, elements: 20_000 }

const PAGES: Record<string, string> = {
  doctype: `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html><head><title> Spaced   title &amp; more </title><script>var a = 1</script></head>
<body><p>x</p><script type="module">import("/m.js")</script><script src="/ext.js"></script></body></html>`,
  'no doctype': `<html><head><title>Quirks</title></head><body><script>window.q = "</p>"</script></body></html>`,
  'shadow roots': `<!doctype html><html><head><title>Shadows</title></head><body>
<div id="open"></div><div id="closed"></div><script>var before = 1</script>
<script>
  document.getElementById('open').attachShadow({ mode: 'open' }).innerHTML = '<script>var inOpen = 1<' + '/script><p>open</p>'
  document.getElementById('closed').attachShadow({ mode: 'closed' }).innerHTML = '<script>var inClosed = 1<' + '/script>'
</script><script>var after = 1</script></body></html>`,
  'many scripts': `<!doctype html><html><head><title>Many</title></head><body>${Array.from(
    { length: 70 },
    (_, i) => `<script>var s${i} = ${i}</script>`,
  ).join('')}</body></html>`,
  'changed by script': `<!doctype html><html><head><title>Before</title></head><body>
<script>document.title = 'After'; document.body.insertAdjacentHTML('beforeend', '<section>added</section>')</script></body></html>`,
}

let pool: BrowserPool
let context: BrowserContext
let page: Page
let server: ReturnType<typeof Bun.serve>
let proxy: EgressProxy

beforeAll(async () => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const name = decodeURIComponent(new URL(req.url).pathname.slice(1))
      const body = PAGES[name]
      return body === undefined
        ? new Response('', { status: 404 })
        : new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  pool = new BrowserPool(chromiumPath(''), createLogger('error'))
  // As a scan loads pages: through the egress proxy (the pool's browser sends nothing straight out).
  proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
  context = await pool.newContext(scanContextOptions(proxy))
  page = await context.newPage()
}, 60_000)
afterAll(async () => {
  await context?.close()
  await pool?.close()
  await proxy?.stop()
  server?.stop(true)
})

describe('readDocument', () => {
  for (const name of Object.keys(PAGES)) {
    test(`reads what content(), title() and $$eval read: ${name}`, async () => {
      await page.goto(`http://127.0.0.1:${server.port}/${encodeURIComponent(name)}`)
      const ours = await page.evaluate(readDocument, LIMITS)
      const [html, title, inline] = await Promise.all([
        page.content(),
        page.title(),
        page.$$eval('script:not([src])', (els) => els.slice(0, 50).map((e) => e.textContent ?? '')),
      ])
      expect(ours.html).toBe(html)
      expect(ours.title).toBe(title)
      // The same scripts; Playwright lists a shadow root's right after its host, readDocument after the document's.
      expect([...ours.inline].sort()).toEqual([...inline].sort())
      if (name === 'shadow roots') {
        // A closed root is not the page's to read, for neither of them.
        expect(ours.inline).toContain('var inOpen = 1')
        expect(ours.inline).not.toContain('var inClosed = 1')
      }
      if (name === 'many scripts') expect(ours.inline).toHaveLength(50)
    })
  }

  test('cuts the document at the limit', async () => {
    await page.goto(`http://127.0.0.1:${server.port}/doctype`)
    const ours = await page.evaluate(readDocument, { ...LIMITS, html: 40 })
    expect(ours.html).toBe((await page.content()).slice(0, 40))
  })
})
