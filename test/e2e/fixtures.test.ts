// Every fixture site in test/fixtures/sites/ scanned once, end to end through MCP with the SDK client, in
// production mode (PostgreSQL, Redis queue, worker with Chromium), and judged against its expectations in
// test/fixtures/expectations/<name>.json. Also keeps the expectations and the check registry in step: every
// id they name is registered, and every registered check is expected to pass, fail or warn somewhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CHECKS } from '../../shared/checks/registry.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { testCertificate } from '../fixtures/sites.ts'
import { scanUrl, type FixtureSite, type ScanReport } from '../fixtures/sites/lib/serve.ts'
import { errorMessage } from '../../shared/errors.ts'
import { machineDeadline } from '../harness/machine.ts'

const EXPECTATIONS_DIR = join(import.meta.dir, '..', 'fixtures', 'expectations')
const SITES_DIR = join(import.meta.dir, '..', 'fixtures', 'sites')

const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const
type Severity = (typeof SEVERITIES)[number]
const RANK: Record<string, number> = Object.fromEntries(SEVERITIES.map((s, i) => [s, i]))

/** The status lists, each naming check ids. */
const LISTS = ['mustPass', 'mustFail', 'mustWarn', 'mustInfo', 'quiet'] as const
type ListName = (typeof LISTS)[number]
const WANTED: Record<Exclude<ListName, 'quiet'>, string> = { mustPass: 'pass', mustFail: 'fail', mustWarn: 'warn', mustInfo: 'info' }
/** What "quiet" allows: no finding and no crash. */
const QUIET = new Set(['pass', 'info', 'skipped'])

interface Expectation extends Record<ListName, string[]> {
  /** How to scan the site: a URL over the origins it started, e.g. "{http}/" or "{https}/". */
  url: string
  notes: string
  /** Expected severity of a check's result, for checks whose severity depends on what they found. */
  severities: Record<string, Severity>
  /** Substrings each check's evidence (as JSON) must contain. */
  evidence: Record<string, string[]>
  /** No fail or warn may be more severe than this. */
  maxSeverityFinding?: Severity
  minScore?: number
  maxScore?: number
}

const KEYS = new Set(['url', 'notes', ...LISTS, 'severities', 'evidence', 'maxSeverityFinding', 'minScore', 'maxScore'])
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Reads one expectations file; returns the problems instead when it is malformed. */
function parseExpectation(raw: unknown): { ok: true; value: Expectation } | { ok: false; problems: string[] } {
  const problems: string[] = []
  if (!isRecord(raw)) return { ok: false, problems: ['not a JSON object'] }
  for (const key of Object.keys(raw)) if (!KEYS.has(key)) problems.push(`unknown key "${key}"`)
  if (typeof raw.url !== 'string' || !/^\{https?\}\//.test(raw.url))
    problems.push('"url" must be a template starting with {http}/ or {https}/')
  if (typeof raw.notes !== 'string' || raw.notes.trim() === '') problems.push('"notes" must say what the site represents')
  for (const list of LISTS) {
    if (raw[list] !== undefined && !isStringArray(raw[list])) problems.push(`"${list}" must be an array of check ids`)
  }
  const severities = raw.severities ?? {}
  if (!isRecord(severities) || !Object.values(severities).every((s) => typeof s === 'string' && s in RANK)) {
    problems.push(`"severities" must map check ids to one of ${SEVERITIES.join(', ')}`)
  }
  const evidence = raw.evidence ?? {}
  if (!isRecord(evidence) || !Object.values(evidence).every(isStringArray))
    problems.push('"evidence" must map check ids to arrays of substrings')
  if (raw.maxSeverityFinding !== undefined && !(typeof raw.maxSeverityFinding === 'string' && raw.maxSeverityFinding in RANK)) {
    problems.push(`"maxSeverityFinding" must be one of ${SEVERITIES.join(', ')}`)
  }
  for (const key of ['minScore', 'maxScore'] as const) {
    if (raw[key] !== undefined && (typeof raw[key] !== 'number' || raw[key] < 0 || raw[key] > 100))
      problems.push(`"${key}" must be a number from 0 to 100`)
  }
  if (problems.length > 0) return { ok: false, problems }
  const value = {
    ...(raw as Partial<Expectation>),
    ...Object.fromEntries(LISTS.map((l) => [l, (raw[l] as string[] | undefined) ?? []])),
    severities: severities as Record<string, Severity>,
    evidence: evidence as Record<string, string[]>,
  } as Expectation
  // An id in two lists that cannot both hold is a mistake in the file, not in the check.
  const exclusive: ListName[] = ['mustPass', 'mustFail', 'mustWarn', 'mustInfo']
  for (const [i, a] of exclusive.entries()) {
    for (const b of exclusive.slice(i + 1)) {
      for (const id of value[a].filter((x) => value[b].includes(x))) problems.push(`"${id}" is in both ${a} and ${b}`)
    }
  }
  for (const id of value.quiet.filter((x) => value.mustFail.includes(x) || value.mustWarn.includes(x))) {
    problems.push(`"${id}" is quiet but also expected to fail or warn`)
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value }
}

/** Every check id an expectation names, anywhere. */
function namedIds(e: Expectation): string[] {
  return [...new Set([...LISTS.flatMap((l) => e[l]), ...Object.keys(e.severities), ...Object.keys(e.evidence)])]
}

const fileNames = readdirSync(EXPECTATIONS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
const loaded = fileNames.map((file) => {
  const name = file.slice(0, -'.json'.length)
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(join(EXPECTATIONS_DIR, file), 'utf8'))
  } catch (e) {
    return { name, expectation: null, problems: [`does not parse: ${errorMessage(e)}`] }
  }
  const parsed = parseExpectation(raw)
  return parsed.ok ? { name, expectation: parsed.value, problems: [] } : { name, expectation: null, problems: parsed.problems }
})
const expectations = loaded.flatMap((l) => (l.expectation ? [{ name: l.name, expectation: l.expectation }] : []))
const siteModules = readdirSync(SITES_DIR)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -'.ts'.length))
  .sort()
const registered = new Set<string>(CHECKS.map((c) => c.id))

describe('fixture expectations', () => {
  test('at least 15 fixture sites, each expectations file well-formed and backed by a site module', () => {
    const problems = loaded.flatMap((l) => l.problems.map((p) => `expectations/${l.name}.json: ${p}`))
    for (const { name } of loaded) {
      if (!existsSync(join(SITES_DIR, `${name}.ts`))) problems.push(`expectations/${name}.json has no site module sites/${name}.ts`)
    }
    for (const name of siteModules) {
      if (!fileNames.includes(`${name}.json`)) problems.push(`sites/${name}.ts has no expectations file expectations/${name}.json`)
    }
    expect(problems).toEqual([])
    expect(expectations.length).toBeGreaterThanOrEqual(15)
  })

  test('every check id the expectations name is registered', () => {
    const namedBy = new Map<string, string[]>()
    for (const { name, expectation } of expectations) {
      for (const id of namedIds(expectation)) namedBy.set(id, [...(namedBy.get(id) ?? []), name])
    }
    const unknown = [...namedBy]
      .filter(([id]) => !registered.has(id))
      .map(([id, sites]) => `"${id}" (named by ${sites.join(', ')}) is not a registered check`)
    expect(unknown).toEqual([])
  })

  test('every registered check is expected to pass, fail or warn on at least one fixture site', () => {
    const covered = new Set(expectations.flatMap(({ expectation: e }) => [...e.mustPass, ...e.mustFail, ...e.mustWarn]))
    const uncovered = [...registered]
      .filter((id) => !covered.has(id))
      .map((id) => `registered check "${id}" is in no expectations file's mustPass, mustFail or mustWarn`)
    expect(uncovered).toEqual([])
  })
})

const clip = (s: string, max = 240) => (s.length > max ? `${s.slice(0, max)}…` : s)

/** Everything wrong with one site's report, as readable sentences. */
function judge(name: string, e: Expectation, site: FixtureSite, report: ScanReport): string[] {
  const problems: string[] = []
  const byId = new Map(report.checks.map((c) => [c.id, c]))
  const absent = (id: string, wanted: string) =>
    `site ${name}: check ${id} expected ${wanted}, but the report has no check ${id} (not registered?)`

  for (const list of ['mustPass', 'mustFail', 'mustWarn', 'mustInfo'] as const) {
    const wanted = WANTED[list]
    for (const id of e[list]) {
      const c = byId.get(id)
      if (!c) problems.push(absent(id, wanted))
      else if (c.status !== wanted) problems.push(`site ${name}: check ${id} expected ${wanted}, got ${c.status}: ${c.summary}`)
    }
  }
  for (const id of e.quiet) {
    const c = byId.get(id)
    if (!c) problems.push(absent(id, 'quiet'))
    else if (!QUIET.has(c.status))
      problems.push(`site ${name}: check ${id} expected quiet (pass, info or skipped), got ${c.status} (${c.severity}): ${c.summary}`)
  }
  for (const [id, severity] of Object.entries(e.severities)) {
    const c = byId.get(id)
    if (!c) problems.push(absent(id, `severity ${severity}`))
    else if (c.severity !== severity)
      problems.push(`site ${name}: check ${id} expected severity ${severity}, got ${c.severity} (${c.status}): ${c.summary}`)
  }
  for (const [id, needles] of Object.entries(e.evidence)) {
    const c = byId.get(id)
    if (!c) {
      problems.push(absent(id, 'evidence'))
      continue
    }
    const text = JSON.stringify(c.evidence)
    for (const needle of needles) {
      if (!text.includes(needle))
        problems.push(`site ${name}: check ${id} evidence lacks "${needle}" (${c.status}: ${c.summary}); evidence: ${clip(text, 400)}`)
    }
  }
  if (e.maxSeverityFinding) {
    const max = e.maxSeverityFinding
    for (const c of report.checks) {
      if ((c.status === 'fail' || c.status === 'warn') && (RANK[c.severity] ?? 0) > RANK[max]!) {
        problems.push(`site ${name}: check ${c.id} is a ${c.status} at severity ${c.severity}, above the allowed ${max}: ${c.summary}`)
      }
    }
  }
  if (e.minScore !== undefined && report.score < e.minScore)
    problems.push(`site ${name}: score ${report.score} is below the minimum ${e.minScore}`)
  if (e.maxScore !== undefined && report.score > e.maxScore)
    problems.push(`site ${name}: score ${report.score} is above the maximum ${e.maxScore}`)
  for (const c of report.checks) {
    if (c.status === 'error') problems.push(`site ${name}: check ${c.id} crashed: ${c.summary}`)
  }
  // Every report states its probe requests, and they stay within the budget.
  if (!report.probes) problems.push(`site ${name}: the report does not state its probe requests`)
  else if (report.probes.sent > report.probes.budget || report.probes.sent === 0)
    problems.push(`site ${name}: ${report.probes.sent} probe requests against a budget of ${report.probes.budget}`)
  const whole = JSON.stringify(report)
  for (const secret of site.secrets ?? []) {
    if (whole.includes(secret))
      problems.push(
        `site ${name}: the report contains a fabricated secret unredacted (${secret.slice(0, 6)}…, ${secret.length} characters)`,
      )
  }
  for (const p of site.verify?.(report) ?? []) problems.push(`site ${name}: ${p}`)
  return problems
}

describe('fixture sites scanned end to end through MCP (production mode)', () => {
  const tls = testCertificate()
  let svc: TestService
  let client: Client
  const sites = new Map<string, FixtureSite>()
  const startErrors = new Map<string, string>()

  beforeAll(async () => {
    svc = await startService('production', { TRUSTED_CERT_SPKI: tls.spki })
    client = await connectClient(svc.mcpUrl, await svc.key())
    for (const { name } of expectations) {
      try {
        const mod = (await import(join(SITES_DIR, `${name}.ts`))) as { start?: () => Promise<FixtureSite> }
        if (typeof mod.start !== 'function') throw new Error(`sites/${name}.ts does not export start()`)
        sites.set(name, await mod.start())
      } catch (e) {
        startErrors.set(name, errorMessage(e))
      }
    }
  }, machineDeadline(60_000))

  afterAll(async () => {
    await client?.close()
    for (const site of sites.values()) await site.stop().catch(() => {})
    await svc?.stop()
  })

  for (const { name, expectation } of expectations) {
    test(`site ${name}`, async () => {
      const site = sites.get(name)
      if (!site) throw new Error(`site ${name}: could not start: ${startErrors.get(name) ?? 'unknown error'}`)
      const url = scanUrl(expectation.url, site)
      if (!url)
        throw new Error(
          `site ${name}: expectations url ${expectation.url} names an origin the site does not serve (${JSON.stringify(site.origins)})`,
        )
      const result = await client.callTool({ name: 'scan_app', arguments: { url, detail: 'full' } }, undefined, { timeout: 60_000 })
      const body = payload(result)
      if (result.isError) throw new Error(`site ${name}: scan_app ${url} failed: ${JSON.stringify(body)}`)
      expect(judge(name, expectation, site, body as ScanReport)).toEqual([])
    }, 90_000)
  }
})
