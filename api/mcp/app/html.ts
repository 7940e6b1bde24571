// The report view as one self-contained HTML document: the view's script (bundled from view.ts with the
// package's App class by Bun.build) and its stylesheet inline, nothing loaded from anywhere. Its own CSP
// allows exactly those two inline blocks by hash and nothing else, so even a host that frames it with a
// looser policy cannot get a script from a report to run in it. Built on first use, then cached.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'

const ENTRY = new URL('./view.ts', import.meta.url).pathname
const STYLESHEET = new URL('./view.css', import.meta.url).pathname

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`

/** Refuses text that would end the element it is inlined into, rather than rewriting a minified bundle. */
function inlineSafe(text: string, element: 'script' | 'style'): string {
  if (new RegExp(`</${element}`, 'i').test(text) || (element === 'script' && text.includes('<!--'))) {
    throw new Error(`The report view's ${element} cannot be inlined: it contains </${element} or <!--`)
  }
  return text
}

export async function buildReportHtml(): Promise<string> {
  // ESM, inlined as a module script: Bun's iife output leaves the package's require shim undefined.
  const built = await Bun.build({ entrypoints: [ENTRY], target: 'browser', format: 'esm', minify: true })
  if (!built.success || !built.outputs[0]) {
    throw new Error(`Building the report view failed: ${built.logs.map((l) => l.message).join('; ') || 'no output'}`)
  }
  const script = inlineSafe(await built.outputs[0].text(), 'script')
  const style = inlineSafe(await readFile(STYLESHEET, 'utf8'), 'style')
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    'img-src data:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${csp}">` +
    '<meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>App Audit report</title><style>${style}</style></head>` +
    '<body><main id="report" aria-live="polite"><p class="status-line" data-testid="status">Waiting for the report …</p></main>' +
    `<script type="module">${script}</script></body></html>`
  )
}

let cached: Promise<string> | null = null

/** The document, built once per process; a failed build is retried on the next read. */
export function reportHtml(): Promise<string> {
  cached ??= buildReportHtml().catch((e) => {
    cached = null
    throw e
  })
  return cached
}
