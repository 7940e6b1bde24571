// compare_scans and export_report through the official SDK client, over scans and an audit that really ran
// (production mode: PostgreSQL, Redis, crawler workers and Chromium in the same process) on fixture sites
// whose headers change between runs. Exports are checked against schemas written by others
// (test/harness/report-formats.ts), and a hostile string planted in a header must come out escaped.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import pkg from '../../package.json' with { type: 'json' }
import { pageReference, SARIF_LEVEL } from '../../shared/report/export/sarif.ts'
import { githubSarifProblems } from '../harness/github-sarif.ts'
import { marked } from 'marked'
import { spaSite, type Site } from '../fixtures/sites.ts'
import { call, connectClient, errorOf, ok } from '../harness/client.ts'
import { junitSchemaErrors, sarifSchemaErrors } from '../harness/report-formats.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until, within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

type Args = Record<string, unknown>

const HOSTILE = '<script>alert("pwned")</script>'
const INLINE_LIMIT = 12 * 1024
/** The one check whose result depends on the machine's speed (time to first byte, load event). */
const MACHINE_TIMED = 'perf-timing'

/** A one-page site whose response headers the test changes between scans; the CSP carries HOSTILE. */
function headerSite(initial: Record<string, string>): Site & { set(h: Record<string, string>): void } {
  let headers = initial
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/'
        ? new Response('<!doctype html><html lang="en"><head><title>Shop</title></head><body><h1>Shop</h1></body></html>', {
            headers: { 'content-type': 'text/html; charset=utf-8', ...headers },
          })
        : new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } }),
  })
  return { url: `http://127.0.0.1:${server.port}/`, set: (h) => void (headers = h), stop: async () => void server.stop(true) }
}

const LAX_CSP = { 'content-security-policy': `default-src 'self' 'unsafe-inline' ${HOSTILE}` }
const V1 = { ...LAX_CSP, 'x-frame-options': 'DENY' }
const V2 = { ...LAX_CSP, 'x-content-type-options': 'nosniff' }

let svc: TestService
let launch: Client
let otherAccount: Client
let free: Client
let site: ReturnType<typeof headerSite>
let spa: Site
let scanA: any, scanB: any, scanC: any, spaScan: any
const exportsSeen: Array<{ bytes: number; inline: boolean }> = []

/** An export's text: inline, or fetched from its link (checking the link's answer on the way). */
async function exportText(args: Args): Promise<{ answer: any; text: string }> {
  const answer = await ok(launch, 'export_report', args)
  expect(answer.format).toBe(args.format)
  exportsSeen.push({ bytes: answer.bytes, inline: answer.content !== undefined })
  if (answer.bytes <= INLINE_LIMIT) {
    expect(answer.url).toBeUndefined()
    expect(Buffer.byteLength(answer.content, 'utf8')).toBe(answer.bytes)
    return { answer, text: answer.content }
  }
  expect(answer.content).toBeUndefined()
  // The link names the service's own URL: on port 0, the port it got.
  expect(answer.url.startsWith(`${svc.url}/`)).toBe(true)
  const res = await within(fetch(answer.url), 10_000, 'the export link')
  expect(res.status).toBe(200)
  const text = await res.text()
  expect(Buffer.byteLength(text, 'utf8')).toBe(answer.bytes)
  return { answer, text }
}

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'all', WORKER_CONCURRENCY: '2', AUDIT_CONCURRENCY: '1' })
  launch = await connectClient(svc.mcpUrl, await svc.key('launch'))
  otherAccount = await connectClient(svc.mcpUrl, await svc.key('launch'))
  free = await connectClient(svc.mcpUrl, await svc.key('free'))
  site = headerSite(V1)
  spa = await spaSite()
  scanA = await ok(launch, 'scan_app', { url: site.url, detail: 'full' })
  site.set(V2)
  ;[scanB, spaScan] = await Promise.all([
    ok(launch, 'scan_app', { url: site.url, detail: 'full' }),
    ok(launch, 'scan_app', { url: spa.url }),
  ])
  scanC = await ok(launch, 'scan_app', { url: site.url, detail: 'full' })
}, machineDeadline(120_000))

afterAll(async () => {
  for (const c of [launch, otherAccount, free]) await c?.close()
  await site?.stop()
  await spa?.stop()
  await svc?.stop()
}, 60_000)

describe('compare_scans', () => {
  test('after a header change, reports the new and fixed findings, the unchanged ones, the score delta and a sentence', async () => {
    const r = await ok(launch, 'compare_scans', { baseScanId: scanA.id, headScanId: scanB.id })
    expect(r.base).toEqual({ id: scanA.id, kind: 'scan', score: scanA.score, grade: scanA.grade, createdAt: scanA.createdAt })
    expect(r.head).toMatchObject({ id: scanB.id, kind: 'scan', score: scanB.score, grade: scanB.grade })
    expect(r.scoreDelta).toBe(scanB.score - scanA.score)
    expect(r.gradeChange).toEqual({ from: scanA.grade, to: scanB.grade })

    // X-Frame-Options went away (frame-protection fails now), X-Content-Type-Options arrived (fixed).
    expect(r.findings.new.map((f: any) => f.checkId)).toContain('frame-protection')
    expect(r.findings.fixed.map((f: any) => f.checkId)).toContain('x-content-type-options')
    const unchanged = r.findings.unchanged.map((f: any) => f.checkId)
    expect(unchanged).toContain('csp')
    expect(unchanged).not.toContain('frame-protection')
    expect(r.counts).toEqual({ new: r.findings.new.length, fixed: r.findings.fixed.length, unchanged: r.findings.unchanged.length })
    const csp = r.findings.unchanged.find((f: any) => f.checkId === 'csp')
    expect(Object.keys(csp).sort()).toEqual(['checkId', 'fingerprint', 'impact', 'severity', 'status', 'title'])
    expect(csp).toMatchObject({ status: 'fail', severity: 'high', impact: 25 })
    expect(csp.fingerprint).toMatch(/^csp:[0-9a-f]{16}$/)
    for (const list of [r.findings.new, r.findings.fixed, r.findings.unchanged]) {
      const impacts = list.map((f: any) => f.impact)
      expect(impacts).toEqual([...impacts].sort((a: number, b: number) => b - a))
    }
    expect(r.checksChanged).toContainEqual({ checkId: 'frame-protection', title: expect.any(String), from: 'pass', to: 'fail' })
    expect(r.checksChanged).toContainEqual({ checkId: 'x-content-type-options', title: expect.any(String), from: 'fail', to: 'pass' })

    const sign = r.scoreDelta > 0 ? '+' : r.scoreDelta < 0 ? '' : '±'
    const grades = scanA.grade === scanB.grade ? scanB.grade : `${scanA.grade} -> ${scanB.grade}`
    expect(r.summary.startsWith(`Score ${scanA.score} -> ${scanB.score} (${sign}${r.scoreDelta}, ${grades}): `)).toBe(true)
    expect(r.summary).toContain(`${r.counts.fixed} fixed, ${r.counts.new} new (`)
    expect(r.summary).toContain('frame-protection: ')
    expect(r.summary).toEndWith(`${r.counts.unchanged} unchanged.`)
  })

  test('two scans of an unchanged site have the same fingerprints: nothing new, nothing fixed', async () => {
    const r = await ok(launch, 'compare_scans', { baseScanId: scanB.id, headScanId: scanC.id })
    // perf-timing judges how fast this machine served and loaded the page, which load beside the test can
    // change between two scans; every other check reads only what the unchanged site sent.
    const stable = (xs: any[]) => xs.filter((x) => x.checkId !== MACHINE_TIMED)
    expect(stable(r.findings.new)).toEqual([])
    expect(stable(r.findings.fixed)).toEqual([])
    expect(stable(r.checksChanged)).toEqual([])
    const timingMoved = r.checksChanged.some((c: any) => c.checkId === MACHINE_TIMED)
    const failing = scanC.checks.filter((c: any) => c.status === 'fail' || c.status === 'warn')
    expect(r.counts.unchanged).toBe(failing.length - (timingMoved && failing.some((c: any) => c.id === MACHINE_TIMED) ? 1 : 0))
    if (!timingMoved) expect(r.summary).toContain(': 0 fixed, 0 new, ')
  })

  test("refuses another app's scan, and answers not_found for an unknown id or another account's", async () => {
    const otherApp = await errorOf(launch, 'compare_scans', { baseScanId: scanA.id, headScanId: spaScan.id })
    expect(otherApp.code).toBe('invalid_params')
    expect(otherApp.message).toContain('same app')
    expect(otherApp.message).toContain(new URL(spa.url).origin)
    expect((await errorOf(launch, 'compare_scans', { baseScanId: scanA.id, headScanId: 'scn_doesnotexist' })).code).toBe('not_found')
    expect((await errorOf(launch, 'compare_scans', { baseScanId: 'aud_doesnotexist', headScanId: scanA.id })).code).toBe('not_found')
    expect((await errorOf(otherAccount, 'compare_scans', { baseScanId: scanA.id, headScanId: scanB.id })).code).toBe('not_found')
    expect((await errorOf(launch, 'compare_scans', { baseScanId: 'scan-1', headScanId: scanB.id })).code).toBe('invalid_params')
  })

  test('a free account gets plan_required for both tools', async () => {
    for (const [name, args] of [
      ['compare_scans', { baseScanId: scanA.id, headScanId: scanB.id }],
      ['export_report', { scanId: scanA.id, format: 'sarif' }],
    ] as const) {
      const e = await errorOf(free, name, args)
      expect(e).toMatchObject({ code: 'plan_required', requiredPlan: 'launch', currentPlan: 'free' })
    }
  })

  test('compares an audit with a scan of the same app, and exports the audit', async () => {
    const started = await ok(launch, 'audit_app', { url: site.url, options: { maxPages: 1, maxDepth: 0 } })
    // Usually still queued or running here (a clear error); a very fast crawl may already be done.
    const early = await call(launch, 'compare_scans', { baseScanId: started.auditId, headScanId: scanC.id })
    if (early.isError) {
      expect(early.body.error.code).toBe('scanner_unavailable')
      expect(early.body.error.message).toContain('poll get_audit')
    }
    const done = await until(
      async () => {
        const a = await ok(launch, 'get_audit', { auditId: started.auditId })
        return (a.status === 'completed' || a.status === 'failed') && a
      },
      90_000,
      'the audit to finish',
      { everyMs: 250 },
    )
    expect(done.status).toBe('completed')
    const r = await ok(launch, 'compare_scans', { baseScanId: started.auditId, headScanId: scanC.id })
    expect(r.base).toMatchObject({ id: started.auditId, kind: 'audit', score: done.result.score, grade: done.result.grade })
    expect(r.head).toMatchObject({ id: scanC.id, kind: 'scan' })
    expect(r.summary).toStartWith(`Score ${done.result.score} -> ${scanC.score} (`)
    expect([...r.findings.new, ...r.findings.fixed, ...r.findings.unchanged].map((f: any) => f.checkId)).toContain('csp')

    const md = await exportText({ auditId: started.auditId, format: 'markdown' })
    expect(md.answer.filename).toBe(`appaudit-${started.auditId}.md`)
    expect(md.text).toContain(`## App Audit: ${done.result.score}/100 (${done.result.grade})`)
    expect(md.text).toContain('| Pages |')
    const junit = await exportText({ auditId: started.auditId, format: 'junit' })
    expect(await junitSchemaErrors(junit.text)).toEqual([])
  }, 120_000)
})

describe('export_report', () => {
  test('SARIF is valid against the SARIF 2.1.0 schema, with a rule per check and levels from severity', async () => {
    const { answer, text } = await exportText({ scanId: scanB.id, format: 'sarif' })
    expect(answer).toMatchObject({ mediaType: 'application/sarif+json', filename: `appaudit-${scanB.id}.sarif` })
    const log = JSON.parse(text)
    expect(sarifSchemaErrors(log)).toEqual([])
    expect(githubSarifProblems(log)).toEqual([])
    expect(log.version).toBe('2.1.0')
    expect(log.runs).toHaveLength(1)
    const run = log.runs[0]
    const base = svc.running.services.config.baseUrl
    expect(run.tool.driver).toMatchObject({ name: 'App Audit', version: pkg.version, informationUri: expect.stringContaining(base) })
    expect(run.tool.driver.rules.map((r: any) => r.id)).toEqual(scanB.checks.map((c: any) => c.id))
    for (const rule of run.tool.driver.rules) {
      expect(rule.helpUri).toBe(`${base}/docs/checks#${rule.id}`)
      expect(rule.help.text.length).toBeGreaterThan(20)
      expect(rule.help.markdown.length).toBeGreaterThan(20)
      expect(rule.shortDescription.text.length).toBeGreaterThan(3)
      expect(rule.fullDescription.text.length).toBeGreaterThan(20)
      expect(typeof rule.properties.category).toBe('string')
      expect(typeof rule.properties.severity).toBe('string')
    }
    const findings = scanB.checks.filter((c: any) => c.status === 'fail' || c.status === 'warn')
    expect(run.results.map((r: any) => r.ruleId).sort()).toEqual(findings.map((c: any) => c.id).sort())
    for (const result of run.results) {
      const check = scanB.checks.find((c: any) => c.id === result.ruleId)
      expect(result.level).toBe(SARIF_LEVEL[check.severity as keyof typeof SARIF_LEVEL])
      expect(run.tool.driver.rules[result.ruleIndex].id).toBe(result.ruleId)
      // A relative reference GitHub accepts (no http: scheme), with the page's URL in the message and properties.
      expect(result.locations[0].physicalLocation.artifactLocation.uri).toBe(pageReference(scanB.finalUrl))
      expect(result.message.text).toContain(`Page: ${scanB.finalUrl}`)
      expect(result.properties.page).toBe(scanB.finalUrl)
      expect(result.partialFingerprints['appauditFingerprint/v1']).toMatch(new RegExp(`^${result.ruleId}:[0-9a-f]{16}$`))
    }
    expect(run.results.find((r: any) => r.ruleId === 'csp').level).toBe('error')
  })

  test('SARIF fingerprints are identical across exports of two scans with the same findings', async () => {
    const fingerprints = async (scanId: string) => {
      const log = JSON.parse((await exportText({ scanId, format: 'sarif' })).text)
      return log.runs[0].results
        .filter((r: any) => r.ruleId !== MACHINE_TIMED)
        .map((r: any) => r.partialFingerprints['appauditFingerprint/v1'])
        .sort()
    }
    const [b, c, a] = await Promise.all([fingerprints(scanB.id), fingerprints(scanC.id), fingerprints(scanA.id)])
    expect(b.length).toBeGreaterThan(3)
    expect(c).toEqual(b)
    expect(a).not.toEqual(b)
  })

  test('JUnit XML is valid against the JUnit schema: one suite, one case per check, failures and skips', async () => {
    const { answer, text } = await exportText({ scanId: scanA.id, format: 'junit' })
    expect(answer).toMatchObject({ mediaType: 'application/xml', filename: `appaudit-${scanA.id}.junit.xml` })
    expect(await junitSchemaErrors(text)).toEqual([])
    expect(text.match(/<testsuite /g)).toHaveLength(1)
    expect(text.match(/<testcase /g)).toHaveLength(scanA.checks.length)
    const failing = scanA.checks.filter((c: any) => c.status === 'fail' || c.status === 'warn')
    expect(text.match(/<failure /g)).toHaveLength(failing.length)
    expect(text.match(/<skipped\/>/g)?.length ?? 0).toBe(scanA.summary.skipped)
    expect(text).toContain(`classname="security" name="csp: `)
    expect(text).toContain(`failures="${failing.length}"`)
    expect(text).not.toContain('<script')
    expect(text).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;')
  })

  test('Markdown and HTML list the failing checks and escape what the site sent', async () => {
    const failing = scanA.checks.filter((c: any) => c.status === 'fail' || c.status === 'warn').map((c: any) => c.id)
    const md = await exportText({ scanId: scanA.id, format: 'markdown' })
    expect(md.answer.mediaType).toBe('text/markdown')
    expect(md.text).toContain(`## App Audit: ${scanA.score}/100 (${scanA.grade})`)
    expect(md.text).toContain('<details>')
    for (const id of failing) expect(md.text).toContain(`| \`${id}\` `)
    // Text, not entities (the script the site planted is in the evidence's fenced JSON), and rendered as
    // GitHub would, it is text there too.
    expect(md.text).not.toMatch(/&#\d+;|&quot;/)
    const rendered = marked.parse(md.text, { gfm: true, async: false }) as string
    expect(rendered).not.toMatch(/<(script|img|iframe)\b|<[^>]*\son[a-z]+=/i)
    expect(rendered).toContain('&lt;script&gt;')

    const html = await exportText({ scanId: scanA.id, format: 'html' })
    expect(html.answer.mediaType).toBe('text/html')
    expect(html.text).toStartWith('<!doctype html>')
    for (const id of failing) expect(html.text).toContain(`<code>${id}</code>`)
    expect(html.text).not.toMatch(/<(script|img|link|iframe|object)\b|<[^>]*\son[a-z]+=|<[^>]*\ssrc=/i)
    // The evidence is shown as JSON, so the planted quotes arrive as \" before they are escaped.
    expect(html.text).toContain('&lt;script&gt;alert(\\&quot;pwned\\&quot;)&lt;/script&gt;')
  })

  test('a large export is a one-hour link served as a download; an unknown token is 404', async () => {
    const { answer } = await exportText({ scanId: scanA.id, format: 'sarif' })
    expect(answer.bytes).toBeGreaterThan(INLINE_LIMIT)
    expect(answer.url).toMatch(new RegExp(`^${svc.running.services.config.baseUrl}/api/exports/[A-Za-z0-9_-]{43}$`))
    const expires = Date.parse(answer.expiresAt) - Date.now()
    expect(expires).toBeGreaterThan(3_500_000)
    expect(expires).toBeLessThanOrEqual(3_600_000)
    const res = await fetch(`${svc.url}${new URL(answer.url).pathname}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/sarif+json; charset=utf-8')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="appaudit-${scanA.id}.sarif"`)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const downloaded = await res.json()
    expect(sarifSchemaErrors(downloaded)).toEqual([])
    expect(githubSarifProblems(downloaded)).toEqual([])

    const real = new URL(answer.url).pathname.slice(-43)
    const nearlyReal = `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`
    for (const token of ['nope', 'A'.repeat(43), nearlyReal, `${real}x`, '%ZZ']) {
      const bad = await fetch(`${svc.url}/api/exports/${token}`)
      expect(bad.status).toBe(token === '%ZZ' ? 400 : 404)
      expect(await bad.text()).not.toContain('sarif')
    }
    // Exports at most 12 KB came back inline in this file's other tests, larger ones as links.
    for (const e of exportsSeen) expect(e.inline).toBe(e.bytes <= INLINE_LIMIT)
    expect(exportsSeen.some((e) => e.inline)).toBe(true)
  })

  test('needs exactly one of scanId and auditId, and refuses unknown ids', async () => {
    expect((await errorOf(launch, 'export_report', { format: 'html' })).code).toBe('invalid_params')
    expect((await errorOf(launch, 'export_report', { scanId: scanA.id, auditId: 'aud_x1', format: 'html' })).code).toBe('invalid_params')
    expect((await errorOf(launch, 'export_report', { scanId: scanA.id, format: 'pdf' })).code).toBe('invalid_params')
    expect((await errorOf(launch, 'export_report', { scanId: 'scn_doesnotexist', format: 'junit' })).code).toBe('not_found')
    expect((await errorOf(otherAccount, 'export_report', { scanId: scanA.id, format: 'junit' })).code).toBe('not_found')
  })
})
