// The command as CI runs it: dist/appaudit.js, one file built by scripts/build-cli.ts, run with bun from a
// directory that holds nothing else (no node_modules, no source), against the real service with a free key.
// SARIF, JUnit and Markdown are written by the command itself on the free plan, with the same writers as the
// service's export_report, and each file is valid (schemas, and GitHub code scanning's rules for SARIF).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUNDLE, buildCli } from '../../scripts/build-cli.ts'
import { connectClient, payload } from '../harness/client.ts'
import { githubSarifProblems } from '../harness/github-sarif.ts'
import { machineDeadline } from '../harness/machine.ts'
import { junitSchemaErrors, sarifSchemaErrors } from '../harness/report-formats.ts'
import { startService, type TestService } from '../harness/service.ts'
import { type Site, spaSite, weakSite } from '../fixtures/sites.ts'

let svc: TestService
let weak: Site
let spa: Site
let freeKey: string
const dir = mkdtempSync(join(tmpdir(), 'appaudit-bundle-'))
const bundle = join(dir, 'appaudit.js')

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'all', ALLOW_PRIVATE_TARGETS: 'false', TRUSTED_TARGET_HOSTS: '127.0.0.1' })
  ;[weak, spa] = await Promise.all([weakSite(), spaSite()])
  freeKey = await svc.key('free')
  writeFileSync(bundle, await buildCli())
}, machineDeadline(60_000))
afterAll(async () => {
  await Promise.all([weak?.stop(), spa?.stop()])
  await svc?.stop()
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

/** Runs the bundle from its own empty directory, with only PATH, HOME and the service's variables. */
async function run(args: string[], key = freeKey, serviceUrl = svc.url) {
  const p = Bun.spawn(['bun', bundle, ...args, '--json'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, CI: 'true', APPAUDIT_URL: serviceUrl, APPAUDIT_KEY: key },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 150_000,
    killSignal: 'SIGKILL',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  try {
    return { code, json: JSON.parse(stdout), stderr }
  } catch {
    throw new Error(`no JSON (exit ${code}):\n${stdout}\n${stderr}`)
  }
}

const read = (name: string) => readFileSync(join(dir, name), 'utf8')

describe('dist/appaudit.js', () => {
  test('is what scripts/build-cli.ts makes of the source (run bun run build:cli and commit it when not)', async () => {
    expect(readFileSync(BUNDLE, 'utf8') === (await buildCli())).toBe(true)
  })

  test('on a free key writes SARIF, JUnit and Markdown from the scan, each valid', async () => {
    const sarif = await run(['scan', weak.url, '--format', 'sarif', '--output', 'out/weak.sarif'])
    expect({ code: sarif.code, error: sarif.json.error }).toEqual({ code: 0, error: undefined })
    expect(sarif.json.report).toMatchObject({ format: 'sarif', path: 'out/weak.sarif' })
    const log = JSON.parse(read('out/weak.sarif'))
    expect(sarifSchemaErrors(log)).toEqual([])
    expect(githubSarifProblems(log)).toEqual([])
    const ruleIds = log.runs[0].results.map((r: { ruleId: string }) => r.ruleId)
    expect(ruleIds).toContain('exposed-env-file')
    // The page's URL is in the message, never a location (GitHub would refuse the upload).
    expect(JSON.stringify(log.runs[0].results.map((r: any) => r.locations))).not.toContain('http')
    expect(log.runs[0].results[0].message.text).toContain(`Page: ${weak.url}`)

    const junit = await run(['scan', weak.url, '--output', 'weak.xml'])
    expect(junit.code).toBe(0)
    expect(await junitSchemaErrors(read('weak.xml'))).toEqual([])

    const md = await run(['scan', weak.url, '--format', 'markdown'])
    expect(md.code).toBe(0)
    expect(md.json.report.path).toBe(`appaudit-${md.json.id}.md`)
    expect(read(md.json.report.path)).toStartWith(`## App Audit: ${md.json.score}/100`)
    // Nothing was asked of the Launch plan, and the free key's account spent only its three scans.
    const client = await connectClient(svc.mcpUrl, freeKey)
    try {
      expect(payload(await client.callTool({ name: 'get_account', arguments: {} })).usage.scans).toBe(3)
    } finally {
      await client.close()
    }
  }, 300_000)

  test('without thresholds, critical findings pass with exit 0 and a notice that no threshold was set', async () => {
    const r = await run(['scan', weak.url])
    expect(r.code).toBe(0)
    expect(r.json.notice).toContain('no threshold was set, so')
    expect(r.json.notice).toContain('exposed-env-file')
    const guarded = await run(['scan', weak.url, '--min-score', '0'])
    expect(guarded.json.notice).toBeUndefined()
  }, 200_000)

  test('writes the same SARIF as the service export_report does for that scan (Launch key)', async () => {
    const key = await svc.key('launch')
    // Given as the endpoint itself, the service URL still yields links to the docs at the service's base.
    const r = await run(['scan', weak.url, '--format', 'sarif', '--output', 'mine.sarif'], key, `${svc.url}/api/mcp`)
    expect(r.code).toBe(0)
    const client = await connectClient(svc.mcpUrl, key)
    try {
      const answer = payload(await client.callTool({ name: 'export_report', arguments: { scanId: r.json.id, format: 'sarif' } }))
      const theirs = answer.content ?? (await (await fetch(answer.url)).text())
      expect(JSON.parse(read('mine.sarif'))).toEqual(JSON.parse(theirs))
    } finally {
      await client.close()
    }
  }, 200_000)

  test('an audit on a free key writes its SARIF from the findings and checks sections', async () => {
    const r = await run(['audit', spa.url, '--wait', '--max-pages', '2', '--timeout', '120', '--format', 'sarif', '--output', 'site.sarif'])
    expect({ code: r.code, error: r.json.error }).toEqual({ code: 0, error: undefined })
    const log = JSON.parse(read('site.sarif'))
    expect(sarifSchemaErrors(log)).toEqual([])
    expect(githubSarifProblems(log)).toEqual([])
    expect(log.runs[0].properties).toMatchObject({ kind: 'audit', id: r.json.id, score: r.json.score })
    expect(log.runs[0].tool.driver.rules.length).toBeGreaterThan(10)
    expect(log.runs[0].results.length).toBe(r.json.findings.length)
  }, 200_000)
})
