// The GitHub Action (action.yml at the repository root), read with a YAML parser and run here: each
// `run:` step goes to bash as a GitHub runner would (bash -eo pipefail, GITHUB_OUTPUT, GITHUB_ACTION_PATH),
// with the `${{ ... }}` expressions replaced by this test's inputs and the outputs of earlier steps,
// against a real service. `uses:` steps (oven-sh/setup-bun, github/codeql-action/upload-sarif) need
// GitHub's runner and are skipped; their `if:` conditions are checked as text. The action's path holds
// only action.yml and dist/appaudit.js, so a step that needed anything else (an install) would fail.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { startService, type TestService } from '../harness/service.ts'
import { type Site, spaSite, weakSite } from '../fixtures/sites.ts'
import { githubSarifProblems } from '../harness/github-sarif.ts'
import { sarifSchemaErrors } from '../harness/report-formats.ts'
import { machineDeadline } from '../harness/machine.ts'

const ROOT = join(import.meta.dir, '..', '..')

interface Step {
  name?: string
  id?: string
  if?: string
  uses?: string
  run?: string
  shell?: string
  env?: Record<string, string>
  with?: Record<string, string>
}
interface Action {
  name: string
  inputs: Record<string, { description: string; required?: boolean; default?: string }>
  outputs: Record<string, { value: string }>
  runs: { using: string; steps: Step[] }
}

const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action

let svc: TestService
let weak: Site
let spa: Site
const scratch = mkdtempSync(join(tmpdir(), 'appaudit-action-'))
/** The action as GitHub checks it out, cut to what its steps may use: action.yml and the bundled command. */
const actionPath = join(scratch, 'action')
mkdirSync(join(actionPath, 'dist'), { recursive: true })
copyFileSync(join(ROOT, 'action.yml'), join(actionPath, 'action.yml'))
copyFileSync(join(ROOT, 'dist', 'appaudit.js'), join(actionPath, 'dist', 'appaudit.js'))

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'all', ALLOW_PRIVATE_TARGETS: 'false', TRUSTED_TARGET_HOSTS: '127.0.0.1' })
  ;[weak, spa] = await Promise.all([weakSite(), spaSite()])
}, machineDeadline(60_000))
afterAll(async () => {
  await Promise.all([weak?.stop(), spa?.stop()])
  await svc?.stop()
  rmSync(scratch, { recursive: true, force: true })
}, 60_000)

interface StepRun {
  step: string
  code: number | null
  output: string
}

/** Runs the action's run steps in order, as GitHub would with these inputs; returns each step's result. */
async function runAction(given: Record<string, string>, workspace: string) {
  const inputs: Record<string, string> = {}
  for (const [name, def] of Object.entries(action.inputs)) inputs[name] = given[name] ?? def.default ?? ''
  const outputs: Record<string, Record<string, string>> = {}
  const expand = (text: string) =>
    text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (whole, expr: string) => {
      let m = /^inputs\.([a-z-]+)$/.exec(expr)
      if (m) return inputs[m[1]!] ?? ''
      m = /^steps\.([a-z-]+)\.outputs\.([a-z-]+)$/.exec(expr)
      if (m) return outputs[m[1]!]?.[m[2]!] ?? ''
      throw new Error(`an expression this test cannot evaluate: ${whole}`)
    })

  const runs: StepRun[] = []
  let failed = false
  for (const [i, step] of action.runs.steps.entries()) {
    if (step.uses) continue // needs GitHub's runner (see the header)
    // GitHub skips a step after a failure unless its condition says always().
    if (failed && !step.if?.includes('always()')) continue
    const outFile = join(workspace, `.github-output-${i}`)
    writeFileSync(outFile, '')
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GITHUB_ACTION_PATH: actionPath,
      GITHUB_OUTPUT: outFile,
      GITHUB_WORKSPACE: workspace,
      GITHUB_ACTIONS: 'true',
    }
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(String(v))
    expect(step.shell).toBe('bash')
    const p = Bun.spawn(['bash', '--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {
      cwd: workspace,
      env,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 180_000,
      killSignal: 'SIGKILL',
    })
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    runs.push({ step: step.name ?? step.id ?? String(i), code, output: out + err })
    if (step.id) {
      outputs[step.id] = Object.fromEntries(
        readFileSync(outFile, 'utf8')
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      )
    }
    if (code !== 0) failed = true
  }
  const last = runs.at(-1)!
  return { runs, outputs, jobCode: last.code, output: runs.map((r) => r.output).join('') }
}

const workspace = (name: string) => {
  const d = join(scratch, name)
  return mkdtempSync(`${d}-`)
}

describe('action.yml', () => {
  test('is a composite action with the documented inputs, bun set up only when missing, and SARIF uploaded', () => {
    expect(action.runs.using).toBe('composite')
    for (const input of ['url', 'key', 'min-score', 'fail-on', 'format', 'output', 'baseline']) expect(action.inputs[input]).toBeDefined()
    expect(action.inputs.format!.default).toBe('sarif')
    expect(action.inputs.url!.required).toBe(true)
    const uses = action.runs.steps.filter((s) => s.uses)
    const setup = uses.find((s) => s.uses!.startsWith('oven-sh/setup-bun@'))!
    expect(setup.if).toBe("steps.bun.outputs.present != 'true'")
    // Pinned by commit, not by a tag that can move; bun pinned to the version the bundle is tested with.
    expect(setup.uses).toMatch(/^oven-sh\/setup-bun@[0-9a-f]{40}$/)
    expect(setup.with!['bun-version']).toMatch(/^\d+\.\d+\.\d+$/)
    // Nothing is installed: the command is the one bundled file.
    for (const s of action.runs.steps) if (s.run) expect(s.run).not.toMatch(/\b(bun|npm) (install|i|ci)\b|node_modules/)
    expect(action.runs.steps.some((s) => s.run?.includes('"$GITHUB_ACTION_PATH/dist/appaudit.js"'))).toBe(true)
    const upload = uses.find((s) => s.uses!.startsWith('github/codeql-action/upload-sarif@'))!
    expect(upload.uses).toMatch(/^github\/codeql-action\/upload-sarif@[0-9a-f]{40}$/)
    // After a failed gate too, only for SARIF, only when a report was written.
    expect(upload.if).toBe("always() && inputs.format == 'sarif' && steps.gate.outputs.report != ''")
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
    expect(upload.with!.sarif_file).toBe('${{ steps.gate.outputs.report }}')
    // Inputs reach the scripts through env only: none is spliced into a script.
    for (const s of action.runs.steps) if (s.run) expect(s.run).not.toContain('${{')
  })

  test('its run steps pass a clean site and report exit code 0 (free key, no report)', async () => {
    const r = await runAction(
      { url: spa.url, key: await svc.key('free'), 'service-url': svc.url, 'fail-on': 'critical', format: '' },
      workspace('pass'),
    )
    expect(r.jobCode).toBe(0)
    expect(r.outputs.gate!['exit-code']).toBe('0')
    expect(r.outputs.bun!.present).toBe('true')
    expect(r.output).toContain('result: passed (exit 0)')
  }, 200_000)

  test('its run steps fail the job with exit code 1 when the gate fails, after every step that must still run', async () => {
    const r = await runAction(
      { url: weak.url, key: await svc.key('free'), 'service-url': svc.url, 'fail-on': 'critical', format: '' },
      workspace('fail'),
    )
    expect(r.outputs.gate!['exit-code']).toBe('1')
    expect(r.jobCode).toBe(1)
    expect(r.runs.at(-1)!.step).toBe('Fail the job as the gate said')
  }, 200_000)

  test('its defaults work on a free key: appaudit.sarif written, valid for code scanning, and named for the upload step', async () => {
    const ws = workspace('free-sarif')
    const r = await runAction({ url: weak.url, key: await svc.key('free'), 'service-url': svc.url }, ws)
    expect(r.jobCode).toBe(0)
    expect(r.outputs.gate!.report).toBe('appaudit.sarif')
    const log = JSON.parse(readFileSync(join(ws, 'appaudit.sarif'), 'utf8'))
    expect(sarifSchemaErrors(log)).toEqual([])
    expect(githubSarifProblems(log)).toEqual([])
    // No threshold was given and the site has a critical finding: the log says that nothing gated it.
    expect(r.output).toContain('NOTE no threshold was set, so')
    expect(r.output).toMatch(/^::warning title=App Audit::no threshold was set, so \d+ critical finding/m)
  }, 200_000)

  test('sarif-path locates every result at that repository file, and a failed gate still leaves the report', async () => {
    const ws = workspace('sarif-path')
    const r = await runAction(
      { url: weak.url, key: await svc.key('free'), 'service-url': svc.url, 'fail-on': 'critical', 'sarif-path': 'public/_headers' },
      ws,
    )
    expect(r.outputs.gate!.report).toBe('appaudit.sarif')
    expect(r.jobCode).toBe(1)
    const log = JSON.parse(readFileSync(join(ws, 'appaudit.sarif'), 'utf8'))
    const uris = new Set(log.runs[0].results.map((x: any) => x.locations[0].physicalLocation.artifactLocation.uri))
    expect([...uris]).toEqual(['public/_headers'])
  }, 200_000)
})
