// Lighthouse under node, driven line by line over stdin so the parent can interleave its runs with other
// work. Launches Chromium once (chrome-launcher, the launcher Lighthouse's CLI uses) and keeps it warm; each
// "run" line runs Lighthouse's programmatic API on the URL with its default config (every default category)
// and answers with one JSON line; "run URL" runs on URL instead of the spec's; "quit" (or stdin closing)
// kills Chromium and exits.
//
//   node lighthouse-runner.mjs '{"url":"http://127.0.0.1:8080/","chromePath":"/usr/bin/chromium","chromeFlags":["--headless"]}'
//   stdout: {"ready":true,...}   then per "run": {"ms":...,"categories":{...},"lhTotalMs":...}
//
// With "findings": {"categories":["seo",...],"extra":["audit-id",...]} in the spec, each answer also lists
// the audits of those categories (and the extra ones) that did not pass: a score below 1, or an informative
// audit with table rows (how Lighthouse reports its trust & safety audits). Each row is summed up in a label.
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

const MAX_LABELS = 12
const text = (v) => (typeof v === 'string' ? v : typeof v?.value === 'string' ? v.value : typeof v?.text === 'string' ? v.text : '')

/** One table row of an audit, in a few words: its issue type, severity and description, URL or element. */
function label(item) {
  let l = ''
  if (typeof item.issueType === 'string') l = item.issueType
  else if (typeof item.severity === 'string') l = `${item.severity}: ${text(item.description)}`
  else if (typeof item.url === 'string') l = item.url
  else if (typeof item.node?.selector === 'string') l = item.node.selector
  else if (typeof item.source === 'string') l = item.source
  else l = JSON.stringify(item)
  return l.slice(0, 160)
}

/** The audits of the asked categories (and extra audits) that did not pass. */
function findings(lhr, ask) {
  const categoriesOf = new Map()
  for (const [cid, c] of Object.entries(lhr.categories ?? {})) {
    if (!ask.categories?.includes(cid)) continue
    for (const ref of c.auditRefs ?? []) categoriesOf.set(ref.id, [...(categoriesOf.get(ref.id) ?? []), cid])
  }
  for (const id of ask.extra ?? []) if (!categoriesOf.has(id)) categoriesOf.set(id, [])
  const out = []
  for (const [id, categories] of categoriesOf) {
    const a = lhr.audits?.[id]
    if (!a) continue
    const items = Array.isArray(a.details?.items) ? a.details.items : []
    const scored = typeof a.score === 'number' && ['binary', 'numeric', 'metricSavings'].includes(a.scoreDisplayMode)
    const failing = scored && a.score < 1
    const informative = a.scoreDisplayMode === 'informative' && items.length > 0
    if (!failing && !informative) continue
    out.push({
      id,
      title: a.title,
      categories,
      mode: a.scoreDisplayMode,
      score: a.score,
      displayValue: a.displayValue ?? null,
      labels: items.slice(0, MAX_LABELS).map(label),
      rows: items.length,
    })
  }
  return out
}

const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  const cmd = line.trim()
  if (cmd === 'quit') break
  if (cmd !== 'run' && !cmd.startsWith('run ')) continue
  const url = cmd === 'run' ? spec.url : cmd.slice(4).trim()
  const t0 = performance.now()
  try {
    const result = await lighthouse(url, { port: chrome.port, output: 'json', logLevel: 'error' })
    const ms = performance.now() - t0
    const lhr = result?.lhr
    say({
      ms,
      lhTotalMs: lhr?.timing?.total ?? null,
      categories: Object.fromEntries(Object.entries(lhr?.categories ?? {}).map(([id, c]) => [id, c.score])),
      audits: Object.keys(lhr?.audits ?? {}).length,
      runtimeError: lhr?.runtimeError?.code ?? null,
      finalUrl: lhr?.finalDisplayedUrl ?? null,
      ...(spec.findings && lhr ? { findings: findings(lhr, spec.findings) } : {}),
    })
  } catch (e) {
    say({ error: e instanceof Error ? e.message : String(e), ms: performance.now() - t0 })
  }
}
await quit(0)
