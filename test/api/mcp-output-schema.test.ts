// Every tool's outputSchema and structuredContent through the official SDK client, which validates a result's
// structuredContent against the outputSchema tools/list gave it (and throws when they disagree). Each tool
// that can run here runs for real (production path: PostgreSQL, Redis, crawler workers and Chromium in one
// process) against fixture sites on port 0; the result is also checked with an Ajv of our own, so a client
// that skipped validation would not hide a wrong schema. Then the errors that say what to do: a URL without
// its scheme, an unknown tool name, a value outside an enum.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Ajv, type ValidateFunction } from 'ajv'
import { nearestToolName } from '../../api/mcp/tools/names.ts'
import { findSchemelessUrl, suggestScheme } from '../../api/mcp/tools/schemas.ts'
import { startAuditSite, type AuditSite } from '../fixtures/audit-site.ts'
import { startSupabaseFixture, supabaseAppSite, type AppSite, type SupabaseFixture } from '../fixtures/postgrest.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'

type Args = Record<string, unknown>
type Result = Awaited<ReturnType<Client['callTool']>>

const NOT_BUILT: string[] = []

let svc: TestService
let fx: SupabaseFixture
let app: AppSite
/** The audit crawls this plain site: the Supabase app's page keeps requests open that a crawl waits for. */
let auditSite: AuditSite
let client: Client
let listed: Awaited<ReturnType<Client['listTools']>>['tools']
const validators = new Map<string, ValidateFunction>()
/** Tools whose successful result has been checked. */
const covered = new Set<string>()

/** A successful call: the SDK accepted it, and structuredContent is the JSON of content[0].text and matches the schema. */
async function ok(name: string, args: Args): Promise<any> {
  // callTool throws when structuredContent is missing or does not match the cached outputSchema.
  const r: Result = await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(payload(r))}`)
  expect(r.structuredContent).toBeDefined()
  expect(r.structuredContent).toEqual(payload(r))
  const validate = validators.get(name)!
  if (!validate(r.structuredContent)) throw new Error(`${name}: ${JSON.stringify(validate.errors)}`)
  covered.add(name)
  return r.structuredContent
}

/** A failed call: the client accepts an error without structuredContent; returns the error payload. */
async function failed(name: string, args: Args) {
  const r: Result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 })
  expect(r.isError).toBe(true)
  expect(r.structuredContent).toBeUndefined()
  return payload(r).error
}

beforeAll(async () => {
  fx = await startSupabaseFixture()
  app = await supabaseAppSite({ projectUrl: fx.projectUrl, anonKey: fx.anonKey })
  auditSite = startAuditSite({ pages: 2 })
  // Generous page and scan timeouts: this file is about the shape of answers, not about speed on a busy machine.
  svc = await startService('production', {
    ROLE: 'all',
    WORKER_CONCURRENCY: '2',
    AUDIT_CONCURRENCY: '1',
    NAV_TIMEOUT_MS: '20000',
    SCAN_TIMEOUT_MS: '90000',
    // audit_authenticated seals what it is given with it.
    SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  })
  client = await connectClient(svc.mcpUrl, await svc.key('scale'))
  // listTools caches each tool's outputSchema in the client: from here on callTool validates.
  listed = (await client.listTools()).tools
  // Strict, but a nullable is a type list ("type": ["string", "null"]), as tools/list writes it to stay small.
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true })
  for (const t of listed) validators.set(t.name, ajv.compile(t.outputSchema as object))
}, 90_000)

afterAll(async () => {
  await client?.close()
  await svc?.stop()
  await app?.stop()
  await auditSite?.stop()
  await fx?.stop()
}, 60_000)

describe('tools/list', () => {
  test('all 18 tools declare an outputSchema: a JSON Schema object of type object that compiles in strict Ajv', () => {
    expect(listed).toHaveLength(18)
    const ajv = new Ajv({ strict: true, allowUnionTypes: true })
    for (const t of listed) {
      const schema = t.outputSchema as Record<string, unknown> | undefined
      expect(schema, t.name).toBeDefined()
      expect(schema!.type, t.name).toBe('object')
      expect(ajv.validateSchema(schema!), `${t.name}: ${JSON.stringify(ajv.errors)}`).toBe(true)
      expect(() => ajv.compile(schema!)).not.toThrow()
      // Plain JSON, nothing a client could not read: no $id that would clash in a shared Ajv cache.
      expect(JSON.stringify(schema)).not.toContain('"$id"')
    }
  })

  test('the stateless tools/list (no session) is the same list', async () => {
    const res = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await svc.key('free')}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    })
    const body = (await res.json()) as { result: { tools: typeof listed } }
    expect(body.result.tools.map((t) => [t.name, t.outputSchema])).toEqual(listed.map((t) => [t.name, t.outputSchema]))
  })
})

test('the SDK client really validates: given a schema the answer does not match, it rejects the answer', async () => {
  // The same client, but tools/list is altered on the way in: get_account must now also have a field it never has.
  const tampered = new Client({ name: 'tampered', version: '1' })
  const transport = new StreamableHTTPClientTransport(new URL(svc.mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${await svc.key('free')}` } },
  })
  await tampered.connect(transport)
  const deliver = transport.onmessage!
  transport.onmessage = (message) => {
    const tools = (message as { result?: { tools?: Array<{ name: string; outputSchema?: any }> } }).result?.tools
    const t = tools?.find((x) => x.name === 'get_account')
    if (t) t.outputSchema = { ...t.outputSchema, required: [...t.outputSchema.required, 'neverThere'] }
    deliver(message)
  }
  try {
    await tampered.listTools()
    await expect(tampered.callTool({ name: 'get_account', arguments: {} })).rejects.toThrow(/does not match the tool's output schema/)
  } finally {
    await tampered.close()
  }
})

describe('structuredContent of every tool that runs here', () => {
  let scanA: any
  let scanB: any
  let auditId: string

  test('scan_app, get_scan, list_apps, get_account, explain_check', async () => {
    scanA = await ok('scan_app', { url: app.url })
    expect(scanA.id).toMatch(/^scn_/)
    scanB = await ok('scan_app', { url: `${app.url}?again=1` })
    const got = await ok('get_scan', { scanId: scanA.id })
    expect(got.status).toBe('completed')
    expect(got.report).toEqual(scanA)
    const apps = await ok('list_apps', {})
    expect(apps.items[0].latestCompletedScan.id).toBe(scanB.id)
    const account = await ok('get_account', {})
    expect(account.usage.scans).toBe(2)
    const csp = await ok('explain_check', { checkId: 'csp' })
    expect(csp.id).toBe('csp')
  }, 90_000)

  test('verify_site (token, then verified by file) and check_data_exposure (verified: tables read)', async () => {
    const first = await ok('verify_site', { url: app.url })
    expect(first.verified).toBe(false)
    app.setVerificationFile(first.token)
    const done = await ok('verify_site', { url: app.url, method: 'file' })
    expect(done.verified).toBe(true)
    expect(done.checked[0]).toMatchObject({ method: 'file', ok: true })
    const exposure = await ok('check_data_exposure', { url: app.url })
    expect(exposure.probed).toBe(true)
    expect(exposure.exposed).toContain('todos')
  }, 60_000)

  test('compare_scans, export_report (inline and linked), monitor_app (saved and removed)', async () => {
    const diff = await ok('compare_scans', { baseScanId: scanA.id, headScanId: scanB.id })
    expect(diff.base.id).toBe(scanA.id)
    const md = await ok('export_report', { scanId: scanA.id, format: 'markdown' })
    const sarif = await ok('export_report', { scanId: scanA.id, format: 'sarif' })
    // One inline, one behind a link, so both shapes pass through the schema.
    expect([md.content === undefined, sarif.content === undefined].sort()).toEqual([false, true])
    const saved = await ok('monitor_app', { url: app.url, schedule: 'weekly', hour: 3 })
    expect(saved.created).toBe(true)
    const removed = await ok('monitor_app', { url: app.url, remove: true })
    expect(removed).toEqual({ origin: app.origin, removed: true })
  }, 60_000)

  test('create_patch', async () => {
    const patch = await ok('create_patch', { scanId: scanA.id, platform: 'nginx', repository: false })
    expect(patch.patchId).toMatch(/^pat_/)
  }, 60_000)

  test('start_directory_run, started and then read back once it ended', async () => {
    const started = await ok('start_directory_run', { urls: [app.url] })
    expect(started.runId).toMatch(/^dir_/)
    const done = await until(
      async () => {
        const r = await ok('start_directory_run', { runId: started.runId })
        return (r.status === 'completed' || r.status === 'failed') && r
      },
      90_000,
      'the directory run to end',
      { everyMs: 300 },
    )
    expect(done.items[0].status).toBe('done')
  }, 120_000)

  test('audit_authenticated', async () => {
    const started = await ok('audit_authenticated', {
      url: auditSite.url,
      cookies: [{ name: 'sid', value: 'a-session-id' }],
      options: { maxPages: 1, maxDepth: 0 },
    })
    expect(started.authenticated).toBe(true)
  }, 60_000)

  test('audit_app, then get_audit while it runs and once completed', async () => {
    const started = await ok('audit_app', { url: auditSite.url, options: { maxPages: 2, maxDepth: 1 } })
    auditId = started.auditId
    expect(started.status).toBe('queued')
    const done = await until(
      async () => {
        const a = await ok('get_audit', { auditId: started.auditId })
        return (a.status === 'completed' || a.status === 'failed') && a
      },
      90_000,
      'the audit to finish',
      { everyMs: 300 },
    )
    // On failure the whole answer is printed, error included.
    expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: undefined })
    // A section page, the other answer get_audit gives.
    const page = await ok('get_audit', { auditId: started.auditId, section: 'findings', limit: 1 })
    expect(page.items.length).toBeLessThanOrEqual(1)
  }, 120_000)

  test('get_findings, get_fix_brief, scan_history', async () => {
    const findings = await ok('get_findings', { scanId: scanA.id, limit: 2 })
    expect(findings.items.length).toBeGreaterThan(0)
    await ok('get_findings', { scanId: scanA.id, cursor: findings.nextCursor })
    await ok('get_fix_brief', { scanId: scanA.id })
    // The audit's forms of the same tools.
    const auditFindings = await ok('get_findings', { auditId, limit: 1 })
    expect(auditFindings.auditId).toBe(auditId)
    await ok('get_fix_brief', { auditId })
    const history = await ok('scan_history', { limit: 5 })
    expect(history.items.map((i: { id: string }) => i.id)).toContain(scanB.id)
  }, 60_000)

  test('every tool but the ones not built yet was checked', () => {
    const runnable = listed.map((t) => t.name).filter((n) => !NOT_BUILT.includes(n))
    expect([...covered].sort()).toEqual(runnable.sort())
  })

  test('error results carry no structuredContent, and the SDK client accepts them', async () => {
    expect((await failed('get_scan', { scanId: 'scn_doesnotexist' })).code).toBe('not_found')
    for (const name of NOT_BUILT) expect((await failed(name, { url: 'https://example.com/' })).code).toBe('not_implemented')
  })
})

describe('errors that say what to do', () => {
  test.each([
    ['scan_app', { url: 'example.com' }, '/url', 'https://example.com/'],
    ['scan_app', { url: 'www.example.com/pricing?plan=pro' }, '/url', 'https://www.example.com/pricing?plan=pro'],
    ['scan_app', { url: 'localhost:3000' }, '/url', 'http://localhost:3000/'],
    ['audit_app', { url: 'example.com' }, '/url', 'https://example.com/'],
    ['check_data_exposure', { url: '//example.com/app' }, '/url', 'https://example.com/app'],
    ['verify_site', { url: 'example.com:8443' }, '/url', 'https://example.com:8443/'],
    ['monitor_app', { url: '127.0.0.1:8080/health', schedule: 'daily' }, '/url', 'http://127.0.0.1:8080/health'],
    ['scan_history', { url: 'example.com' }, '/url', 'https://example.com/'],
  ])('%s with %j is refused with the URL to send', async (name, args, path, suggestion) => {
    const error = await failed(name, args)
    expect(error.code).toBe('invalid_url')
    expect(error.suggestion).toBe(suggestion)
    expect(error.message).toContain(`send ${suggestion}`)
    expect(error.details).toEqual([{ path, message: expect.stringContaining(suggestion) }])
  })

  test('a refused URL starts nothing: no scan recorded, no audit charged', async () => {
    const before = await ok('get_account', {})
    await failed('scan_app', { url: 'example.com' })
    await failed('audit_app', { url: 'example.com' })
    const after = await ok('get_account', {})
    expect(after.usage.scans).toBe(before.usage.scans)
    expect(after.audits.usedThisWeek).toBe(before.audits.usedThisWeek)
  })

  test('another scheme gets the http(s) URL to send; a scheme without a host, what to send', async () => {
    const ftp = await failed('scan_app', { url: 'ftp://example.com/files' })
    expect(ftp).toMatchObject({ code: 'invalid_url', suggestion: 'https://example.com/files' })
    expect(ftp.message).toContain('Send https://example.com/files')
    expect(ftp.details).toEqual([{ path: '/url', message: expect.stringContaining('https://example.com/files') }])
    const bare = await failed('start_directory_run', { urls: ['https://a.example/', 'http://'] })
    expect(bare).toMatchObject({ code: 'invalid_url', details: [{ path: '/urls/1', message: expect.any(String) }] })
    expect(bare.message).toContain('has no host')
    expect(bare.suggestion).toBeUndefined()
  })

  test('URLs with another scheme that names no host, or not URLs at all, keep their own errors', async () => {
    for (const url of ['javascript:alert(1)', 'not a url', 'example']) {
      const error = await failed('scan_app', { url })
      expect(error.code).toBe('invalid_url')
      expect(error.suggestion).toBeUndefined()
    }
  })

  test.each([
    ['scan_ap', 'scan_app'],
    ['get-scan', 'get_scan'],
    ['GetAudit', 'get_audit'],
    ['mcp__appaudit__list_apps', 'list_apps'],
    ['explain_checks', 'explain_check'],
  ])('an unknown tool %s is a JSON-RPC error naming the nearest tool', async (name, nearest) => {
    const error = await client.callTool({ name, arguments: {} }).then(
      () => null,
      (e: Error & { code?: number }) => e,
    )
    expect(error?.code).toBe(-32602)
    expect(error?.message).toContain(`Unknown tool: ${name}.`)
    if (nearest) expect(error?.message).toContain(`Did you mean ${nearest}?`)
    else expect(error?.message).not.toContain('Did you mean')
  })

  test('a name far from every tool gets no guess', async () => {
    await expect(client.callTool({ name: 'drop_database', arguments: {} })).rejects.toThrow(
      /Unknown tool: drop_database\. tools\/list lists all 18 tools\./,
    )
  })

  test.each([
    ['export_report', { scanId: 'scn_abc123', format: 'pdf' }, '/format', 'sarif, junit, markdown, html'],
    ['verify_site', { url: 'https://example.com/', method: 'email' }, '/method', 'meta, file, dns'],
    ['get_findings', { scanId: 'scn_abc123', severity: ['urgent'] }, '/severity/0', 'critical, high, medium, low, info'],
    ['monitor_app', { url: 'https://example.com/', schedule: 'hourly' }, '/schedule', 'daily, weekly'],
  ])('%s: a value outside the enum lists the allowed values', async (name, args, path, allowed) => {
    const error = await failed(name, args)
    expect(error.code).toBe('invalid_params')
    expect(error.details).toContainEqual({ path, message: expect.stringContaining(`must be one of: ${allowed}; got `) })
    expect(error.message).toContain(`${path} must be one of: ${allowed}; got `)
    expect(error.message).not.toContain('Expected union value')
  })
})

describe('the helpers on their own', () => {
  test('suggestScheme', () => {
    expect(suggestScheme('example.com')).toBe('https://example.com/')
    expect(suggestScheme(' example.com/a ')).toBe('https://example.com/a')
    expect(suggestScheme('localhost')).toBe('http://localhost/')
    expect(suggestScheme('[::1]:5173')).toBe('http://[::1]:5173/')
    expect(suggestScheme('https://example.com/')).toBeNull()
    expect(suggestScheme('mailto:someone@example.com')).toBeNull()
    expect(suggestScheme('user:pass@example.com')).toBeNull()
    expect(suggestScheme('intranet')).toBeNull()
    expect(suggestScheme('')).toBeNull()
  })

  test('findSchemelessUrl looks at url and each of urls', () => {
    expect(findSchemelessUrl({ urls: ['https://a.example/', 'b.example'] })).toEqual({
      path: '/urls/1',
      value: 'b.example',
      suggestion: 'https://b.example/',
    })
    expect(findSchemelessUrl({ checkId: 'example.com' })).toBeNull()
  })

  test('nearestToolName', () => {
    const names = listed.map((t) => t.name)
    expect(nearestToolName('SCAN_APP', names)).toBe('scan_app')
    expect(nearestToolName('appaudit.get_account', names)).toBe('get_account')
    expect(nearestToolName('compare_scan', names)).toBe('compare_scans')
    expect(nearestToolName('', names)).toBeNull()
  })
})
