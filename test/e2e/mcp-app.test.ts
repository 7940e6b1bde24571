// The report as an MCP App, end to end: tools/list links scan_app, get_scan and get_audit to the ui://
// resource; resources/list and resources/read (official SDK client, running service) serve it; then this
// test plays the host in a real Chromium with the package's AppBridge, frames the resource in a sandboxed
// iframe and hands it real results: a scan_app report and a get_audit that is still running (the view polls
// get_audit through the host until the audit completes). The fixture site's title is hostile markup, and a
// tampered copy of the report adds a hostile URL and finding title: all must show as text, none may run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { chromium, type Browser, type Frame, type Page } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { machineDeadline } from '../harness/machine.ts'

const MIME = 'text/html;profile=mcp-app'
const PAGES = 3

/** Markup that would post to the host if it ever became DOM; as text it is harmless. */
const HOSTILE_TITLE =
  `<img src=x onerror="parent.postMessage('pwned-title','*')"><script>parent.postMessage('pwned-script','*')</script>` +
  ' and a title long enough to warn'
const HOSTILE_URL = `javascript:parent.postMessage('pwned-url','*')//"><svg onload="parent.postMessage('pwned-svg','*')">`

/** Three linked pages with no security headers and the hostile title, slow enough to see an audit run. */
function hostileSite() {
  const page = (i: number) =>
    `<!doctype html><html lang="en"><head><title>${HOSTILE_TITLE}</title><meta name="viewport" content="width=device-width"></head>` +
    `<body><main><h1>Page ${i}</h1>${Array.from({ length: PAGES }, (_, j) => `<a href="/p/${j}">${j}</a>`).join(' ')}</main></body></html>`
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const m = /^\/(?:p\/(\d+))?$/.exec(new URL(req.url).pathname)
      if (!m) return new Response('not found', { status: 404 })
      await Bun.sleep(300)
      return new Response(page(Number(m[1] ?? 0)), { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/`, stop: () => server.stop(true) }
}

/** The host page and its bundled AppBridge, on loopback. */
async function hostServer() {
  const built = await Bun.build({ entrypoints: [new URL('./mcp-app-host.ts', import.meta.url).pathname], target: 'browser' })
  if (!built.success) throw new Error(built.logs.join('\n'))
  const js = await built.outputs[0]!.text()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/host.js') return new Response(js, { headers: { 'content-type': 'text/javascript' } })
      if (path === '/') {
        return new Response('<!doctype html><html><head><title>host</title></head><body><script src="/host.js"></script></body></html>', {
          headers: { 'content-type': 'text/html' },
        })
      }
      return new Response('not found', { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/`, stop: () => server.stop(true) }
}

const rawCall = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }) as Promise<CallToolResult>

/** Swaps fields of a result's payload in both places a host may read it from. */
function tamper(result: CallToolResult, edit: (p: any) => void): CallToolResult {
  const p = payload(result)
  edit(p)
  const copy: CallToolResult = { ...result, content: [{ type: 'text', text: JSON.stringify(p) }] }
  if (result.structuredContent) copy.structuredContent = p
  return copy
}

describe('the report MCP App', () => {
  let svc: TestService
  let client: Client
  let browser: Browser
  let site: ReturnType<typeof hostileSite>
  let host: Awaited<ReturnType<typeof hostServer>>
  let html: string
  /** The real scan_app result, shared by the two scan tests. */
  let scanResult: CallToolResult | undefined
  const scanOnce = async () => {
    scanResult ??= await rawCall(client, 'scan_app', { url: site.url, detail: 'full' })
    expect(scanResult.isError).not.toBe(true)
    return scanResult
  }

  beforeAll(async () => {
    // Page loads get room: the suite shares the machine with other browsers.
    svc = await startService('production', { AUDIT_CONCURRENCY: '1', NAV_TIMEOUT_MS: '20000' })
    client = await connectClient(svc.mcpUrl, await svc.key('free'))
    browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
    site = hostileSite()
    host = await hostServer()
    // The document every view test frames, as a host gets it: resources/list, then resources/read.
    const { resources } = await client.listResources()
    const read = await client.readResource({ uri: resources[0]!.uri })
    html = (read.contents[0] as { text: string }).text
  }, machineDeadline(120_000))

  afterAll(async () => {
    await browser?.close().catch(() => {})
    await client?.close().catch(() => {})
    await svc?.stop()
    site?.stop()
    host?.stop()
  }, 60_000)

  test('tools/list links the report tools to the resource; resources/read serves it self-contained', async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    const { resources } = await client.listResources()
    expect(resources).toHaveLength(1)
    const uri = resources[0]!.uri
    expect(uri).toStartWith('ui://')
    expect(resources[0]!.mimeType).toBe(MIME)
    for (const name of ['scan_app', 'get_scan', 'get_audit']) {
      const tool = byName.get(name)!
      // The package's own host helper reads the link the way hosts do.
      expect(getToolUiResourceUri(tool)).toBe(uri)
      expect((tool._meta as any).ui.resourceUri).toBe(uri)
    }
    for (const name of ['audit_app', 'get_account', 'explain_check']) expect(getToolUiResourceUri(byName.get(name)!)).toBeUndefined()

    const read = await client.readResource({ uri })
    expect(read.contents).toHaveLength(1)
    const content = read.contents[0]! as { uri: string; mimeType?: string; text?: string; _meta?: any }
    expect(content.uri).toBe(uri)
    expect(content.mimeType).toBe(MIME)
    expect(content._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [] })
    expect(content.text).toBe(html)
    expect(html).toStartWith('<!doctype html>')
    // Self-contained: nothing fetched from anywhere, and a CSP that allows only its own inline blocks.
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script type="module">'])
    const outsideScript = html.replace(/<script type="module">[\s\S]*<\/script>/, '')
    expect(outsideScript).not.toMatch(/\s(?:src|href|srcset|action)=|<link\b|<iframe\b|@import|url\(/i)
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/)
    expect(csp).not.toContain('unsafe-inline')
    // A second read is the same document (built once, cached).
    const again = await client.readResource({ uri })
    expect((again.contents[0] as { text: string }).text).toBe(html)

    const missing = await client.readResource({ uri: 'ui://appaudit/nope.html' }).then(
      () => null,
      (e) => e as { code: number },
    )
    expect(missing?.code).toBe(-32002)
  }, 60_000)

  /** Opens the host page, frames the view and returns the view's frame. */
  async function openView(page: Page, id: string, serverTools = true): Promise<Frame> {
    await page.goto(host.url)
    const init = await page.evaluate(([h, i, t]) => window.host.load(h as string, i as string, t as boolean), [html, id, serverTools])
    expect(init.appName).toBe('App Audit report')
    const frame = page.frames().find((f) => f.parentFrame() === page.mainFrame())
    if (!frame) throw new Error('no view frame')
    return frame
  }

  /** Proof that nothing hostile became DOM or ran: no stray messages, no injected elements. */
  async function expectNothingRan(page: Page, frame: Frame) {
    // Give anything injected a moment to fire before looking.
    await page.waitForTimeout(300)
    expect(await page.evaluate(() => window.strayMessages)).toEqual([])
    expect(await frame.locator('#report img, #report script, #report svg, #report a, #report [onerror], #report [onload]').count()).toBe(0)
  }

  test('renders a real scan_app report: score, grade, findings with evidence and fix; hostile text stays text', async () => {
    const result = await scanOnce()
    const report = payload(result)
    expect(report.checks.find((c: any) => c.id === 'seo-title').evidence.title).toBe(HOSTILE_TITLE)

    const page = await browser.newPage()
    try {
      const frame = await openView(page, 'scan')
      await page.evaluate(([a, r]) => window.host.sendResult(a as any, r as any), [{ url: site.url }, result])
      await frame.waitForSelector('[data-testid="findings"]', { timeout: 30_000 })

      expect(await frame.textContent('.grade-letter')).toBe(report.grade)
      expect(await frame.textContent('.score')).toBe(`${report.score}/100`)
      expect(await frame.textContent('[data-testid="url"]')).toBe(report.finalUrl)
      // Every finding, in the report's order (highest impact first).
      const ids = await frame.$$eval('[data-testid="finding"]', (els) => els.map((e) => (e as HTMLElement).dataset.check))
      expect(ids).toEqual(report.advice.map((a: any) => a.checkId))
      expect(ids).toContain('csp')

      // The CSP finding: its evidence and its fix, as the report has them.
      const csp = frame.locator('[data-check="csp"]')
      await csp.locator('summary').click()
      const cspAdvice = report.advice.find((a: any) => a.checkId === 'csp')
      expect(await csp.locator('[data-testid="fix"] p').textContent()).toBe(cspAdvice.advice)
      const cspEvidence = report.checks.find((c: any) => c.id === 'csp').evidence
      const keys = await csp.locator('[data-testid="evidence"] dt').allTextContents()
      expect(keys).toEqual(Object.keys(cspEvidence))

      // The hostile title, from the real page, shown verbatim as text in the seo-title finding's evidence.
      const title = frame.locator('[data-check="seo-title"]')
      await title.locator('summary').click()
      expect(await title.locator('[data-testid="evidence"]').textContent()).toContain(HOSTILE_TITLE)
      await expectNothingRan(page, frame)

      // The view reported its size to the host (auto-resize).
      expect((await page.evaluate(() => window.host.sizes())).length).toBeGreaterThan(0)
    } finally {
      await page.close()
    }
  }, 180_000)

  test('a compact scan_app result (the default) is replaced through the host by the whole report', async () => {
    const whole = payload(await scanOnce())
    const compact = await rawCall(client, 'get_scan', { scanId: whole.id })
    expect(payload(compact).report.detail).toBe('compact')
    const page = await browser.newPage()
    const calls: string[] = []
    try {
      await page.exposeFunction('callServerTool', async (name: string, args: Record<string, unknown>) => {
        calls.push(`${name}:${String(args.detail ?? '')}`)
        return rawCall(client, name, args)
      })
      const frame = await openView(page, 'scan')
      await page.evaluate(([a, r]) => window.host.sendResult(a as any, r as any), [{ scanId: whole.id }, compact])
      // The whole report's advice, uncut, ends up in the CSP finding's fix.
      const cspAdvice = whole.advice.find((a: any) => a.checkId === 'csp').advice
      const csp = frame.locator('[data-check="csp"]')
      await frame.waitForFunction(
        (text) => document.querySelector('[data-check="csp"] [data-testid="fix"] p')?.textContent === text,
        cspAdvice,
        { timeout: 30_000 },
      )
      expect(await csp.locator('[data-testid="fix"] p').textContent()).toBe(cspAdvice)
      expect(calls).toEqual(['get_scan:full'])
    } finally {
      await page.close()
    }
  }, 180_000)

  test('a tampered report with a hostile URL and finding title is shown as text and runs nothing', async () => {
    const result = await scanOnce()
    const hostile = tamper(result, (p) => {
      p.url = HOSTILE_URL
      p.finalUrl = HOSTILE_URL
      p.grade = `<b onmouseover=alert(1)>A+</b>`
      p.advice[0].title = HOSTILE_TITLE
      p.advice[0].severity = 'high" onclick="x'
    })
    const page = await browser.newPage()
    try {
      const frame = await openView(page, 'tampered')
      await page.evaluate(([a, r]) => window.host.sendResult(a as any, r as any), [{ url: site.url }, hostile])
      await frame.waitForSelector('[data-testid="findings"]', { timeout: 30_000 })
      expect(await frame.textContent('[data-testid="url"]')).toBe(HOSTILE_URL)
      expect(await frame.textContent('.grade-letter')).toBe('<b onmouseover=alert(1)>A+</b>')
      expect(await frame.locator('.finding-title').first().textContent()).toBe(HOSTILE_TITLE)
      // A class name never comes from the report: an unknown severity gets the plain class.
      expect(await frame.locator('.sev').first().getAttribute('class')).toBe('sev')
      await expectNothingRan(page, frame)
    } finally {
      await page.close()
    }
  }, 180_000)

  test('renders a real get_audit: still running at first, polled through the host until completed, with its pages', async () => {
    const started = payload(await rawCall(client, 'audit_app', { url: site.url, options: { maxPages: PAGES, maxDepth: 1 } }))
    const first = await rawCall(client, 'get_audit', { auditId: started.auditId })
    expect(['queued', 'running']).toContain(payload(first).status)

    const page = await browser.newPage()
    const calls: string[] = []
    try {
      // The host proxies the view's tool calls to the real service, as a host with serverTools does.
      await page.exposeFunction('callServerTool', async (name: string, args: Record<string, unknown>) => {
        calls.push(`${name}:${typeof args.section === 'string' ? args.section : ''}`)
        return rawCall(client, name, args)
      })
      const frame = await openView(page, 'audit')
      await page.evaluate(([a, r]) => window.host.sendResult(a as any, r as any), [{ auditId: started.auditId }, first])
      await frame.waitForSelector('#report[data-state="queued"], #report[data-state="running"]', { timeout: 30_000 })
      expect(await frame.textContent('.kind')).toBe('Site audit')

      await frame
        .waitForSelector('#report[data-state="completed"][data-findings="complete"] [data-testid="pages"]', { timeout: 120_000 })
        .catch(async (e) => {
          const state = await frame.evaluate(() => ({
            ...document.getElementById('report')!.dataset,
            text: (document.body.textContent ?? '').slice(0, 500),
          }))
          const now = payload(await rawCall(client, 'get_audit', { auditId: started.auditId }))
          throw new Error(
            `${e.message}\nview: ${JSON.stringify(state)}\ncalls: ${calls.join(', ')}\naudit: ${now.status} ${JSON.stringify(now.progress)}`,
          )
        })
      // It polled get_audit until completed, then read the findings and pages sections of the result.
      expect(calls.filter((c) => c === 'get_audit:').length).toBeGreaterThan(0)
      expect(calls).toContain('get_audit:findings')
      expect(calls).toContain('get_audit:pages')

      const summary = payload(await rawCall(client, 'get_audit', { auditId: started.auditId }))
      expect(summary.status).toBe('completed')
      const findings = payload(await rawCall(client, 'get_audit', { auditId: started.auditId, section: 'findings', limit: 100 }))
      const pages = payload(await rawCall(client, 'get_audit', { auditId: started.auditId, section: 'pages', limit: 100 }))
      expect(findings.nextCursor).toBeNull()
      expect(await frame.textContent('.grade-letter')).toBe(summary.result.grade)
      expect(await frame.textContent('.score')).toBe(`${summary.result.score}/100`)
      const ids = await frame.$$eval('[data-testid="finding"]', (els) => els.map((e) => (e as HTMLElement).dataset.check))
      expect(ids).toEqual(findings.items.map((f: any) => f.checkId))
      // A merged finding lists the pages it was found on, and carries its evidence and fix.
      const csp = frame.locator('[data-check="csp"]')
      await csp.locator('summary').click()
      const cspFinding = findings.items.find((f: any) => f.checkId === 'csp')
      expect(cspFinding.pageCount).toBe(PAGES)
      expect(await csp.locator('.pages-count').textContent()).toBe(`${cspFinding.pageCount} pages`)
      expect((await csp.locator('.finding-pages li').allTextContents()).sort()).toEqual([...cspFinding.pages].sort())
      expect(await csp.locator('[data-testid="fix"] p').textContent()).toBe(cspFinding.advice)
      expect(await csp.locator('[data-testid="evidence"] dt').count()).toBe(Object.keys(cspFinding.evidence).length)
      // The pages table: every crawled page.
      const rows = await frame.locator('[data-testid="pages"] tbody tr td.url').allTextContents()
      expect(rows.sort()).toEqual(pages.items.map((p: any) => p.url).sort())
      expect(rows).toHaveLength(PAGES)
      // The hostile title reached the audit's findings too, and stayed text.
      const title = frame.locator('[data-check="seo-title"]')
      await title.locator('summary').click()
      expect(await title.locator('[data-testid="evidence"]').textContent()).toContain(HOSTILE_TITLE)
      await expectNothingRan(page, frame)

      // A host that cannot call tools shows get_audit's summary as it is: top findings, marked as a summary.
      const plain = await browser.newPage()
      try {
        const summaryFrame = await openView(plain, 'summary', false)
        const summaryResult = await rawCall(client, 'get_audit', { auditId: started.auditId })
        await plain.evaluate(([a, r]) => window.host.sendResult(a as any, r as any), [{ auditId: started.auditId }, summaryResult])
        await summaryFrame.waitForSelector('#report[data-findings="summary"] [data-testid="summary-note"]', { timeout: 30_000 })
        expect(await summaryFrame.textContent('.grade-letter')).toBe(summary.result.grade)
        const top = await summaryFrame.$$eval('[data-testid="finding"]', (els) => els.map((e) => (e as HTMLElement).dataset.check))
        expect(top).toEqual(summary.result.topFindings.map((f: any) => f.checkId))
        expect(await summaryFrame.locator('[data-testid="fix"]').count()).toBe(0)
        await expectNothingRan(plain, summaryFrame)
      } finally {
        await plain.close()
      }
    } finally {
      await page.evaluate(() => window.host.close()).catch(() => {})
      await page.close()
    }
  }, 300_000)
})
