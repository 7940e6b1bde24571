// The Content-Security-Policy a scan advises, applied for real: a fixture page with inline scripts, an inline
// event handler, style blocks and attributes, and a script, stylesheet, image, iframe and fetch from a second
// loopback origin is scanned by the real gatherer (Chromium through the egress proxy); the policy computed
// from that scan is then sent with the page and Chromium must report no violation while the page still
// works. A control run with the hashes taken out must be blocked, so the listeners are known to see.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { chromium, type Browser } from 'playwright-core'
import { BrowserPool, CHROMIUM_ARGS, chromiumPath } from '../../crawler/browser.ts'
import { gather } from '../../crawler/gather/index.ts'
import { getCheck } from '../../shared/checks/registry.ts'
import { runChecks } from '../../shared/checks/runner.ts'
import { asPageSources, buildCsp, type CspAdvice } from '../../shared/checks/util/csp-builder.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { buildReport } from '../../shared/report/scan-report.ts'

const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

let assets: ReturnType<typeof Bun.serve>
let site: ReturnType<typeof Bun.serve>
let browser: Browser
const pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
/** The policy the site sends, set per test; {NONCE} in it is replaced by a fresh nonce per response. */
let sentPolicy: string | null = null
/** Whether the page's first inline script carries a per-response token (a page that needs a nonce). */
let dynamicPage = false

const assetOrigin = () => `http://localhost:${assets.port}`
const siteUrl = () => `http://127.0.0.1:${site.port}/`

function pageHtml(nonce: string | null): string {
  const B = assetOrigin()
  const n = nonce ? ` nonce="${nonce}"` : ''
  const token = dynamicPage ? `window.__token = '${randomBytes(8).toString('hex')}';` : ''
  return `<!doctype html><html><head><meta charset="utf-8"><title>Fixture</title>
<link rel="stylesheet" href="${B}/style.css">
<style>#styled { color: rgb(0, 128, 0); }</style>
<script${n}>${token}document.documentElement.dataset.head = 'ran'</script>
<script type="application/json" id="data">{"not": "code"}</script>
<script src="${B}/lib.js"${n}></script>
</head><body>
<p id="out">waiting</p><p id="lib">waiting</p><p id="styled">styled</p>
<p id="attr" style="color: rgb(255, 0, 0)">attr</p>
<button id="btn" onclick="document.getElementById('out').dataset.clicked = 'yes'">go</button>
<img id="img" src="${B}/pixel.png" alt="">
<iframe id="frame" src="${B}/frame.html" title="frame"></iframe>
<p id="fetched">waiting</p>
<script${n}>
document.getElementById('out').textContent = 'inline ran'
fetch('${B}/data.json').then((r) => r.json()).then((d) => { document.getElementById('fetched').textContent = d.message })
</script>
</body></html>`
}

beforeAll(async () => {
  const cors = { 'access-control-allow-origin': '*' }
  assets = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/lib.js')
        return new Response(
          "document.addEventListener('DOMContentLoaded', () => { document.getElementById('lib').textContent = 'external ran' })",
          {
            headers: { 'content-type': 'text/javascript', ...cors },
          },
        )
      if (path === '/style.css') return new Response('#lib { font-weight: 700; }', { headers: { 'content-type': 'text/css', ...cors } })
      if (path === '/pixel.png') return new Response(PIXEL, { headers: { 'content-type': 'image/png', ...cors } })
      if (path === '/data.json') return Response.json({ message: 'fetched ok' }, { headers: cors })
      if (path === '/frame.html') return new Response('<!doctype html><p>framed</p>', { headers: { 'content-type': 'text/html' } })
      return new Response('not found', { status: 404 })
    },
  })
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path !== '/') return new Response(null, { status: path === '/favicon.ico' ? 204 : 404 })
      const nonce = sentPolicy?.includes('{NONCE}') ? randomBytes(16).toString('base64') : null
      const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8', server: 'Apache/2.4.62 (Debian)' }
      if (sentPolicy) headers['content-security-policy'] = nonce ? sentPolicy.replaceAll('{NONCE}', nonce) : sentPolicy
      return new Response(pageHtml(nonce), { headers })
    },
  })
  browser = await chromium.launch({ executablePath: chromiumPath(''), args: CHROMIUM_ARGS, timeout: 30_000 })
})

afterAll(async () => {
  await browser?.close()
  await pool.close()
  assets?.stop(true)
  site?.stop(true)
})

/** Scans the fixture as the service does and returns the csp check's result and the policy built from it. */
async function scanAdvice() {
  sentPolicy = null
  const { artifacts } = await gather(siteUrl(), {
    policy: { allowPrivate: true, trustedHosts: [] },
    browser: pool,
    navTimeoutMs: 15_000,
    probeTimeoutMs: 5_000,
  })
  const results = runChecks(artifacts)
  const csp = results.find((r) => r.id === 'csp')!
  const sources = asPageSources(csp.evidence.pageSources)
  if (!sources) throw new Error(`the csp check recorded no page sources: ${JSON.stringify(csp.evidence)}`)
  return {
    csp,
    sources,
    advice: buildCsp(sources),
    report: buildReport({ id: 'scn_x', url: siteUrl(), finalUrl: siteUrl(), createdAt: '', timings: {} }, results),
  }
}

/** Loads the site with the given policy and reports every violation, console error and what the page did. */
async function visit(policy: string) {
  sentPolicy = policy
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    const consoleErrors: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text())
    })
    await page.addInitScript(() => {
      const w = window as unknown as { __violations: string[] }
      w.__violations = []
      document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`))
    })
    await page.goto(siteUrl(), { waitUntil: 'load', timeout: 15_000 })
    // The fetch settles after load: wait for it (or give up after 3 s; a blocked fetch never fills it in).
    await page
      .waitForFunction(() => document.getElementById('fetched')?.textContent !== 'waiting', undefined, { timeout: 3_000 })
      .catch(() => {})
    await page.click('#btn', { timeout: 3_000 })
    const state = await page.evaluate(() => {
      const el = (id: string) => document.getElementById(id)!
      const img = el('img') as HTMLImageElement
      return {
        head: document.documentElement.dataset.head ?? null,
        out: el('out').textContent,
        clicked: el('out').dataset.clicked ?? null,
        lib: el('lib').textContent,
        libWeight: getComputedStyle(el('lib')).fontWeight,
        styled: getComputedStyle(el('styled')).color,
        attr: getComputedStyle(el('attr')).color,
        fetched: el('fetched').textContent,
        imageWidth: img.naturalWidth,
        violations: (window as unknown as { __violations: string[] }).__violations,
      }
    })
    return { ...state, consoleErrors }
  } finally {
    await context.close()
  }
}

describe('the advised Content-Security-Policy in Chromium', () => {
  let advice: CspAdvice

  test('the scan computes the policy from the page: hashes, the second origin, unsafe-hashes for the handler and style attribute', async () => {
    const scanned = await scanAdvice()
    advice = scanned.advice
    const B = assetOrigin()
    expect(scanned.csp.status).toBe('fail')
    expect(advice.mode).toBe('hashes')
    expect(scanned.sources.scripts.count).toBe(2) // the JSON data block is not code
    const directive = (name: string) => advice.policy.split('; ').find((d) => d.startsWith(`${name} `)) ?? ''
    expect(directive('script-src')).toContain(B)
    expect(directive('script-src').match(/'sha256-/g)?.length).toBe(3) // two scripts and the onclick handler
    expect(directive('script-src')).toContain("'unsafe-hashes'")
    expect(directive('script-src')).not.toContain("'unsafe-inline'")
    expect(directive('style-src')).toContain(B)
    expect(directive('img-src')).toContain(B)
    expect(directive('connect-src')).toContain(B)
    expect(directive('frame-src')).toContain(B)
    expect(advice.policy).toContain("object-src 'none'")
    expect(advice.policy).toContain("base-uri 'self'")
    expect(advice.policy).toContain('frame-ancestors')
    // The report's advice for the check is that policy, and the Apache-served site gets it as .htaccess lines.
    expect(scanned.report.checks.find((c) => c.id === 'csp')!.advice).toContain(advice.policy)
    const apache = getCheck('csp')!.advise!(scanned.csp, 'apache')!
    expect(apache).toContain(`Header always set Content-Security-Policy "${advice.policy}"`)
  }, 60_000)

  test('sent with the page, the policy raises no violation and the page still runs', async () => {
    const seen = await visit(advice.policy)
    expect(seen.violations).toEqual([])
    expect(seen.consoleErrors).toEqual([])
    expect(seen).toMatchObject({
      head: 'ran',
      out: 'inline ran',
      clicked: 'yes',
      lib: 'external ran',
      libWeight: '700',
      styled: 'rgb(0, 128, 0)',
      attr: 'rgb(255, 0, 0)',
      fetched: 'fetched ok',
      imageWidth: 1,
    })
  }, 60_000)

  test('control: without the hashes the inline code is blocked, and the listeners see it', async () => {
    const stripped = advice.policy.replace(/ 'sha256-[A-Za-z0-9+/=]+'/g, '')
    const seen = await visit(stripped)
    expect(seen.violations.some((v) => v.startsWith('script-src-elem inline'))).toBe(true)
    expect(seen.consoleErrors.some((e) => e.includes('Content Security Policy'))).toBe(true)
    expect(seen.out).toBe('waiting')
    expect(seen.head).toBeNull()
  }, 60_000)

  test('a page whose inline script changes per response gets a nonce recipe, which works with a fresh nonce', async () => {
    dynamicPage = true
    try {
      const scanned = await scanAdvice()
      expect(scanned.sources.scripts.dynamic).toBeGreaterThan(0)
      expect(scanned.advice.mode).toBe('nonce')
      expect(scanned.advice.policy).toContain("'nonce-{NONCE}'")
      const scriptSrc = scanned.advice.policy.split('; ').find((d) => d.startsWith('script-src '))!
      expect(scriptSrc.match(/'sha256-/g)?.length).toBe(1) // the onclick handler only: the scripts go by nonce
      expect(scriptSrc).not.toContain("'unsafe-inline'")
      const seen = await visit(scanned.advice.policy)
      expect(seen.violations).toEqual([])
      expect(seen.consoleErrors).toEqual([])
      expect(seen).toMatchObject({ head: 'ran', out: 'inline ran', clicked: 'yes', lib: 'external ran', fetched: 'fetched ok' })
    } finally {
      dynamicPage = false
    }
  }, 60_000)
})
