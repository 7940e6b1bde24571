// What each tool finds of the problems planted in the fixture sites: our scan_app, the pinned MDN HTTP
// Observatory and Lighthouse, on the same running site, one fixture at a time.
//
// The planted problems of a fixture are the check ids its expectations file (test/fixtures/expectations/
// <name>.json) lists in mustFail and mustWarn. Ours finds one when that check reports a finding (fail or
// warn). The Observatory's failing tests and Lighthouse's failing audits count for a planted problem only
// through the explicit tables in bench/compare-lib/exposure-mapping.ts; what they find beyond those is
// printed and counts for nothing.
//
// - Ours: scan_app through the MCP SDK client, the service booted by the test harness (as in
//   observatory-compare), the test certificate trusted by SPKI pin.
// - Observatory: @mdn/mdn-http-observatory under node (bench/compare-lib/observatory-runner.mjs) on the
//   scanned host and port, both ports when the http form redirects to https on another (as
//   observatory-compare does); the test certificate trusted through NODE_EXTRA_CA_CERTS.
// - Lighthouse: its programmatic API with one warm Chromium (the project's flags and the SPKI pin), default
//   config; read are the accessibility, best-practices and SEO categories and viewport-insight. Lighthouse
//   takes 127.0.0.1 and localhost for secure contexts (no is-on-https or redirects-http finding there), so
//   an http site is given to it under another host name that Chromium maps to 127.0.0.1 (--lh-loopback:
//   not).
// A fixture that does not start, a tool that refuses a site or fails on it: a row that says so.
//
//   bun bench/exposure-compare.ts                      every fixture, all three tools
//   bun bench/exposure-compare.ts --only=weak,exposed-files --no-lighthouse
//   options: --only=a,b (or --only a,b)  --no-lighthouse  --quick (Lighthouse on the first 3 fixtures only)
//            --lh-loopback  --mode=embedded|production  --result=FILE (JSON)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { PROBE_PATHS } from '../shared/checks/probe-paths.ts'
import { CHROMIUM_ARGS, fullChromiumPath } from '../crawler/browser.ts'
import { testCertificate } from '../test/fixtures/sites.ts'
import type { Mode } from '../test/harness/service.ts'
import {
  LIGHTHOUSE_CREDITS,
  LIGHTHOUSE_PASS_SCORE,
  OBSERVATORY_CREDITS,
  lighthouseFindings,
  observatoryFindings,
  type Credit,
  type ToolFinding,
} from './compare-lib/exposure-mapping.ts'
import { EXPECTATIONS_DIR, fixtureNames, startFixtures, stopFixtures } from './compare-lib/fixtures.ts'
import { lighthouseVersion, startLighthouseApi, type LighthouseApi, type LighthouseRun } from './compare-lib/lighthouse.ts'
import { MAPPINGS } from './compare-lib/mapping.ts'
import { nodePath, observatoryTargetFor, observatoryVersion, prepareObservatory, runObservatory } from './compare-lib/observatory.ts'
import { startOurs, type OurReport } from './compare-lib/ours.ts'
import { textTable, wrap } from './compare-lib/text.ts'
import { flag, fmtMs, summarize, writeResult } from './lib/stats.ts'
import { errorMessage } from '../shared/errors.ts'

/** Lighthouse categories read, and audits read outside them. */
const LH_CATEGORIES = ['accessibility', 'best-practices', 'seo']
const LH_EXTRA = ['viewport-insight', 'total-byte-weight', 'cache-insight', 'document-latency-insight', 'server-response-time']
/** The host name an http site is given to Lighthouse under; Chromium maps it to 127.0.0.1. */
const LH_ALIAS = 'appaudit-fixture.test'
/** Fixtures Lighthouse runs on with --quick. */
const QUICK_LH_FIXTURES = 3
/** Keys under which a report (timings, or a check's evidence) may state its probe request count. */

type Tool = 'ours' | 'observatory' | 'lighthouse'

interface Planted {
  fail: string[]
  warn: string[]
  all: string[]
}

interface ProbeBudget {
  /** Probe requests per scan. */
  requests: number
  /** Where the number comes from. */
  source: string
  /** Probed paths that got an answer, when a check's evidence says so. */
  answered: number | null
  /** The worker's time for the probes. */
  ms: number | null
}

interface ToolSide {
  /** Planted problems it found. */
  found: string[]
  /** Its findings: our failing checks, their failing tests or audits. */
  findings: ToolFinding[]
  ms: number
}

interface FixtureRow {
  name: string
  planted: Planted
  scanUrl: string | null
  startError: string | null
  ours: (ToolSide & { missed: string[]; otherFailing: string[]; statusOf: Record<string, string>; budget: ProbeBudget }) | null
  oursError: string | null
  observatory: (ToolSide & { score: number; grade: string }) | null
  observatoryError: string | null
  lighthouse: (ToolSide & { url: string; categories: Record<string, number | null> }) | null
  /** Why Lighthouse has no result: an error, or not run. */
  lighthouseNote: string | null
}

export interface ExposureCompareResult {
  bench: 'exposure-compare'
  mode: Mode
  observatoryVersion: string
  lighthouseVersion: string | null
  probePaths: number
  fixtures: Array<{
    name: string
    planted: string[]
    scanUrl: string | null
    error: string | null
    ours: { found: string[]; otherFailing: string[]; ms: number; budget: ProbeBudget } | null
    observatory: { found: string[]; failing: string[]; ms: number } | null
    lighthouse: { found: string[]; failing: string[]; ms: number } | null
    notes: string[]
  }>
  totals: Record<Tool, { found: number; planted: number; fixtures: number }>
  byCheck: Array<{ check: string; fixtures: number } & Record<Tool, string>>
}

/** mustFail and mustWarn of a fixture's expectations file (empty lists without one). */
function plantedOf(name: string): Planted {
  try {
    const raw = JSON.parse(readFileSync(join(EXPECTATIONS_DIR, `${name}.json`), 'utf8')) as { mustFail?: unknown; mustWarn?: unknown }
    const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
    const fail = ids(raw.mustFail)
    const warn = ids(raw.mustWarn).filter((id) => !fail.includes(id))
    return { fail, warn, all: [...fail, ...warn] }
  } catch {
    return { fail: [], warn: [], all: [] }
  }
}

/** The probe requests the report states (report.probes: sent, budget), and what the evidence says was answered. */
function probeBudget(report: OurReport): ProbeBudget {
  const timings = (report.timings ?? {}) as Record<string, unknown>
  const stated = (report as { probes?: { budget: number; sent: number; concurrency: number } }).probes
  // debug-error-page and directory-listing count the main response and every probe that got an answer.
  let answered: number | null = null
  for (const id of ['debug-error-page', 'directory-listing']) {
    const c = report.checks.find((x) => x.id === id)
    if (answered === null && typeof c?.evidence.checked === 'number') answered = c.evidence.checked - 1
  }
  return {
    ...(stated
      ? { requests: stated.sent, source: `report: budget ${stated.budget}, ${stated.concurrency} at a time` }
      : { requests: PROBE_PATHS.length, source: 'PROBE_PATHS.length (the report states none)' }),
    answered,
    ms: typeof timings.probes === 'number' ? timings.probes : null,
  }
}

/** Planted problems found by a tool: those its findings count for. */
const foundBy = (planted: Planted, findings: ToolFinding[]) => planted.all.filter((id) => findings.some((f) => f.checks.includes(id)))

/** The URL Lighthouse gets: an http site under LH_ALIAS, unless --lh-loopback. */
function lighthouseUrl(scanUrl: string, loopback: boolean): string {
  const u = new URL(scanUrl)
  if (loopback || u.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(u.hostname)) return scanUrl
  u.hostname = LH_ALIAS
  return u.href
}

/**
 * Rows of wrapped cells: each cell wraps at its column's width (a "\n" starts a new line), rows are
 * separated by a blank line, the header by a rule.
 */
function gridTable(header: string[], rows: string[][], widths: number[]): string {
  const cellLines = (text: string, width: number) =>
    text
      .split('\n')
      .flatMap((p) => wrap(p, width, '').split('\n'))
      .flatMap((l) => {
        const parts: string[] = []
        for (let i = 0; i < Math.max(1, l.length); i += width) parts.push(l.slice(i, i + width))
        return parts
      })
  const render = (cells: string[]) => {
    const cols = cells.map((c, i) => cellLines(c, widths[i]!))
    const height = Math.max(...cols.map((c) => c.length))
    return Array.from({ length: height }, (_, k) =>
      cols
        .map((c, i) => (c[k] ?? '').padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    ).join('\n')
  }
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [render(header), rule, ...rows.map(render).join('\n\n').split('\n')].join('\n')
}

const list = (ids: string[]) => (ids.length ? ids.join(', ') : 'none')

function describeCredits(credits: Credit[]): string[] {
  return credits.map((c) => {
    const what = c.id === '*' ? `any ${c.category} audit` : c.id
    const when = c.results ? ` [${c.results.join(' | ')}]` : c.labels ? ` [row ${c.labels.source}]` : ''
    return `  ${what}${when} -> ${c.checks.join(' + ')}: ${c.why}`
  })
}

export async function compareExposure(
  opts: { only?: string[]; lighthouse?: boolean; quick?: boolean; loopback?: boolean; mode?: Mode; log?: (l: string) => void } = {},
): Promise<ExposureCompareResult> {
  const log = opts.log ?? ((l: string) => console.log(l))
  const mode = opts.mode ?? 'production'
  const withLighthouse = opts.lighthouse !== false
  const quick = opts.quick ?? false
  const wrote = prepareObservatory()
  const obsVersion = observatoryVersion()
  const lhVersion = withLighthouse ? lighthouseVersion() : null
  const tls = testCertificate()
  const caDir = mkdtempSync(join(tmpdir(), 'exposure-compare-ca-'))
  const extraCa = join(caDir, 'test-ca.pem')
  writeFileSync(extraCa, tls.cert)
  const load0 = loadavg()

  const unknown = (opts.only ?? []).filter((n) => !fixtureNames().includes(n))
  const rows: FixtureRow[] = []
  let fixtures: Awaited<ReturnType<typeof startFixtures>> = { started: [], failed: [] }
  let ours: Awaited<ReturnType<typeof startOurs>> | null = null
  let lh: LighthouseApi | null = null
  let lhStartError: string | null = null
  const chromePath = fullChromiumPath() // Lighthouse in the full browser its users run
  const chromeFlags = [
    ...CHROMIUM_ARGS,
    `--ignore-certificate-errors-spki-list=${tls.spki}`,
    ...(opts.loopback ? [] : [`--host-resolver-rules=MAP ${LH_ALIAS} 127.0.0.1`]),
  ]
  const startLighthouse = async () => {
    try {
      lh = await startLighthouseApi('about:blank', chromePath, chromeFlags, { findings: { categories: LH_CATEGORIES, extra: LH_EXTRA } })
      lhStartError = null
    } catch (e) {
      lh = null
      lhStartError = errorMessage(e)
    }
  }
  try {
    log(
      `Planted problems found: scan_app vs MDN HTTP Observatory ${obsVersion}${lhVersion ? ` vs Lighthouse ${lhVersion}` : ''} on the fixture sites`,
    )
    log(`load average (1, 5, 15 min) at start: ${load0.map((l) => l.toFixed(2)).join(', ')}`)
    if (wrote.length) log(`Observatory offline stand-ins written: ${wrote.join(', ')}`)
    if (unknown.length) log(`--only names no fixture: ${unknown.join(', ')} (fixtures: ${fixtureNames().join(', ')})`)
    fixtures = await startFixtures(opts.only)
    log(
      `${fixtures.started.length} fixture(s) started${fixtures.failed.length ? `, ${fixtures.failed.length} did not: ${fixtures.failed.map((f) => f.name).join(', ')}` : ''}`,
    )
    ours = await startOurs(mode, [tls.spki])
    log(
      `ours: scan_app through the MCP SDK client, service in ${mode} mode; probe paths per scan: PROBE_PATHS.length = ${PROBE_PATHS.length}`,
    )
    log(`Observatory: node ${Bun.spawnSync([nodePath(), '--version']).stdout.toString().trim()}, test certificate via NODE_EXTRA_CA_CERTS`)
    if (withLighthouse) {
      await startLighthouse()
      log(
        lh
          ? `Lighthouse: API, warm Chromium (${chromePath ?? "Playwright's"}), categories ${LH_CATEGORIES.join(', ')} + ${LH_EXTRA.join(', ')}; ` +
              `${opts.loopback ? 'http sites at their loopback URL' : `http sites as ${LH_ALIAS} (mapped to 127.0.0.1)`}` +
              `${quick ? `; --quick: first ${QUICK_LH_FIXTURES} fixtures only` : ''}`
          : `Lighthouse did not start: ${lhStartError}`,
      )
    } else log('Lighthouse: not run (--no-lighthouse)')
    const missing = MAPPINGS.filter((m) => !OBSERVATORY_CREDITS.some((c) => c.id === m.test)).map((m) => m.test)
    if (missing.length) log(`note: Observatory tests of mapping.ts with no row in exposure-mapping.ts: ${missing.join(', ')}`)
    log('')
    log('How a finding counts for a planted problem (bench/compare-lib/exposure-mapping.ts):')
    log(' ours: the planted check reports a finding (fail or warn)')
    log(' Observatory: a failing test (their pass = false) [with one of these results]:')
    for (const l of describeCredits(OBSERVATORY_CREDITS)) log(`  ${wrap(l, 130, '      ')}`)
    log(
      ` Lighthouse: an audit scored under ${LIGHTHOUSE_PASS_SCORE}, an informative one with a High row, or a runtime error about the site [with a matching row]:`,
    )
    for (const l of describeCredits(LIGHTHOUSE_CREDITS)) log(`  ${wrap(l, 130, '      ')}`)
    log('')

    let lhRuns = 0
    const all = [
      ...fixtures.started.map((s) => ({ name: s.name, started: s })),
      ...fixtures.failed.map((f) => ({ name: f.name, started: null })),
    ]
    all.sort((a, b) => a.name.localeCompare(b.name))
    for (const { name, started } of all) {
      const planted = plantedOf(name)
      const row: FixtureRow = {
        name,
        planted,
        scanUrl: started?.scanUrl ?? null,
        startError: started ? null : (fixtures.failed.find((f) => f.name === name)?.error ?? 'did not start'),
        ours: null,
        oursError: null,
        observatory: null,
        observatoryError: null,
        lighthouse: null,
        lighthouseNote: null,
      }
      rows.push(row)
      if (!started) {
        log(`  ${name.padEnd(26)} did not start: ${row.startError}`)
        continue
      }
      try {
        const { ms, report } = await ours.scan(started.scanUrl)
        const statusOf = Object.fromEntries(report.checks.map((c) => [c.id, c.status]))
        const findings: ToolFinding[] = report.checks
          .filter((c) => c.status === 'fail' || c.status === 'warn')
          .map((c) => ({ id: c.id, detail: c.status, checks: [c.id] }))
        const found = foundBy(planted, findings)
        row.ours = {
          found,
          findings,
          ms,
          missed: planted.all.filter((id) => !found.includes(id)),
          otherFailing: report.checks.filter((c) => c.status === 'fail' && !planted.all.includes(c.id)).map((c) => c.id),
          statusOf,
          budget: probeBudget(report),
        }
      } catch (e) {
        row.oursError = errorMessage(e)
      }
      try {
        const t = await runObservatory(observatoryTargetFor(started.scanUrl, started.site.origins), { extraCa })
        const findings = observatoryFindings(t.tests)
        row.observatory = { found: foundBy(planted, findings), findings, ms: t.wallMs, score: t.scan.score, grade: t.scan.grade }
      } catch (e) {
        row.observatoryError = errorMessage(e).replace(/^Observatory on \S+: /, '')
      }
      if (!withLighthouse) row.lighthouseNote = 'not run (--no-lighthouse)'
      else if (quick && lhRuns >= QUICK_LH_FIXTURES) row.lighthouseNote = `not run (--quick: first ${QUICK_LH_FIXTURES} fixtures)`
      else if (!lh) row.lighthouseNote = `error: Lighthouse did not start: ${lhStartError}`
      else {
        const url = lighthouseUrl(started.scanUrl, opts.loopback ?? false)
        lhRuns++
        let r: LighthouseRun | null = null
        try {
          r = await (lh as LighthouseApi).run(url)
        } catch (e) {
          row.lighthouseNote = `error: ${errorMessage(e)}`
          // A run that timed out leaves the runner mid-answer: start a new one for the next fixture.
          await (lh as LighthouseApi).stop().catch(() => {})
          await startLighthouse()
        }
        if (r) {
          const findings = lighthouseFindings(r.findings ?? [], r.runtimeError)
          row.lighthouse = { found: foundBy(planted, findings), findings, ms: r.ms, url, categories: r.categories }
          if (r.runtimeError) row.lighthouseNote = `runtime error ${r.runtimeError}`
        }
      }
      const cell = (side: ToolSide | null, err: string | null) =>
        side ? `${side.found.length}/${planted.all.length}` : err?.startsWith('not run') ? 'not run' : err ? 'error' : '-'
      log(
        `  ${name.padEnd(26)} planted ${String(planted.all.length).padStart(2)}  ours ${cell(row.ours, row.oursError).padEnd(6)}` +
          `Observatory ${cell(row.observatory, row.observatoryError).padEnd(6)}Lighthouse ${cell(row.lighthouse, row.lighthouseNote)}` +
          `${row.oursError ? `  ours: ${row.oursError}` : ''}`,
      )
    }
  } finally {
    await (lh as LighthouseApi | null)?.stop().catch(() => {})
    await ours?.stop().catch(() => {})
    await stopFixtures(fixtures.started)
    rmSync(caDir, { recursive: true, force: true })
  }

  // The table.
  const plantedCell = (p: Planted) =>
    p.all.length === 0
      ? 'none'
      : [p.fail.length ? `fail: ${p.fail.join(', ')}` : '', p.warn.length ? `warn: ${p.warn.join(', ')}` : ''].filter(Boolean).join('\n')
  const toolCell = (p: Planted, side: ToolSide | null, failingLabel: string, err: string | null) => {
    if (!side) return err ?? '-'
    const others = side.findings.map((f) => f.id)
    return [
      `${side.found.length}/${p.all.length}${side.found.length ? `: ${side.found.join(', ')}` : ''}`,
      `${failingLabel}: ${list([...new Set(others)])}`,
      ...(err ? [err] : []),
    ].join('\n')
  }
  const oursCell = (r: FixtureRow) => {
    if (r.startError) return `did not start: ${r.startError}`
    if (!r.ours) return `error: ${r.oursError}`
    const o = r.ours
    const asWarn = r.planted.fail.filter((id) => o.statusOf[id] === 'warn')
    return [
      `${o.found.length}/${r.planted.all.length}${o.missed.length ? `; missed: ${o.missed.map((id) => `${id} (${o.statusOf[id] ?? 'missing'})`).join(', ')}` : ''}`,
      ...(asWarn.length ? [`warn, planted as fail: ${asWarn.join(', ')}`] : []),
      `also failing: ${list(o.otherFailing)}`,
    ].join('\n')
  }
  const header = [
    'fixture',
    'planted problems (mustFail, mustWarn)',
    'found by scan_app',
    `MDN HTTP Observatory ${obsVersion}`,
    withLighthouse ? `Lighthouse ${lhVersion}` : 'Lighthouse',
  ]
  const table: string[][] = rows.map((r) => [
    r.name,
    plantedCell(r.planted),
    oursCell(r),
    r.startError
      ? '-'
      : toolCell(r.planted, r.observatory, 'failing tests', r.observatoryError && `refused or failed: ${r.observatoryError}`),
    r.startError ? '-' : toolCell(r.planted, r.lighthouse, 'failing audits', r.lighthouseNote),
  ])
  const totalOf = (side: (r: FixtureRow) => ToolSide | null) => {
    const ran = rows.filter((r) => side(r) !== null)
    return {
      found: ran.reduce((a, r) => a + side(r)!.found.length, 0),
      planted: ran.reduce((a, r) => a + r.planted.all.length, 0),
      fixtures: ran.length,
    }
  }
  const totals: ExposureCompareResult['totals'] = {
    ours: totalOf((r) => r.ours),
    observatory: totalOf((r) => r.observatory),
    lighthouse: totalOf((r) => r.lighthouse),
  }
  const allPlanted = rows.reduce((a, r) => a + r.planted.all.length, 0)
  const totalCell = (t: { found: number; planted: number; fixtures: number }) =>
    t.fixtures === 0 ? 'not run' : `${t.found}/${t.planted} planted (${t.fixtures} fixture${t.fixtures === 1 ? '' : 's'} run)`
  table.push([
    'total',
    `${allPlanted} in ${rows.length} fixture${rows.length === 1 ? '' : 's'}`,
    totalCell(totals.ours),
    totalCell(totals.observatory),
    totalCell(totals.lighthouse),
  ])
  log('')
  log('Planted problems and what each tool finds (n/m: planted problems found; then every finding of the tool):')
  log(gridTable(header, table, [24, 34, 36, 36, 40]))

  // Per planted check: who finds it where it is planted.
  const checks = [...new Set(rows.flatMap((r) => r.planted.all))].sort()
  const byCheck: ExposureCompareResult['byCheck'] = checks.map((check) => {
    const on = rows.filter((r) => r.planted.all.includes(check))
    const count = (side: (r: FixtureRow) => ToolSide | null) => {
      const ran = on.filter((r) => side(r) !== null)
      return ran.length ? `${ran.filter((r) => side(r)!.found.includes(check)).length}/${ran.length}` : '-'
    }
    return {
      check,
      fixtures: on.length,
      ours: count((r) => r.ours),
      observatory: count((r) => r.observatory),
      lighthouse: count((r) => r.lighthouse),
    }
  })
  log('')
  log('Per planted check (fixtures where the tool found it / fixtures where it is planted and the tool ran):')
  log(
    textTable(
      [
        ['check', 'planted on', 'scan_app', 'Observatory', 'Lighthouse'],
        ...byCheck.map((b) => [b.check, String(b.fixtures), b.ours, b.observatory, b.lighthouse]),
      ],
      [1, 2, 3, 4],
    ),
  )

  // Request budget and times.
  log('')
  log(
    "Our probes per fixture (requests per scan, beside the page, its http twin and one CORS probe; 'answered' from debug-error-page's evidence) and each tool's time:",
  )
  const brows = [['fixture', 'probe requests', 'from', 'answered', 'probes time', 'scan_app', 'Observatory', 'Lighthouse']]
  for (const r of rows) {
    const b = r.ours?.budget
    brows.push([
      r.name,
      b ? String(b.requests) : '-',
      b?.source ?? (r.startError ? 'did not start' : 'scan failed'),
      b?.answered != null ? String(b.answered) : '-',
      b?.ms != null ? fmtMs(b.ms) : '-',
      r.ours ? fmtMs(r.ours.ms) : '-',
      r.observatory ? fmtMs(r.observatory.ms) : '-',
      r.lighthouse ? fmtMs(r.lighthouse.ms) : '-',
    ])
  }
  log(textTable(brows, [1, 3, 4, 5, 6, 7]))
  const spread = (xs: number[]) => {
    const s = summarize(xs)
    return s.n ? `${fmtMs(s.min)} / ${fmtMs(s.median)} / ${fmtMs(s.max)} (n=${s.n})` : 'n/a'
  }
  log(
    `times over the fixtures (min / median / max): scan_app ${spread(rows.flatMap((r) => (r.ours ? [r.ours.ms] : [])))}; ` +
      `Observatory (node process) ${spread(rows.flatMap((r) => (r.observatory ? [r.observatory.ms] : [])))}; ` +
      `Lighthouse ${spread(rows.flatMap((r) => (r.lighthouse ? [r.lighthouse.ms] : [])))}`,
  )
  log(
    `load average (1, 5, 15 min) at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  )

  return {
    bench: 'exposure-compare',
    mode,
    observatoryVersion: obsVersion,
    lighthouseVersion: lhVersion,
    probePaths: PROBE_PATHS.length,
    fixtures: rows.map((r) => ({
      name: r.name,
      planted: r.planted.all,
      scanUrl: r.scanUrl,
      error: [r.startError && `did not start: ${r.startError}`, r.oursError && `ours: ${r.oursError}`].filter(Boolean).join('; ') || null,
      ours: r.ours ? { found: r.ours.found, otherFailing: r.ours.otherFailing, ms: r.ours.ms, budget: r.ours.budget } : null,
      observatory: r.observatory
        ? { found: r.observatory.found, failing: r.observatory.findings.map((f) => f.id), ms: r.observatory.ms }
        : null,
      lighthouse: r.lighthouse ? { found: r.lighthouse.found, failing: r.lighthouse.findings.map((f) => f.id), ms: r.lighthouse.ms } : null,
      notes: [r.observatoryError && `Observatory: ${r.observatoryError}`, r.lighthouseNote && `Lighthouse: ${r.lighthouseNote}`].filter(
        (x): x is string => Boolean(x),
      ),
    })),
    totals,
    byCheck,
  }
}

/** `--name=a,b` or `--name a,b`. */
function listFlag(name: string): string[] | undefined {
  const argv = process.argv.slice(2)
  let v = flag(name)
  if (v === true) {
    const next = argv[argv.indexOf(`--${name}`) + 1]
    v = next && !next.startsWith('--') ? next : undefined
  }
  if (typeof v !== 'string') return undefined
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

if (import.meta.main) {
  const mode = flag('mode')
  if (mode !== undefined && mode !== 'embedded' && mode !== 'production') throw new Error('--mode must be embedded or production')
  const result = await compareExposure({
    only: listFlag('only'),
    lighthouse: flag('no-lighthouse') !== true,
    quick: flag('quick') === true,
    loopback: flag('lh-loopback') === true,
    mode: (mode as Mode | undefined) ?? 'production',
  })
  await writeResult(result)
  // A fixture that did not start, or a tool that refused or failed on a site, is a row of the table; only our
  // own scan failing on a site that started, or nothing to compare, is a broken run.
  const broken = result.fixtures.some((f) => f.error?.startsWith('ours:') || f.error?.includes('; ours:'))
  process.exit(broken || result.fixtures.every((f) => !f.ours) ? 1 : 0)
}
