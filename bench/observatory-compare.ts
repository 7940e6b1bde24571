// Agreement between the pinned MDN HTTP Observatory (@mdn/mdn-http-observatory, algorithm v4) and our
// scan_app, test by test, over the same sites: every fixture site under test/fixtures/sites/ plus small
// "edge" sites (bench/compare-lib/edge-sites.ts) that sit on the boundaries of the Observatory's tests.
//
// Each Observatory test maps to our check(s) (bench/compare-lib/mapping.ts); both answers become pass or
// fail by the rules printed at the top, and the table says how often they agree. Every disagreement is
// listed with both sides' results and a short reason read from the evidence. docs/observatory-compare.md
// records what each disagreement means (deliberate, or a check to fix).
//
// The Observatory runs under node on host:port of the scanned URL, exactly as its CLI does (http://host:port
// and https://host:port); for a site whose http form redirects to https on another port (a real site's 80
// and 443), its retriever is given both ports. Both sides trust the test certificate: ours by SPKI pin
// (TRUSTED_CERT_SPKI, as in the e2e tests), theirs through NODE_EXTRA_CA_CERTS.
//
//   bun bench/observatory-compare.ts                  fixtures + edge sites, service in production mode
//   options: --fixtures-only  --sites=a,b  --mode=embedded|production  --no-ground-truth  --result=FILE (JSON)
//
// The run ends with a "ground truth" table: the same Chromium, fed the exact header forms the two scanners
// disagree on (repeated HSTS and nosniff, ALLOW-FROM, frame-ancestors *, CORP case, credentialed CORS),
// shows which reading browsers follow.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CheckStatus } from '../shared/checks/types.ts'
import { penaltyOf, gradeOf } from '../shared/report/scoring.ts'
import { testCertificate } from '../test/fixtures/sites.ts'
import type { Mode } from '../test/harness/service.ts'
import { chromiumPath } from '../crawler/browser.ts'
import { chromiumGroundTruth, type GroundTruthRow } from './compare-lib/chromium-ground-truth.ts'
import { startEdgeSites, EDGE_ABOUT } from './compare-lib/edge-sites.ts'
import { explain, type Disagreement } from './compare-lib/explain.ts'
import { startFixtures, stopFixtures, type StartedFixture } from './compare-lib/fixtures.ts'
import { MAPPINGS, theirVerdict, type Verdict } from './compare-lib/mapping.ts'
import {
  describeTarget,
  nodePath,
  observatoryTargetFor,
  observatoryVersion,
  prepareObservatory,
  preloadListSize,
  runObservatory,
  type ObservatoryResult,
} from './compare-lib/observatory.ts'
import { startOurs, type OurCheck, type OurReport } from './compare-lib/ours.ts'
import { textTable, wrap } from './compare-lib/text.ts'
import { flag, fmtMs, writeResult } from './lib/stats.ts'
import { errorMessage } from '../shared/errors.ts'

interface SiteRun {
  name: string
  group: 'fixture' | 'edge'
  scanUrl: string
  target: string
  theirs: ObservatoryResult | null
  theirsError: string | null
  ours: { ms: number; report: OurReport } | null
  oursError: string | null
}

interface TestRow {
  test: string
  checks: string[]
  agree: number
  total: number
  byGroup: Record<'fixture' | 'edge', { agree: number; total: number }>
}

export interface ObservatoryCompareResult {
  bench: 'observatory-compare'
  observatoryVersion: string
  mode: Mode
  sites: Array<{
    name: string
    group: 'fixture' | 'edge'
    scanUrl: string
    target: string
    theirs: { score: number; grade: string; ms: number; wallMs: number } | null
    ours: { score: number; grade: string; mappedScore: number; mappedGrade: string; ms: number } | null
    error: string | null
  }>
  tests: TestRow[]
  disagreements: Disagreement[]
  groundTruth: GroundTruthRow[]
  /** Fixture modules that did not start. */
  fixtureErrors: Array<{ name: string; error: string }>
  anomalies: string[]
}

/** What the Observatory's scan() throws for a site it will not grade. */
const OBSERVATORY_REFUSALS = /^theirs: [^;]*(unexpected HTTP status code|seems to be down)[^;]*$/

const MAPPED_IDS = [...new Set(MAPPINGS.flatMap((m) => m.checks))]

/** Our score over the mapped checks only: 100 minus their penalties, as shared/report/scoring.ts counts them. */
function mappedScore(checks: OurCheck[]): number {
  const penalty = checks
    .filter((c) => MAPPED_IDS.includes(c.id))
    .reduce((sum, c) => sum + penaltyOf({ id: c.id, status: c.status as CheckStatus }), 0)
  return Math.max(0, 100 - penalty)
}

export async function compareWithObservatory(
  opts: { mode?: Mode; fixturesOnly?: boolean; only?: string[]; groundTruth?: boolean; log?: (l: string) => void } = {},
): Promise<ObservatoryCompareResult> {
  const log = opts.log ?? ((l: string) => console.log(l))
  const mode = opts.mode ?? 'production'
  const wrote = prepareObservatory()
  const version = observatoryVersion()
  const tls = testCertificate()
  const caDir = mkdtempSync(join(tmpdir(), 'observatory-ca-'))
  const extraCa = join(caDir, 'test-ca.pem')
  writeFileSync(extraCa, tls.cert)

  let fixtures: Awaited<ReturnType<typeof startFixtures>> = { started: [], failed: [] }
  let edge: StartedFixture[] = []
  let all: Array<StartedFixture & { group: 'fixture' | 'edge' }> = []
  const runs: SiteRun[] = []
  const anomalies: string[] = []
  let ours: Awaited<ReturnType<typeof startOurs>> | null = null
  try {
    fixtures = await startFixtures(opts.only)
    if (!opts.fixturesOnly) {
      const started = await startEdgeSites(tls)
      edge = started.filter((s) => !opts.only || opts.only.includes(s.name))
      await stopFixtures(started.filter((s) => !edge.includes(s)))
    }
    all = [...fixtures.started.map((s) => ({ ...s, group: 'fixture' as const })), ...edge.map((s) => ({ ...s, group: 'edge' as const }))]
    log(`Observatory vs scan_app: ${all.length} sites (${fixtures.started.length} fixtures, ${edge.length} edge sites)`)
    const nodeVersion = Bun.spawnSync([nodePath(), '--version']).stdout.toString().trim()
    log(
      `Observatory: @mdn/mdn-http-observatory ${version} under node ${nodeVersion}, HSTS preload list of ${preloadListSize()} hosts${wrote.length ? `; wrote offline stand-ins: ${wrote.join(', ')}` : ''}`,
    )
    for (const f of fixtures.failed) log(`fixture ${f.name} did not start: ${f.error}`)
    ours = await startOurs(mode, [tls.spki])
    log(`ours: scan_app through the MCP SDK client, service in ${mode} mode, test certificate trusted by SPKI pin`)
    log('')
    log('Mapping (their result lists come from their source; "ours" reads our check results):')
    for (const m of MAPPINGS) {
      log(`  ${m.test} <- ${m.checks.join(' + ')}`)
      log(`      ${wrap(m.rule, 110, '      ')}`)
    }
    log('')

    let selfChecked = false
    for (const s of all) {
      const target = observatoryTargetFor(s.scanUrl, s.site.origins)
      const run: SiteRun = {
        name: s.name,
        group: s.group,
        scanUrl: s.scanUrl,
        target: describeTarget(target),
        theirs: null,
        theirsError: null,
        ours: null,
        oursError: null,
      }
      const selfCheck = !selfChecked && 'target' in target
      try {
        run.theirs = await runObservatory(target, { extraCa, selfCheck })
        if (selfCheck) {
          selfChecked = true
          const sc = run.theirs.selfCheck
          const line = `self-check: the ported scan (retrieve with ports) ${sc?.identical ? 'gives the same score, grade and results as' : 'DIFFERS from'} the package's scan() on ${s.name}`
          log(line)
          if (!sc?.identical) anomalies.push(line)
        }
      } catch (e) {
        run.theirsError = errorMessage(e)
      }
      try {
        run.ours = await ours.scan(s.scanUrl)
      } catch (e) {
        run.oursError = errorMessage(e)
      }
      const err = [run.theirsError && `theirs: ${run.theirsError}`, run.oursError && `ours: ${run.oursError}`].filter(Boolean).join('; ')
      log(
        `  ${s.name.padEnd(30)} ${run.target.padEnd(44)} Observatory ${run.theirs ? `${String(run.theirs.scan.score).padStart(3)} ${run.theirs.scan.grade.padEnd(2)}` : '  -   '}  ours ${run.ours ? `${String(run.ours.report.score).padStart(3)} ${run.ours.report.grade.padEnd(2)}` : '  -   '}${err ? `  ERROR ${err}` : ''}`,
      )
      runs.push(run)
    }
  } finally {
    await ours?.stop().catch(() => {})
    await stopFixtures([...fixtures.started, ...edge])
    rmSync(caDir, { recursive: true, force: true })
  }

  // Verdicts.
  const rows: TestRow[] = []
  const disagreements: Disagreement[] = []
  for (const m of MAPPINGS) {
    const row: TestRow = {
      test: m.test,
      checks: m.checks,
      agree: 0,
      total: 0,
      byGroup: { fixture: { agree: 0, total: 0 }, edge: { agree: 0, total: 0 } },
    }
    for (const r of runs) {
      if (!r.theirs || !r.ours) continue
      const checks = new Map(r.ours.report.checks.map((c) => [c.id, c]))
      const t = theirVerdict(m, r.theirs.tests[m.test])
      if (t.anomaly) anomalies.push(`${r.name} ${m.test}: ${t.anomaly}`)
      const o = m.ours(checks)
      row.total++
      row.byGroup[r.group].total++
      const agree = t.verdict !== 'n/a' && t.verdict === o.verdict
      if (agree) {
        row.agree++
        row.byGroup[r.group].agree++
        continue
      }
      const host = new URL(r.scanUrl).hostname
      const { why, kind } = explain(m, r.theirs.tests[m.test], t.verdict, o.verdict as Verdict, checks, host)
      disagreements.push({ site: r.name, test: m.test, theirs: `${t.verdict} (${t.result})`, ours: `${o.verdict} (${o.basis})`, why, kind })
    }
    rows.push(row)
  }

  // Output.
  const compared = runs.filter((r) => r.theirs && r.ours).length
  log('')
  log(`Agreement per Observatory test (${compared} sites scanned by both):`)
  const trows = [['test', 'our check(s)', 'agree/total', 'fixtures', 'edge sites']]
  for (const r of rows) {
    trows.push([
      r.test,
      r.checks.join(' + '),
      `${r.agree}/${r.total}`,
      `${r.byGroup.fixture.agree}/${r.byGroup.fixture.total}`,
      `${r.byGroup.edge.agree}/${r.byGroup.edge.total}`,
    ])
  }
  const sum = (f: (r: TestRow) => number) => rows.reduce((a, r) => a + f(r), 0)
  trows.push([
    'all tests',
    '',
    `${sum((r) => r.agree)}/${sum((r) => r.total)}`,
    `${sum((r) => r.byGroup.fixture.agree)}/${sum((r) => r.byGroup.fixture.total)}`,
    `${sum((r) => r.byGroup.edge.agree)}/${sum((r) => r.byGroup.edge.total)}`,
  ])
  log(textTable(trows, [2, 3, 4]))

  log('')
  log(`Disagreements (${disagreements.length}):`)
  if (disagreements.length === 0) log('  none')
  for (const d of disagreements) {
    log(`  ${d.test} @ ${d.site}${EDGE_ABOUT[d.site] ? ` (${EDGE_ABOUT[d.site]})` : ''}`)
    log(`      theirs: ${d.theirs}`)
    log(`      ours:   ${d.ours}`)
    log(`      why:    ${wrap(d.why, 110, '              ')}`)
  }

  log('')
  log(
    'Scores per site (Observatory: 100 plus modifiers, bonuses only from 90 up, so up to 135; ours: 100 minus penalties over all our checks, and over the mapped checks only):',
  )
  const srows = [['site', 'Observatory', 'ours', 'ours (mapped checks)', 'Observatory time (scan / node process)', 'scan_app time']]
  const sites: ObservatoryCompareResult['sites'] = []
  for (const r of runs) {
    const ms = r.ours ? mappedScore(r.ours.report.checks) : NaN
    srows.push([
      r.name,
      r.theirs ? `${r.theirs.scan.score} ${r.theirs.scan.grade}` : 'error',
      r.ours ? `${r.ours.report.score} ${r.ours.report.grade}` : 'error',
      r.ours ? `${ms} ${gradeOf(ms)}` : '-',
      r.theirs ? `${fmtMs(r.theirs.ms)} / ${fmtMs(r.theirs.wallMs)}` : '-',
      r.ours ? fmtMs(r.ours.ms) : '-',
    ])
    sites.push({
      name: r.name,
      group: r.group,
      scanUrl: r.scanUrl,
      target: r.target,
      theirs: r.theirs ? { score: r.theirs.scan.score, grade: r.theirs.scan.grade, ms: r.theirs.ms, wallMs: r.theirs.wallMs } : null,
      ours: r.ours
        ? { score: r.ours.report.score, grade: r.ours.report.grade, mappedScore: ms, mappedGrade: gradeOf(ms), ms: r.ours.ms }
        : null,
      error: [r.theirsError && `theirs: ${r.theirsError}`, r.oursError && `ours: ${r.oursError}`].filter(Boolean).join('; ') || null,
    })
  }
  log(textTable(srows, [1, 2, 3, 4, 5]))

  let groundTruth: GroundTruthRow[] = []
  if (opts.groundTruth !== false) {
    log('')
    log(
      'Ground truth: what this Chromium (project flags) does with the header forms behind the disagreements (raw-socket servers, exact bytes):',
    )
    groundTruth = await chromiumGroundTruth(chromiumPath(''), tls)
    log(textTable([['case', 'sent', 'Chromium'], ...groundTruth.map((g) => [g.case, g.sent, g.outcome])]))
  }
  if (anomalies.length) {
    log('')
    log('Anomalies (the comparison itself may be off):')
    for (const a of anomalies) log(`  ${a}`)
  }
  return {
    bench: 'observatory-compare',
    observatoryVersion: version,
    mode,
    sites,
    tests: rows,
    disagreements,
    groundTruth,
    fixtureErrors: fixtures.failed,
    anomalies,
  }
}

if (import.meta.main) {
  const mode = flag('mode')
  if (mode !== undefined && mode !== 'embedded' && mode !== 'production') throw new Error('--mode must be embedded or production')
  const sitesFlag = flag('sites')
  const result = await compareWithObservatory({
    mode: (mode as Mode | undefined) ?? 'production',
    fixturesOnly: flag('fixtures-only') === true,
    groundTruth: flag('no-ground-truth') !== true,
    only:
      typeof sitesFlag === 'string'
        ? sitesFlag
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined,
  })
  await writeResult(result)
  // The Observatory refusing a site (its root answers 404 or 5xx, or nothing) makes that site not comparable,
  // which the output says; anything else failing on either side is a broken run.
  const broken = result.sites.filter((s) => s.error && !OBSERVATORY_REFUSALS.test(s.error))
  process.exit(broken.length > 0 || result.fixtureErrors.length > 0 || result.sites.length === 0 ? 1 : 0)
}
