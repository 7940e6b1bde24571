// Lighthouse under node, driven line by line over stdin so the parent can interleave its runs with other
// work. Launches Chromium once (chrome-launcher, the launcher Lighthouse's CLI uses) and keeps it warm; each
// "run" line runs Lighthouse's programmatic API on the URL with its default config (every default category)
// and answers with one JSON line; "quit" (or stdin closing) kills Chromium and exits.
//
//   node lighthouse-runner.mjs '{"url":"http://127.0.0.1:8080/","chromePath":"/usr/bin/chromium","chromeFlags":["--headless"]}'
//   stdout: {"ready":true,...}   then per "run": {"ms":...,"categories":{...},"lhTotalMs":...}
import * as chromeLauncher from 'chrome-launcher'
import lighthouse from 'lighthouse'
import { createInterface } from 'node:readline'

const spec = JSON.parse(process.argv[2] ?? '{}')
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`)

let chrome = null
async function quit(code) {
  try {
    await chrome?.kill()
  } catch {}
  process.exit(code)
}

try {
  const t0 = performance.now()
  chrome = await chromeLauncher.launch({ chromePath: spec.chromePath, chromeFlags: spec.chromeFlags, logLevel: 'silent' })
  const pkg = (await import('lighthouse/package.json', { with: { type: 'json' } })).default
  say({ ready: true, launchMs: performance.now() - t0, port: chrome.port, lighthouseVersion: pkg.version })
} catch (e) {
  say({ error: `Chromium did not start: ${e instanceof Error ? e.message : String(e)}` })
  await quit(1)
}

const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  const cmd = line.trim()
  if (cmd === 'quit') break
  if (cmd !== 'run') continue
  const t0 = performance.now()
  try {
    const result = await lighthouse(spec.url, { port: chrome.port, output: 'json', logLevel: 'error' })
    const ms = performance.now() - t0
    const lhr = result?.lhr
    say({
      ms,
      lhTotalMs: lhr?.timing?.total ?? null,
      categories: Object.fromEntries(Object.entries(lhr?.categories ?? {}).map(([id, c]) => [id, c.score])),
      audits: Object.keys(lhr?.audits ?? {}).length,
      runtimeError: lhr?.runtimeError?.code ?? null,
      finalUrl: lhr?.finalDisplayedUrl ?? null,
    })
  } catch (e) {
    say({ error: e instanceof Error ? e.message : String(e), ms: performance.now() - t0 })
  }
}
await quit(0)
