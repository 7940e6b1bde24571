// scan_app end to end through the SDK client, in both modes: api -> queue -> worker (Chromium) ->
// Postgres -> api, against fixture sites with expected outcomes per check.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type Mode, type TestService } from '../harness/service.ts'
import { hardenedSite, silentSite, spaSite, testCertificate, weakSite, type Site } from '../fixtures/sites.ts'
import { machineDeadline } from '../harness/machine.ts'

type Expect = Record<string, string>

const WEAK: Expect = {
  csp: 'fail',
  hsts: 'skipped',
  'x-content-type-options': 'fail',
  'frame-protection': 'fail',
  'referrer-policy': 'warn',
  'cookie-secure': 'warn',
  'cookie-httponly': 'fail',
  'cookie-samesite': 'warn',
  'https-redirect': 'fail',
  'mixed-content': 'skipped',
  'version-disclosure': 'fail',
  'exposed-env-file': 'fail',
  'exposed-git-config': 'fail',
  'js-secrets': 'fail',
}

const HARDENED: Expect = {
  csp: 'pass',
  hsts: 'pass',
  'x-content-type-options': 'pass',
  'frame-protection': 'pass',
  'referrer-policy': 'pass',
  'cookie-secure': 'pass',
  'cookie-httponly': 'pass',
  'cookie-samesite': 'pass',
  'https-redirect': 'pass',
  'mixed-content': 'pass',
  'version-disclosure': 'pass',
  'exposed-env-file': 'pass',
  'exposed-git-config': 'pass',
  'js-secrets': 'info',
}

const SPA: Partial<Expect> = { 'exposed-env-file': 'pass', 'exposed-git-config': 'pass', 'js-secrets': 'info' }

function statuses(report: { checks: Array<{ id: string; status: string }> }, only?: Expect) {
  return Object.fromEntries(report.checks.filter((c) => !only || c.id in only).map((c) => [c.id, c.status]))
}

const tls = testCertificate()

describe.each(['embedded', 'production'] as Mode[])('scan_app in %s mode', (mode) => {
  let svc: TestService
  let client: Client
  const sites: Site[] = []
  let weak: Site, hardened: Site, spa: Site

  beforeAll(async () => {
    svc = await startService(mode, { TRUSTED_CERT_SPKI: tls.spki })
    client = await connectClient(svc.mcpUrl, await svc.key())
    sites.push((weak = await weakSite()), (hardened = await hardenedSite(tls)), (spa = await spaSite()))
  })
  afterAll(async () => {
    await client?.close()
    for (const s of sites) await s.stop()
    await svc?.stop()
  })

  const scan = async (url: string, onprogress?: (p: { progress: number; total?: number; message?: string }) => void) =>
    client.callTool({ name: 'scan_app', arguments: { url } }, undefined, { timeout: 60_000, onprogress })

  test('the weak site fails what it should, with specific evidence and advice ordered by impact', async () => {
    const r = await scan(weak.url)
    expect(r.isError).toBeFalsy()
    const report = payload(r)
    expect(statuses(report, WEAK)).toEqual(WEAK)
    expect(report.score).toBeLessThan(30)
    expect(report.grade).toBe('F')
    const byId = Object.fromEntries(report.checks.map((c: { id: string }) => [c.id, c]))
    expect(JSON.stringify(byId['version-disclosure'].evidence)).toContain('nginx/1.18.0')
    expect(JSON.stringify(byId['exposed-env-file'].evidence)).toContain('DATABASE_URL')
    expect(JSON.stringify(byId['exposed-env-file'].evidence)).not.toContain('hunter2')
    const secrets = JSON.stringify(byId['js-secrets'].evidence)
    expect(secrets).toContain('/app.js')
    expect(secrets).not.toContain('51HqLyjWDarjtT1zdp7dcXQ2N8x')
    // The default answer is compact: the findings come first, highest impact first, each with its advice.
    const findings = report.checks.filter((c: { status: string }) => c.status === 'fail' || c.status === 'warn')
    expect(findings.length).toBeGreaterThan(5)
    expect(findings.every((c: { advice: string }) => c.advice.length > 0)).toBe(true)
    const impacts = findings.map((a: { impact: number }) => a.impact)
    expect(impacts).toEqual([...impacts].sort((a, b) => b - a))
    // The whole report keeps its advice list in the same order.
    const full = payload(await client.callTool({ name: 'get_scan', arguments: { scanId: report.id, detail: 'full' } })).report
    expect(full.advice.map((a: { checkId: string }) => a.checkId)).toEqual(findings.map((c: { id: string }) => c.id))
  })

  test('the hardened https site yields no high or critical finding', async () => {
    const report = payload(await scan(hardened.url))
    expect(statuses(report, HARDENED)).toEqual(HARDENED)
    expect(report.finalUrl).toStartWith('https://localhost:')
    const serious = report.checks.filter(
      (c: { status: string; severity: string }) =>
        (c.status === 'fail' || c.status === 'warn') && (c.severity === 'high' || c.severity === 'critical'),
    )
    expect(serious).toEqual([])
    expect(report.score).toBeGreaterThanOrEqual(90)
  })

  test('an SPA answering index.html for every path raises no exposed-file finding', async () => {
    const report = payload(await scan(spa.url))
    for (const [id, status] of Object.entries(SPA)) expect(`${id}: ${statuses(report)[id]}`).toBe(`${id}: ${status}`)
  })

  test('progress notifications reach a caller that sent a progressToken, always increasing', async () => {
    const seen: number[] = []
    const r = await scan(spa.url, (p) => seen.push(p.progress))
    expect(r.isError).toBeFalsy()
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(seen).toEqual([...seen].sort((a, b) => a - b))
    expect(new Set(seen).size).toBe(seen.length)
  })

  test('scans are stored: get_scan returns the same report, get_account counts them', async () => {
    const report = payload(await scan(weak.url))
    const stored = payload(await client.callTool({ name: 'get_scan', arguments: { scanId: report.id } }))
    expect(stored.status).toBe('completed')
    expect(stored.report).toEqual(report)
    const account = payload(await client.callTool({ name: 'get_account', arguments: {} }))
    expect(account.usage.scans).toBeGreaterThanOrEqual(4)
    expect(account.usage.apps).toBeGreaterThanOrEqual(3)
  })

  test('a URL that never answers fails with target_unreachable, in bounded time', async () => {
    const silent = await silentSite()
    sites.push(silent)
    const t0 = Date.now()
    const r = await scan(silent.url)
    expect(r.isError).toBe(true)
    expect(payload(r).error.code).toBe('target_unreachable')
    expect(Date.now() - t0).toBeLessThan(machineDeadline(20_000))
  })

  test('a port nobody listens on fails with target_unreachable', async () => {
    const r = await scan('http://127.0.0.1:9/')
    expect(r.isError).toBe(true)
    expect(payload(r).error.code).toBe('target_unreachable')
  })
})
