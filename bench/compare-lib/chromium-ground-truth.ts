// What the browser actually does with the header forms the two scanners disagree on, measured in the same
// Chromium (project flags) during the same run: a disagreement is settled by behaviour, not by reading specs.
// Every response here is written byte for byte on a raw socket, so "one line with a comma" and "the header
// twice on two lines" are really different on the wire (Bun.serve and fetch merge repeated headers).
import { chromium, type Browser } from 'playwright-core'
import { CHROMIUM_ARGS } from '../../crawler/browser.ts'
import type { TlsMaterial } from '../../test/fixtures/sites.ts'
import { withTimeout } from '../lib/stats.ts'
import { rawServer } from './raw-server.ts'
import { errorMessage } from '../../shared/errors.ts'

export interface GroundTruthRow {
  case: string
  /** The header line(s) as sent. */
  sent: string
  /** What Chromium did, in words. */
  outcome: string
  /** Whether the protection the scanners look for is in force (for CORS: the other origin cannot read). */
  effective: boolean
}

const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), (c) =>
  c.charCodeAt(0),
)

/** HSTS: visit https://NAME.test with the header, then http://NAME.test on another port; an upgraded request fails its TLS handshake. */
async function hstsCase(
  browser: Browser,
  name: string,
  lines: string[],
  material: TlsMaterial,
  plainPort: number,
): Promise<GroundTruthRow> {
  const server = await rawServer(() => ({ type: 'text/html', body: '<p>hsts</p>', lines }), material)
  const ctx = await browser.newContext()
  try {
    const page = await ctx.newPage()
    await page.goto(`https://${name}.test:${server.port}/`, { timeout: 10_000 })
    let effective: boolean
    try {
      await page.goto(`http://${name}.test:${plainPort}/`, { timeout: 10_000 })
      effective = false
    } catch (e) {
      effective = /ERR_SSL_PROTOCOL_ERROR|ERR_SSL|ERR_CONNECTION/.test(String(e))
    }
    return {
      case: `HSTS ${name}`,
      sent: lines.join(' | ') || '(none)',
      outcome: effective ? 'http:// upgraded to https:// afterwards (HSTS stored)' : 'http:// not upgraded (HSTS ignored)',
      effective,
    }
  } finally {
    await ctx.close().catch(() => {})
    server.close()
  }
}

/** nosniff: a text/plain "script"; with nosniff in force, Chromium refuses to run it. */
async function nosniffCase(browser: Browser, name: string, lines: string[]): Promise<GroundTruthRow> {
  const server = await rawServer((path) =>
    path === '/a.js'
      ? { type: 'text/plain', body: 'window.ran = true', lines }
      : { type: 'text/html', body: '<script src="/a.js"></script>', lines: [] },
  )
  const ctx = await browser.newContext()
  try {
    const page = await ctx.newPage()
    await page.goto(`http://127.0.0.1:${server.port}/`, { timeout: 10_000 })
    const ran = await page.evaluate(() => (window as unknown as { ran?: boolean }).ran === true)
    return {
      case: `nosniff ${name}`,
      sent: lines.join(' | '),
      outcome: ran ? 'text/plain script ran (nosniff ignored)' : 'text/plain script blocked (nosniff in force)',
      effective: !ran,
    }
  } finally {
    await ctx.close().catch(() => {})
    server.close()
  }
}

/** Framing: a page on http://localhost frames one on http://127.0.0.1 (another origin) that sends `lines`. */
async function framingCase(browser: Browser, name: string, lines: string[]): Promise<GroundTruthRow> {
  const framed = await rawServer(() => ({ type: 'text/html', body: '<p id="m">framed content</p>', lines }))
  const parent = await rawServer(() => ({ type: 'text/html', body: `<iframe src="http://127.0.0.1:${framed.port}/"></iframe>`, lines: [] }))
  const ctx = await browser.newContext()
  try {
    const page = await ctx.newPage()
    await page.goto(`http://localhost:${parent.port}/`, { timeout: 10_000, waitUntil: 'load' })
    const frame = page.frames().find((f) => f !== page.mainFrame())
    const shown = frame
      ? await frame.evaluate(() => document.getElementById('m')?.textContent === 'framed content').catch(() => false)
      : false
    return {
      case: `framing ${name}`,
      sent: lines.join(' | '),
      outcome: shown ? 'another origin can frame the page' : 'framing blocked',
      effective: !shown,
    }
  } finally {
    await ctx.close().catch(() => {})
    framed.close()
    parent.close()
  }
}

/** CORP: a page on http://localhost loads an image from http://127.0.0.1 (another origin, no-cors) that sends `lines`. */
async function corpCase(browser: Browser, name: string, lines: string[]): Promise<GroundTruthRow> {
  const image = await rawServer(() => ({ type: 'image/png', body: PNG, lines }))
  const parent = await rawServer(() => ({ type: 'text/html', body: `<img id="i" src="http://127.0.0.1:${image.port}/p.png">`, lines: [] }))
  const ctx = await browser.newContext()
  try {
    const page = await ctx.newPage()
    await page.goto(`http://localhost:${parent.port}/`, { timeout: 10_000, waitUntil: 'load' })
    const loaded = await page.evaluate(() => (document.getElementById('i') as HTMLImageElement | null)?.naturalWidth ?? 0)
    return {
      case: `CORP ${name}`,
      sent: lines.join(' | '),
      outcome: loaded > 0 ? 'cross-origin image loads (CORP ignored)' : 'cross-origin image blocked (CORP in force)',
      effective: loaded === 0,
    }
  } finally {
    await ctx.close().catch(() => {})
    image.close()
    parent.close()
  }
}

/**
 * CORS with credentials: a script reads a credentialed fetch of http://127.0.0.1 (another origin) that answers
 * with `lines(requestOrigin)`. `sandboxed` runs the script in a sandboxed iframe, whose requests say Origin: null.
 */
async function corsCase(browser: Browser, name: string, lines: (origin: string) => string[], sandboxed: boolean): Promise<GroundTruthRow> {
  const api = await rawServer((_, request) => {
    const origin = /\r\norigin: *([^\r\n]*)/i.exec(request)?.[1] ?? ''
    return { type: 'text/plain', body: 'private account data', lines: lines(origin) }
  })
  const reader = `fetch('http://127.0.0.1:${api.port}/', { credentials: 'include' }).then((r) => r.text()).then((t) => (window.top || window).postMessage(t, '*'), () => (window.top || window).postMessage('blocked', '*'))`
  const listener = `<script>addEventListener('message', (e) => { window.__answer = String(e.data) })</script>`
  const body =
    listener +
    (sandboxed
      ? `<iframe sandbox="allow-scripts" srcdoc="<script>${reader.replace(/"/g, '&quot;')}</script>"></iframe>`
      : `<script>${reader}</script>`)
  const parent = await rawServer(() => ({ type: 'text/html', body, lines: [] }))
  const ctx = await browser.newContext()
  try {
    const page = await ctx.newPage()
    await page.goto(`http://localhost:${parent.port}/`, { timeout: 10_000, waitUntil: 'load' })
    const text = await page
      .waitForFunction(() => (window as unknown as { __answer?: string }).__answer, undefined, { timeout: 5_000 })
      .then((h) => h.jsonValue() as Promise<string>)
      .catch(() => 'no answer')
    const read = text === 'private account data'
    return {
      case: `CORS ${name}`,
      sent: lines(sandboxed ? 'null' : '<the page origin>').join(' | '),
      outcome: read ? 'the other origin read the credentialed response' : `not readable (${text})`,
      effective: !read,
    }
  } finally {
    await ctx.close().catch(() => {})
    api.close()
    parent.close()
  }
}

export async function chromiumGroundTruth(executablePath: string | undefined, material: TlsMaterial): Promise<GroundTruthRow[]> {
  const browser = await chromium.launch({
    executablePath,
    args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${material.spki}`, '--host-resolver-rules=MAP *.test 127.0.0.1'],
    timeout: 30_000,
  })
  const plain = await rawServer(() => ({ type: 'text/html', body: '<p>plain http</p>', lines: [] }))
  const rows: GroundTruthRow[] = []
  const run = async (p: Promise<GroundTruthRow>, what: string) => {
    try {
      rows.push(await withTimeout(p, 30_000, what))
    } catch (e) {
      rows.push({ case: what, sent: '', outcome: `probe failed: ${errorMessage(e)}`, effective: false })
    }
  }
  try {
    const sts = 'Strict-Transport-Security: max-age=31536000'
    await run(hstsCase(browser, 'hsts-one-line', [sts], material, plain.port), 'HSTS hsts-one-line')
    await run(
      hstsCase(browser, 'hsts-merged', ['Strict-Transport-Security: max-age=31536000, max-age=31536000'], material, plain.port),
      'HSTS hsts-merged',
    )
    await run(hstsCase(browser, 'hsts-two-lines', [sts, sts], material, plain.port), 'HSTS hsts-two-lines')
    await run(
      hstsCase(browser, 'hsts-two-lines-first-bad', ['Strict-Transport-Security: max-age=abc', sts], material, plain.port),
      'HSTS hsts-two-lines-first-bad',
    )
    await run(nosniffCase(browser, 'one line', ['X-Content-Type-Options: nosniff']), 'nosniff one line')
    await run(nosniffCase(browser, 'merged', ['X-Content-Type-Options: nosniff, nosniff']), 'nosniff merged')
    await run(
      nosniffCase(browser, 'two lines', ['X-Content-Type-Options: nosniff', 'X-Content-Type-Options: nosniff']),
      'nosniff two lines',
    )
    await run(framingCase(browser, 'X-Frame-Options DENY', ['X-Frame-Options: DENY']), 'framing DENY')
    await run(
      framingCase(browser, 'X-Frame-Options ALLOW-FROM', ['X-Frame-Options: ALLOW-FROM https://partner.example']),
      'framing ALLOW-FROM',
    )
    await run(framingCase(browser, 'frame-ancestors *', ['Content-Security-Policy: frame-ancestors *']), 'framing frame-ancestors *')
    await run(corpCase(browser, 'same-origin', ['Cross-Origin-Resource-Policy: same-origin']), 'CORP same-origin')
    await run(corpCase(browser, 'Same-Origin', ['Cross-Origin-Resource-Policy: Same-Origin']), 'CORP Same-Origin')
    const credentials = 'Access-Control-Allow-Credentials: true'
    await run(
      corsCase(browser, '* + credentials', () => ['Access-Control-Allow-Origin: *', credentials], false),
      'CORS star',
    )
    await run(
      corsCase(browser, 'reflected origin + credentials', (o) => [`Access-Control-Allow-Origin: ${o}`, credentials], false),
      'CORS reflected',
    )
    await run(
      corsCase(browser, 'null + credentials, from a sandboxed iframe', () => ['Access-Control-Allow-Origin: null', credentials], true),
      'CORS null',
    )
  } finally {
    plain.close()
    await browser.close().catch(() => {})
  }
  return rows
}
