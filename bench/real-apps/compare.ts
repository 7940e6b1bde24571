// Real applications side by side with a real peer: per application, each item of its documented
// default-install weaknesses (bench/real-apps/ground-truth.ts), whether our scan_app found it (which check)
// and whether Wapiti did (which module), the time of each, and our findings of medium or above on the
// careful configuration (the hardened nginx in front of each application) as false alarms.
//
// The applications must be running: bench/real-apps/install.sh once, then bench/real-apps/apps.sh start
// (it writes $REALAPPS_DIR/state.json, default /tmp/appaudit-realapps). Order: our scans first (one
// application after another, default then hardened), then Wapiti on every application at once (its runs
// are long and mostly waiting; run one after another they would take the better part of an hour).
//
//   bun bench/real-apps/compare.ts [--only=wordpress,dokuwiki] [--no-wapiti] [--wapiti-time=S] [--result=FILE]
import { readFileSync } from 'node:fs'
import { loadavg, cpus } from 'node:os'
import { startOurs, type OurCheck, type OurReport } from '../compare-lib/ours.ts'
import { textTable } from '../compare-lib/text.ts'
import { flag, fmtMs, writeResult } from '../lib/stats.ts'
import { GROUND_TRUTH, TRANSPORT_CHECKS, type GroundTruthItem } from './ground-truth.ts'
import { runWapiti, wapitiVersion, WAPITI_MODULES, type WapitiFinding, type WapitiRun } from './wapiti.ts'

const STATE = `${process.env.REALAPPS_DIR ?? '/tmp/appaudit-realapps'}/state.json`
const FINDING = new Set(['fail', 'warn'])
const MEDIUM_UP = new Set(['critical', 'high', 'medium'])
/** Wapiti's report categories and the module that writes each. */
const WAPITI_MODULE: Record<string, string> = {
  'Content Security Policy Configuration': 'csp',
  'HTTP Secure Headers': 'http_headers',
  'Secure Flag cookie': 'cookieflags',
  'HttpOnly Flag cookie': 'cookieflags',
  'Backup file': 'backup',
  'Potentially dangerous file': 'nikto',
  'Htaccess Bypass': 'htaccess',
  'Fingerprint web technology': 'wapp',
}

interface AppUrls {
  default: string
  hardened: string
}

interface OursSide {
  ms: number
  report: OurReport | null
  error: string | null
}

export interface AppResult {
  app: string
  urls: AppUrls
  ours: OursSide
  oursHardened: OursSide
  wapiti: WapitiRun | null
}

const findings = (r: OurReport | null): OurCheck[] => (r?.checks ?? []).filter((c) => FINDING.has(c.status))

export function oursFound(item: GroundTruthItem, report: OurReport | null): string | null {
  for (const c of findings(report)) {
    if (!item.ours.includes(c.id)) continue
    if (item.oursText && !item.oursText.test(`${c.summary} ${JSON.stringify(c.evidence)}`)) continue
    return c.id
  }
  return null
}

export function wapitiFound(item: GroundTruthItem, run: WapitiRun | null): string | null {
  for (const f of run?.findings ?? []) {
    if (!item.wapitiCategory.test(f.category) || item.wapitiCategory.source === '^$') continue
    if (item.wapitiText && !item.wapitiText.test(`${f.path} ${f.info}`)) continue
    return WAPITI_MODULE[f.category] ?? f.category
  }
  return null
}

/** Our findings of medium or above on the careful configuration, but those about the plain-HTTP transport. */
export function falseAlarms(report: OurReport | null): OurCheck[] {
  return findings(report).filter((c) => MEDIUM_UP.has(c.severity) && !TRANSPORT_CHECKS.has(c.id))
}

async function scanOurs(ours: Awaited<ReturnType<typeof startOurs>>, url: string): Promise<OursSide> {
  try {
    const { ms, report } = await ours.scan(url)
    return { ms, report, error: null }
  } catch (e) {
    return { ms: Number.NaN, report: null, error: (e as Error).message.slice(0, 300) }
  }
}

function appTable(r: AppResult): string {
  const items = GROUND_TRUTH[r.app] ?? []
  const rows = [['ground truth item', 'ours (check)', 'Wapiti (module)']]
  let us = 0
  let them = 0
  let counted = 0
  for (const item of items) {
    const o = oursFound(item, r.ours.report)
    const w = wapitiFound(item, r.wapiti)
    if (!item.local) {
      counted++
      if (o) us++
      if (w) them++
    }
    rows.push([`${item.local ? '(local) ' : ''}${item.what}`, o ?? '-', w ?? (r.wapiti ? '-' : 'not run')])
  }
  rows.push([`found, of ${counted} counted`, String(us), r.wapiti ? String(them) : 'not run'])
  rows.push(['time', fmtMs(r.ours.ms), r.wapiti ? fmtMs(r.wapiti.ms) : 'not run'])
  return textTable(rows)
}

function printApp(r: AppResult): void {
  console.log(`\n== ${r.app}  ${r.urls.default}  (careful: ${r.urls.hardened})`)
  if (r.ours.error) console.log(`ours failed: ${r.ours.error}`)
  if (r.wapiti?.error) console.log(`wapiti failed: ${r.wapiti.error}\n${r.wapiti.tail}`)
  if (r.wapiti?.interrupted) console.log('wapiti ran past its time limit: interrupted, its report holds what it found by then')
  console.log(appTable(r))
  const extra = findings(r.ours.report).filter((c) => MEDIUM_UP.has(c.severity))
  console.log(`ours, all findings medium+: ${extra.map((c) => `${c.id}(${c.severity})`).join(', ') || 'none'}`)
  const wv = (r.wapiti?.findings ?? []).filter((f) => f.kind !== 'additional')
  console.log(
    `wapiti, vulnerabilities and anomalies: ${
      wv
        .map((f) => `${f.category} ${f.path}`)
        .join('; ')
        .slice(0, 600) || 'none'
    }`,
  )
  const p = r.ours.report?.probes
  if (p) console.log(`probes (as the report states them): ${probeLine(p)}`)
  const fa = falseAlarms(r.oursHardened.report)
  if (r.oursHardened.error) console.log(`ours on the careful configuration failed: ${r.oursHardened.error}`)
  else
    console.log(
      `careful configuration, ours medium+ (false alarms): ${fa.map((c) => `${c.id}(${c.severity}): ${c.summary}`).join(' | ') || 'none'} [${fmtMs(r.oursHardened.ms)}]`,
    )
}

/** "104 of 126 sent; API 17 (cors 8, errors 2, ...); known applications 0 (WordPress 0, base path 0)". */
export function probeLine(p: NonNullable<OurReport['probes']>): string {
  const api = p.api ? Object.entries(p.api).filter(([k]) => k !== 'budget' && k !== 'sent') : []
  const apps = p.apps
  return (
    `${p.sent} of ${p.budget} sent; API ${p.api?.sent ?? 0}${api.length ? ` (${api.map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}` +
    `; known applications ${apps?.sent ?? 0} (WordPress ${apps?.wordpress ?? 0}, base path ${apps?.basePath ?? 0})`
  )
}

async function main(): Promise<void> {
  const state = JSON.parse(readFileSync(STATE, 'utf8')) as Record<string, AppUrls>
  const only = flag('only')
  const apps = Object.keys(state).filter((a) => typeof only !== 'string' || only.split(',').includes(a))
  const wapitiTime = Number(flag('wapiti-time') ?? 420)
  console.log(
    `real applications: ${apps.join(', ')}; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cpus().length} cores`,
  )
  const ours = await startOurs('embedded')
  const results: AppResult[] = []
  try {
    for (const app of apps) {
      const o = await scanOurs(ours, state[app]!.default)
      const h = await scanOurs(ours, state[app]!.hardened)
      results.push({ app, urls: state[app]!, ours: o, oursHardened: h, wapiti: null })
    }
  } finally {
    await ours.stop()
  }
  if (!flag('no-wapiti')) {
    console.log(
      `wapiti ${await wapitiVersion()} -m ${WAPITI_MODULES}, --max-scan-time ${wapitiTime}, on ${apps.length} applications at once`,
    )
    const runs = await Promise.all(results.map((r) => runWapiti(r.urls.default, wapitiTime, Math.ceil(wapitiTime / 16))))
    runs.forEach((run, i) => {
      results[i]!.wapiti = run
    })
  }
  for (const r of results) printApp(r)
  console.log(
    `\nload at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
  await writeResult({ date: new Date().toISOString(), load: loadavg(), results: results.map(slim) })
}

function slim(r: AppResult) {
  const items = (GROUND_TRUTH[r.app] ?? []).map((i) => ({
    id: i.id,
    local: !!i.local,
    ours: oursFound(i, r.ours.report),
    wapiti: wapitiFound(i, r.wapiti),
  }))
  return {
    app: r.app,
    oursMs: r.ours.ms,
    wapitiMs: r.wapiti?.ms ?? null,
    items,
    oursFindings: findings(r.ours.report).map((c) => `${c.id}:${c.severity}`),
    probes: r.ours.report?.probes ?? null,
    falseAlarms: falseAlarms(r.oursHardened.report).map((c) => `${c.id}:${c.severity}: ${c.summary}`),
    wapitiFindings: (r.wapiti?.findings ?? []).map((f) => `${f.kind}:${f.category}:${f.path}:${f.info.slice(0, 120)}`),
    wapitiError: r.wapiti?.error ?? null,
    wapitiInterrupted: r.wapiti?.interrupted ?? false,
  }
}

if (import.meta.main) await main()
