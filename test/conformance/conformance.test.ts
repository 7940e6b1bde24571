// The official MCP conformance suite (@modelcontextprotocol/conformance, every server scenario) against
// the real service, through a proxy that adds the bearer key the suite cannot send. Every check must pass
// except those listed in expected-failures.json, and every listed one must still fail the way it says.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MCP_HEADERS, initializeBody } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { startAuthProxy, type AuthProxy } from './auth-proxy.ts'
import expectedFile from './expected-failures.json' with { type: 'json' }

const ROOT = join(import.meta.dir, '..', '..')
const CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const SUITE_TIMEOUT_MS = 5 * 60_000

type Status = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'
interface Check {
  id: string
  status: Status
  errorMessage?: string
  details?: unknown
}
interface Expected {
  reason: string
  error: string
}
interface Outcome {
  key: string
  scenario: string
  check: Check
}

const EXPECTED: Record<string, Expected> = expectedFile.expected

let svc: TestService
let proxy: AuthProxy
let outDir: string

interface CliRun {
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
}

/** Runs the suite's CLI with bun (it needs Node 22+ otherwise), killed after `timeoutMs`. */
async function cli(args: string[], timeoutMs: number): Promise<CliRun> {
  const proc = Bun.spawn([process.execPath, CLI, ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, timeoutMs)
  try {
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    const exitCode = await proc.exited
    return { exitCode, stdout, stderr, timedOut }
  } finally {
    clearTimeout(timer)
  }
}

/** The scenario a results directory belongs to: `server-<scenario>-<ISO time with : and . as ->`. */
function scenarioOf(dir: string): string | null {
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(dir)
  return m ? m[1]! : null
}

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'api' })
  proxy = startAuthProxy({ target: svc.url, key: await svc.key('free') })
  outDir = mkdtempSync(join(tmpdir(), 'appaudit-conformance-'))
})
afterAll(async () => {
  await proxy?.stop()
  await svc?.stop()
  if (outDir) rmSync(outDir, { recursive: true, force: true })
})

describe('auth proxy', () => {
  test('adds the bearer key when the request has none', async () => {
    const res = await fetch(`${proxy.url}/api/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(initializeBody()) })
    expect(res.status).toBe(200)
    expect(res.headers.get('mcp-session-id')).toMatch(/^mcs_/)
  })

  test("keeps the client's own Authorization header", async () => {
    const res = await fetch(`${proxy.url}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: 'Bearer act_not_a_real_key' },
      body: JSON.stringify(initializeBody()),
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('invalid_token')
  })

  test("forwards the client's Host header, so the service's Host check decides", async () => {
    const res = await fetch(`${proxy.url}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, host: 'evil.example.com' },
      body: JSON.stringify(initializeBody()),
    })
    expect(res.status).toBe(403)
  })

  test('forwards other paths to the same path', async () => {
    const res = await fetch(`${proxy.url}/healthz`)
    expect(res.status).toBe(200)
    expect((await res.json()).ok).toBe(true)
  })

  test('streams SSE: the first event arrives while the stream is still open', async () => {
    const init = await fetch(`${proxy.url}/api/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(initializeBody()) })
    const sessionId = init.headers.get('mcp-session-id')!
    await init.text()
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(), 5_000)
    try {
      const res = await fetch(`${proxy.url}/api/mcp`, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
        signal: abort.signal,
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/event-stream')
      const reader = res.body!.getReader()
      const first = await reader.read()
      expect(first.done).toBe(false)
      expect(new TextDecoder().decode(first.value)).toContain(': stream open')
      await reader.cancel()
    } finally {
      clearTimeout(timer)
      abort.abort()
    }
  })
})

describe('MCP conformance suite', () => {
  test('every server scenario: only the expected failures fail, and all of them still do', async () => {
    const listed = await cli(['list', '--server'], 30_000)
    expect(listed.exitCode).toBe(0)
    const scenarios = [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!)
    expect(scenarios.length).toBeGreaterThanOrEqual(30)
    for (const core of ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection']) {
      expect(scenarios).toContain(core)
    }

    // 127.0.0.1 rather than localhost: dns-rebinding-protection accepts either, and no name lookup is involved.
    const url = `http://127.0.0.1:${proxy.port}/api/mcp`
    const before = proxy.requests
    const run = await cli(['server', '--url', url, '--suite', 'all', '-o', outDir], SUITE_TIMEOUT_MS)
    if (run.timedOut || run.exitCode === null || run.exitCode > 1) {
      throw new Error(
        `conformance CLI did not complete (exit ${run.exitCode}, timed out: ${run.timedOut})\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-4000)}`,
      )
    }
    expect(proxy.requests - before).toBeGreaterThan(scenarios.length)

    // One results directory (checks.json) per scenario.
    const outcomes: Outcome[] = []
    const ran = new Set<string>()
    for (const dir of readdirSync(outDir)) {
      const scenario = scenarioOf(dir)
      const file = join(outDir, dir, 'checks.json')
      if (!scenario || !existsSync(file)) continue
      ran.add(scenario)
      for (const check of JSON.parse(readFileSync(file, 'utf8')) as Check[])
        outcomes.push({ key: `${scenario}/${check.id}`, scenario, check })
    }
    expect([...ran].sort()).toEqual([...scenarios].sort())

    // The suite's own totals agree with what we read.
    const total = /Total: (\d+) passed, (\d+) failed/.exec(run.stdout)
    expect(total).not.toBeNull()
    const passed = outcomes.filter((o) => o.check.status === 'SUCCESS')
    const failing = outcomes.filter((o) => o.check.status === 'FAILURE' || o.check.status === 'WARNING')
    expect(Number(total![1])).toBe(passed.length)
    expect(Number(total![2])).toBe(outcomes.filter((o) => o.check.status === 'FAILURE').length)

    const explain = (o: Outcome) =>
      `${o.key} [${o.check.status}] ${o.check.errorMessage ?? ''}${o.check.details ? ` details=${JSON.stringify(o.check.details).slice(0, 600)}` : ''}`
    const unexpected = failing.filter((o) => {
      const e = EXPECTED[o.key]
      return !e || o.check.status !== 'FAILURE' || !new RegExp(e.error).test(o.check.errorMessage ?? '')
    })
    const failingKeys = new Set(failing.map((o) => o.key))
    const stale = Object.keys(EXPECTED).filter((key) => !failingKeys.has(key))
    const expectedHit = failing.length - unexpected.length

    console.log(
      `conformance: ${ran.size} scenarios, ${outcomes.length} checks: ${passed.length} passed, ${failing.length} failed ` +
        `(${expectedHit} expected, ${unexpected.length} unexpected), ${outcomes.length - passed.length - failing.length} info; ` +
        `${stale.length} stale expected-failure entries`,
    )
    // unexpected: failures not listed (or failing differently from how the entry says): defects in the server.
    // stale: listed failures that now pass (or no longer run): remove them from expected-failures.json.
    expect({ unexpected: unexpected.map(explain), stale }).toEqual({ unexpected: [], stale: [] })
    // The transport/lifecycle scenarios, and the capabilities beside tools, that must pass outright.
    for (const key of [
      'server-initialize/server-initialize',
      'logging-set-level/logging-set-level',
      'completion-complete/completion-complete',
      'prompts-list/prompts-list',
      'resources-list/resources-list',
      'ping/ping',
      'tools-list/tools-list',
      'dns-rebinding-protection/localhost-host-rebinding-rejected',
      'dns-rebinding-protection/localhost-host-valid-accepted',
      'server-sse-multiple-streams/server-accepts-multiple-post-streams',
    ]) {
      expect(passed.map((o) => o.key)).toContain(key)
    }
  })
})
