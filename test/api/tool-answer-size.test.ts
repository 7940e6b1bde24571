// The default answers of scan_app, get_scan and get_fix_brief are agent-sized on a careless page (many failing
// checks with large evidence), as the official SDK client receives them; detail "full" returns the whole report;
// every failing and warning check keeps its evidence. Sizes are bounded bytes, never durations.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { Value } from '@sinclair/typebox/value'
import { CompactReportSchema } from '../../api/mcp/tools/compact.ts'
import { carelessPage } from '../fixtures/careless-page.ts'
import type { Site } from '../fixtures/sites.ts'
import { connectClient, MCP_HEADERS, textJson } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'

const KB = 1024
/** The careless page's compact scan answer (bench/tool-answer-size.ts TARGETS): issue 25's 12 and 24 KB. */
const SCAN_STRUCTURED = 12 * KB
const SCAN_BOTH = 24 * KB
let svc: TestService
let site: Site
let client: Client

beforeAll(async () => {
  site = carelessPage()
  svc = await startService('embedded')
  client = await connectClient(svc.mcpUrl, await svc.key('free'))
  await client.listTools()
}, 60_000)

afterAll(async () => {
  await client?.close()
  await svc?.stop()
  await site?.stop()
})

/** A successful call: the text block, the structuredContent and their sizes in bytes. */
async function sized(name: string, args: Record<string, unknown>) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
  expect(r.isError).not.toBe(true)
  const text = (r.content as Array<{ type: string; text: string }>)[0]!.text
  const structured = JSON.stringify(r.structuredContent)
  const bytes = { structured: Buffer.byteLength(structured), both: Buffer.byteLength(text) + Buffer.byteLength(structured) }
  return { text, body: r.structuredContent as any, bytes }
}

test('scan_app, get_scan and get_fix_brief answer agent-sized on a careless page; detail "full" answers the whole report', async () => {
  const scan = await sized('scan_app', { url: site.url })
  const report = scan.body
  expect(report.detail).toBe('compact')
  // tools/list names only a report's head; the compact report is still exactly its TypeBox schema.
  expect([...Value.Errors(CompactReportSchema, report)].map((e) => `${e.path} ${e.message}`)).toEqual([])
  expect(report.summary.fail).toBeGreaterThanOrEqual(8)
  expect(scan.bytes.structured).toBeLessThanOrEqual(SCAN_STRUCTURED)
  expect(scan.bytes.both).toBeLessThanOrEqual(SCAN_BOTH)
  // The text copy is a one-line summary, then the same JSON (the SDK client speaks a version after 2025-06-18).
  expect(scan.text.split('\n')[0]).toMatch(/^scan_app: score \d+\/100/)
  expect(textJson(scan.text)).toEqual(report)
  expect(report.full).toContain(`"scanId":"${report.id}","detail":"full"`)

  const got = await sized('get_scan', { scanId: report.id })
  expect(got.bytes.structured).toBeLessThanOrEqual(SCAN_STRUCTURED)
  expect(got.bytes.both).toBeLessThanOrEqual(SCAN_BOTH)
  expect(got.body.report).toEqual(report)

  const full = (await sized('get_scan', { scanId: report.id, detail: 'full' })).body.report
  expect(full.detail).toBeUndefined()
  expect(full.checks).toHaveLength(report.checks.length)
  // The findings come first, in the order of the whole report's advice (by impact), each with its impact.
  const findings = report.checks.filter((c: any) => c.status === 'fail' || c.status === 'warn')
  expect(findings.map((c: any) => c.id)).toEqual(full.advice.map((a: any) => a.checkId))
  expect(findings.map((c: any) => c.impact)).toEqual(full.advice.map((a: any) => a.impact))
  expect(report.checks.slice(0, findings.length)).toEqual(findings)
  expect(Buffer.byteLength(JSON.stringify(full))).toBeGreaterThan(2 * Buffer.byteLength(JSON.stringify(report)))
  const fullScan = (await sized('scan_app', { url: site.url, detail: 'full' })).body
  expect(fullScan.detail).toBeUndefined()
  expect(fullScan.checks.every((c: any) => 'advice' in c && 'category' in c)).toBe(true)

  // Every check keeps its status and evidence; every failing and warning one keeps evidence that is not empty
  // where the whole report has some, its summary, and its place in the advice by impact.
  const byId = new Map(full.checks.map((c: any) => [c.id, c]))
  for (const c of report.checks) {
    const whole: any = byId.get(c.id)
    expect(c.status).toBe(whole.status)
    expect(typeof c.evidence).toBe('object')
    if (c.status === 'fail' || c.status === 'warn') {
      expect(c.summary).toBe(whole.summary)
      if (Object.keys(whole.evidence).length > 0) expect(Object.keys(c.evidence).length).toBeGreaterThan(0)
      for (const k of Object.keys(c.evidence)) if (k !== '…') expect(Object.keys(whole.evidence)).toContain(k)
    } else {
      expect(c.evidence.line.length).toBeGreaterThan(0)
      expect(c.evidence.line.length).toBeLessThanOrEqual(120)
    }
  }
  const impacts = findings.map((c: any) => c.impact)
  expect(impacts).toEqual([...impacts].sort((a, b) => b - a))
  // A cut says how much it left out.
  expect(JSON.stringify(report.checks)).toMatch(/\[\+\d+ chars\]|\+\d+ more/)

  const brief = await sized('get_fix_brief', { scanId: report.id })
  expect(brief.bytes.structured).toBeLessThanOrEqual(16 * KB)
  const wholeBrief = (await sized('get_fix_brief', { scanId: report.id, detail: 'full' })).body
  expect(brief.body.items.map((i: any) => i.checkId)).toEqual(wholeBrief.items.map((i: any) => i.checkId))
  for (const item of brief.body.items) expect(item.change !== undefined || item.more?.includes('"detail":"full"')).toBe(true)
}, 240_000)

test('the text copy is the bare JSON for a client before protocol 2025-06-18, a summary line and the JSON after', async () => {
  const key = await svc.key('free')
  const getAccount = async (version?: string) => {
    const res = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, ...(version ? { 'mcp-protocol-version': version } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_account', arguments: {} } }),
    })
    const body = (await res.json()) as { result: { content: Array<{ text: string }>; structuredContent: unknown } }
    return body.result
  }
  for (const version of [undefined, '2025-03-26']) {
    const r = await getAccount(version)
    expect(JSON.parse(r.content[0]!.text)).toEqual(r.structuredContent)
  }
  for (const version of ['2025-06-18', '2025-11-25']) {
    const r = await getAccount(version)
    const [summary, json] = [r.content[0]!.text.split('\n')[0]!, r.content[0]!.text.slice(r.content[0]!.text.indexOf('\n') + 1)]
    expect(summary).toStartWith('get_account: ')
    expect(JSON.parse(json)).toEqual(r.structuredContent)
  }
})
