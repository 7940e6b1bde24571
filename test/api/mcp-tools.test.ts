// Tools through the official SDK client: listing, validation, plan gating, not-built tools.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'

const FREE = [
  'scan_app',
  'audit_app',
  'get_audit',
  'get_scan',
  'get_findings',
  'get_fix_brief',
  'list_apps',
  'scan_history',
  'explain_check',
  'check_data_exposure',
  'verify_site',
  'get_account',
]
const LAUNCH = ['compare_scans', 'export_report', 'monitor_app']
const SCALE = ['create_patch', 'start_directory_run', 'audit_authenticated']

let svc: TestService
let free: Client
let scale: Client

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'api' })
  free = await connectClient(svc.mcpUrl, await svc.key('free'))
  scale = await connectClient(svc.mcpUrl, await svc.key('scale'))
})
afterAll(async () => {
  await free?.close()
  await scale?.close()
  await svc?.stop()
})

describe('tools/list', () => {
  test('lists all 18 tools to every caller, plan-gated ones included', async () => {
    for (const client of [free, scale]) {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name).sort()).toEqual([...FREE, ...LAUNCH, ...SCALE].sort())
    }
  })

  test('every tool has a JSON Schema object and annotations; read tools say readOnlyHint', async () => {
    const { tools } = await free.listTools()
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object')
      expect(t.description!.length).toBeGreaterThan(20)
      expect(t.annotations).toBeDefined()
      expect(typeof t.annotations!.readOnlyHint).toBe('boolean')
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    expect(byName.get_scan!.annotations!.readOnlyHint).toBe(true)
    expect(byName.scan_app!.annotations!.readOnlyHint).toBe(false)
    expect(byName.scan_app!.inputSchema.required).toEqual(['url'])
    expect((byName.scan_app!.inputSchema.properties as any).url.type).toBe('string')
  })
})

describe('tools/call', () => {
  test('get_account answers with the plan and what it includes', async () => {
    const r = await free.callTool({ name: 'get_account', arguments: {} })
    expect(r.isError).toBeFalsy()
    const body = payload(r)
    expect(body.plan).toBe('free')
    expect(body.tools.included).toContain('scan_app')
    expect(body.tools.needsUpgrade).toContainEqual({ name: 'create_patch', requiredPlan: 'scale' })
    expect(body.usage.scans).toBe(0)
  })

  test.each([
    ['a missing argument', 'scan_app', {}, '/url'],
    ['a wrong type', 'scan_app', { url: 42 }, '/url'],
    ['an unknown argument', 'get_account', { surprise: true }, '/surprise'],
    ['an id of the wrong shape', 'get_scan', { scanId: "'; DROP TABLE scans; --" }, '/scanId'],
    ['an oversized string', 'scan_app', { url: `https://a.example/${'a'.repeat(5000)}` }, '/url'],
  ])('%s is an isError result with invalid_params details', async (_n, name, args, path) => {
    const r = await free.callTool({ name, arguments: args as Record<string, unknown> })
    expect(r.isError).toBe(true)
    const body = payload(r)
    expect(body.error.code).toBe('invalid_params')
    expect(body.error.details.map((d: { path: string }) => d.path)).toContain(path)
  })

  test('an unknown tool is a JSON-RPC invalid-params error', async () => {
    await expect(free.callTool({ name: 'drop_database', arguments: {} })).rejects.toThrow(/Unknown tool/)
  })

  test.each([...LAUNCH, ...SCALE])('%s on a free account is plan_required with requiredPlan and currentPlan', async (name) => {
    const r = await free.callTool({ name, arguments: {} })
    expect(r.isError).toBe(true)
    const body = payload(r)
    expect(body.error.code).toBe('plan_required')
    expect(body.error.requiredPlan).toBe(LAUNCH.includes(name) ? 'launch' : 'scale')
    expect(body.error.currentPlan).toBe('free')
  })

  test('every listed tool is built: none answers not_implemented', async () => {
    const { TOOLS } = await import('../../api/mcp/tools/registry.ts')
    expect(TOOLS.filter((t) => !t.run).map((t) => t.name)).toEqual([])
  })

  test("get_scan of an unknown or another account's scan is not_found", async () => {
    const r = await free.callTool({ name: 'get_scan', arguments: { scanId: 'scn_doesnotexist' } })
    expect(r.isError).toBe(true)
    expect(payload(r).error.code).toBe('not_found')
  })

  test.each([
    ['ftp://example.com/', 'invalid_url'],
    ['javascript:alert(1)', 'invalid_url'],
    ['not a url', 'invalid_url'],
    ['http://user:pass@example.com/', 'invalid_url'],
  ])('scan_app(%s) is refused with %s', async (url, code) => {
    const r = await free.callTool({ name: 'scan_app', arguments: { url } })
    expect(r.isError).toBe(true)
    expect(payload(r).error.code).toBe(code)
  })
})
