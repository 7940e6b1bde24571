// Reports as MCP resources, through the official SDK client (production path: PostgreSQL + Redis): the
// templates, resources/list paged by cursor, resources/read answering the whole report, the resource_link
// in the report tools' results, and that nothing of another account is listed or readable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { createAccount, createApiKey } from '../../../shared/db/accounts.ts'
import { createScan } from '../../../shared/db/scans.ts'
import { connectClient, MCP_HEADERS, ok } from '../../harness/client.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { startService, type TestService } from '../../harness/service.ts'
import { generateAuditPages, storeCompletedAudit } from '../../fixtures/large-audit.ts'
import { weakSite, type Site } from '../../fixtures/sites.ts'

let svc: TestService
let client: Client
let other: Client
let otherKey: string
let site: Site
let scan: any
let auditId: string
let othersScanId: string

beforeAll(async () => {
  svc = await startService('production')
  const sql = svc.running.services.db.sql
  // Scale: audits are charged, and this file stores one.
  const account = await createAccount(sql, 'scale')
  client = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
  const otherAccount = await createAccount(sql, 'free')
  otherKey = (await createApiKey(sql, otherAccount.id)).plaintext
  other = await connectClient(svc.mcpUrl, otherKey)
  site = await weakSite()
  scan = await ok(client, 'scan_app', { url: site.url, detail: 'full' })
  auditId = (await storeCompletedAudit(sql, account.id, generateAuditPages(scan.checks, scan.url, 5))).auditId
  othersScanId = (await createScan(sql, otherAccount.id, 'https://other.example.com/')).id
}, machineDeadline(120_000))

afterAll(async () => {
  await client?.close()
  await other?.close()
  await site?.stop()
  await svc?.stop()
})

/** The JSON-RPC error code a rejected promise carries. */
async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p
  } catch (e) {
    return (e as { code: number }).code
  }
  throw new Error('expected an error')
}

describe('resources', () => {
  test('templates name the scan, audit and check URIs, in a few hundred bytes', async () => {
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'appaudit://scans/{scanId}',
      'appaudit://audits/{auditId}',
      'appaudit://checks/{checkId}',
    ])
    expect(JSON.stringify(resourceTemplates).length).toBeLessThan(500)
  })

  test("resources/list: the report view, then this account's reports newest first", async () => {
    const { resources, nextCursor } = await client.listResources()
    expect(resources[0]!.uri).toStartWith('ui://')
    expect(resources.slice(1).map((r) => r.uri)).toEqual([`appaudit://audits/${auditId}`, `appaudit://scans/${scan.id}`])
    expect(resources[2]).toEqual({
      uri: `appaudit://scans/${scan.id}`,
      name: scan.id,
      title: `${scan.url} ${scan.score}/100 ${scan.grade}`,
    })
    expect(nextCursor).toBeUndefined()
    // The other account sees the report view and its own scan only.
    expect((await other.listResources()).resources.map((r) => r.uri)).toEqual([resources[0]!.uri, `appaudit://scans/${othersScanId}`])
  })

  test('resources/list pages by cursor, 20 reports a page, each report once', async () => {
    const sql = svc.running.services.db.sql
    const account = await createAccount(sql, 'free')
    const c = await connectClient(svc.mcpUrl, (await createApiKey(sql, account.id)).plaintext)
    try {
      const made = new Set<string>()
      for (let i = 0; i < 45; i++) made.add((await createScan(sql, account.id, `https://app${i}.example.com/`)).id)
      const seen: string[] = []
      const sizes: number[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await c.listResources(cursor ? { cursor } : {})
        sizes.push(page.resources.length)
        seen.push(...page.resources.filter((r) => r.uri.startsWith('appaudit://')).map((r) => r.name))
        cursor = page.nextCursor
        if (++pages > 10) throw new Error('pagination does not end')
      } while (cursor)
      expect(sizes).toEqual([21, 20, 5])
      expect(new Set(seen)).toEqual(made)
      expect(seen).toHaveLength(45)
    } finally {
      await c.close()
    }
  })

  test('resources/read answers the whole scan report, the same as get_scan detail "full"', async () => {
    const uri = `appaudit://scans/${scan.id}`
    const read = await client.readResource({ uri })
    expect(read.contents).toHaveLength(1)
    expect(read.contents[0]).toMatchObject({ uri, mimeType: 'application/json' })
    const body = JSON.parse((read.contents[0] as { text: string }).text)
    expect(body).toEqual(await ok(client, 'get_scan', { scanId: scan.id, detail: 'full' }))
    expect(body.report.checks.length).toBe(scan.checks.length)
  })

  test('resources/read answers the whole audit, with every page of its result', async () => {
    const read = await client.readResource({ uri: `appaudit://audits/${auditId}` })
    const body = JSON.parse((read.contents[0] as { text: string }).text)
    expect(body).toMatchObject({ auditId, status: 'completed' })
    expect(body.result.pages).toHaveLength(5)
  })

  test("resources/read answers a check's explanation, as explain_check", async () => {
    const read = await client.readResource({ uri: 'appaudit://checks/csp' })
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(await ok(client, 'explain_check', { checkId: 'csp' }))
  })

  test("another account's scan or audit is not found, exactly like an unknown one", async () => {
    expect(await codeOf(other.readResource({ uri: `appaudit://scans/${scan.id}` }))).toBe(-32002)
    expect(await codeOf(other.readResource({ uri: `appaudit://audits/${auditId}` }))).toBe(-32002)
    expect(await codeOf(client.readResource({ uri: `appaudit://scans/${othersScanId}` }))).toBe(-32002)
    expect(await codeOf(client.readResource({ uri: 'appaudit://scans/scn_doesnotexist' }))).toBe(-32002)
    expect(await codeOf(client.readResource({ uri: 'appaudit://checks/no-such-check' }))).toBe(-32002)
  })

  test('hostile URIs are not found, and a long one is not echoed whole', async () => {
    for (const uri of [
      'file:///etc/passwd',
      `appaudit://scans/../audits/${auditId}`,
      `appaudit://audits/${auditId}/../../scans/${scan.id}`,
      `appaudit://scans/${scan.id}?x=1`,
      `appaudit://audits/${scan.id}`,
      `APPAUDIT://scans/${scan.id}`,
      'appaudit://scans/',
      "appaudit://scans/scn_x' OR 1=1",
    ]) {
      expect({ uri, code: await codeOf(client.readResource({ uri })) }).toEqual({ uri, code: -32002 })
    }
    const long = `appaudit://scans/scn_${'a'.repeat(100_000)}`
    const res = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${otherKey}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: long } }),
    })
    const text = await res.text()
    expect(JSON.parse(text).error.code).toBe(-32002)
    expect(text.length).toBeLessThan(1_000)
  })

  test('a cursor this server did not give is invalid params', async () => {
    expect(await codeOf(client.listResources({ cursor: 'not-a-cursor' }))).toBe(-32602)
    expect(await codeOf(client.listResources({ cursor: 'x'.repeat(5_000) }))).toBe(-32602)
  })
})

describe('resource links in tool results', () => {
  const linkOf = (r: any) => r.content.find((c: any) => c.type === 'resource_link')

  test('scan_app, get_scan and get_audit link the whole report; the JSON stays in content[0]', async () => {
    const scanned = await client.callTool({ name: 'scan_app', arguments: { url: site.url } }, undefined, { timeout: 60_000 })
    const id = (scanned.structuredContent as any).id
    expect(linkOf(scanned)).toEqual({
      type: 'resource_link',
      uri: `appaudit://scans/${id}`,
      name: id,
      description: 'The whole scan report (resources/read).',
      mimeType: 'application/json',
    })
    expect((scanned.content as any)[0].type).toBe('text')
    const got = await client.callTool({ name: 'get_scan', arguments: { scanId: id } })
    expect(linkOf(got).uri).toBe(`appaudit://scans/${id}`)
    const audit = await client.callTool({ name: 'get_audit', arguments: { auditId } })
    expect(linkOf(audit).uri).toBe(`appaudit://audits/${auditId}`)
    // The link reads back as the whole report.
    const read = await client.readResource({ uri: linkOf(got).uri })
    expect(JSON.parse((read.contents[0] as { text: string }).text).report.checks.length).toBeGreaterThan(0)
  })

  test('an error result and other tools carry no link', async () => {
    const missing = await client.callTool({ name: 'get_scan', arguments: { scanId: 'scn_doesnotexist' } })
    expect(missing.isError).toBe(true)
    expect(linkOf(missing)).toBeUndefined()
    expect(linkOf(await client.callTool({ name: 'explain_check', arguments: { checkId: 'csp' } }))).toBeUndefined()
  })

  test('a client of protocol 2025-03-26 (before resource links) gets none', async () => {
    const res = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${otherKey}`, 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_scan', arguments: { scanId: othersScanId } },
      }),
    })
    const body = await res.json()
    expect(body.result.isError).toBeUndefined()
    expect(body.result.content.map((c: any) => c.type)).toEqual(['text'])
  })
})
