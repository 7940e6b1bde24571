// completion/complete through the official SDK client: the prompts' arguments (this account's app URLs,
// platforms, thresholds) and the resource templates' ids (this account's scans and audits, the checks),
// never another account's, and hostile requests answered with no values or -32602, never a fault.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CHECKS } from '../../../shared/checks/registry.ts'
import { createAccount, createApiKey } from '../../../shared/db/accounts.ts'
import { createAudit } from '../../../shared/db/audits.ts'
import { createScan } from '../../../shared/db/scans.ts'
import { connectClient, MCP_HEADERS } from '../../harness/client.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { startService, type TestService } from '../../harness/service.ts'

let svc: TestService
let client: Client
let other: Client
let key: string
const scans: string[] = []
let auditId: string
let othersScanId: string

beforeAll(async () => {
  svc = await startService('embedded')
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, 'scale')
  key = (await createApiKey(sql, account.id)).plaintext
  client = await connectClient(svc.mcpUrl, key)
  for (const url of ['https://www.example.com/', 'https://shop.example.com/cart', 'http://127.0.0.1:8080/']) {
    scans.push((await createScan(sql, account.id, url)).id)
  }
  auditId = (await createAudit(sql, account.id, 'https://docs.example.org/', { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 })).id
  const otherAccount = await createAccount(sql, 'free')
  other = await connectClient(svc.mcpUrl, (await createApiKey(sql, otherAccount.id)).plaintext)
  othersScanId = (await createScan(sql, otherAccount.id, 'https://secret.example.net/')).id
}, machineDeadline(60_000))

afterAll(async () => {
  await client?.close()
  await other?.close()
  await svc?.stop()
})

const prompt = (name: string, arg: string, value: string, c = client) =>
  c.complete({ ref: { type: 'ref/prompt', name }, argument: { name: arg, value } }).then((r) => r.completion)
const template = (uri: string, arg: string, value: string, c = client) =>
  c.complete({ ref: { type: 'ref/resource', uri }, argument: { name: arg, value } }).then((r) => r.completion)

describe('completion/complete', () => {
  test("a prompt's url completes with this account's apps, by scheme or by host", async () => {
    expect((await prompt('audit-and-fix', 'url', '')).values.sort()).toEqual([
      'http://127.0.0.1:8080/',
      'https://docs.example.org/',
      'https://shop.example.com/',
      'https://www.example.com/',
    ])
    expect((await prompt('ci-gate', 'url', 'shop')).values).toEqual(['https://shop.example.com/'])
    expect((await prompt('ci-gate', 'url', 'HTTPS://WWW.')).values).toEqual(['https://www.example.com/'])
    expect(await prompt('audit-and-fix', 'url', 'https://secret')).toEqual({ values: [], total: 0, hasMore: false })
    // The other account sees its own app only.
    expect((await prompt('audit-and-fix', 'url', '', other)).values).toEqual(['https://secret.example.net/'])
  })

  test("fixed values: a prompt's platform, minScore and failOn", async () => {
    expect((await prompt('audit-and-fix', 'platform', 'ne')).values).toEqual(['netlify', 'nextjs'])
    expect((await prompt('ci-gate', 'minScore', '')).values).toEqual(['90', '80', '70', '50'])
    expect((await prompt('ci-gate', 'failOn', 'h')).values).toEqual(['high'])
  })

  test("template ids: this account's scans and audits, the check catalogue", async () => {
    expect((await template('appaudit://scans/{scanId}', 'scanId', 'scn_')).values.sort()).toEqual([...scans].sort())
    expect((await template('appaudit://scans/{scanId}', 'scanId', scans[1]!.slice(0, 10))).values).toContain(scans[1]!)
    expect((await template('appaudit://audits/{auditId}', 'auditId', '')).values).toEqual([auditId])
    const csp = await template('appaudit://checks/{checkId}', 'checkId', 'cs')
    expect(csp.values).toContain('csp')
    expect(csp.values.every((v) => v.startsWith('cs'))).toBe(true)
    expect((await template('appaudit://checks/{checkId}', 'checkId', '')).total).toBe(CHECKS.length)
  })

  test("another account's ids are never completed, even typed whole", async () => {
    expect((await template('appaudit://scans/{scanId}', 'scanId', othersScanId)).values).toEqual([])
    expect((await template('appaudit://scans/{scanId}', 'scanId', scans[0]!, other)).values).toEqual([])
    expect((await template('appaudit://audits/{auditId}', 'auditId', '', other)).values).toEqual([])
  })

  test('an unknown prompt, template or argument has no values', async () => {
    expect(await prompt('test_prompt_with_arguments', 'arg1', 'par')).toEqual({ values: [], total: 0, hasMore: false })
    expect((await prompt('audit-and-fix', 'scanId', '')).values).toEqual([])
    expect((await template('appaudit://scans/{id}', 'id', '')).values).toEqual([])
    expect((await template('file:///{path}', 'path', '/etc')).values).toEqual([])
    expect((await prompt('audit-and-fix', '__proto__', '')).values).toEqual([])
    expect((await prompt('constructor', 'constructor', '')).values).toEqual([])
    // The argument belongs to another template: not completed here.
    expect((await template('appaudit://audits/{auditId}', 'scanId', '')).values).toEqual([])
  })

  test('an oversized value has no values', async () => {
    expect((await prompt('audit-and-fix', 'url', `https://${'a'.repeat(50_000)}`)).values).toEqual([])
    expect((await template('appaudit://checks/{checkId}', 'checkId', 'c'.repeat(3_000))).values).toEqual([])
  })

  test('a malformed request is -32602 and answers nothing else', async () => {
    const raw = async (params: unknown) => {
      const res = await fetch(svc.mcpUrl, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'completion/complete', params }),
      })
      return (await res.json()) as { error?: { code: number }; result?: unknown }
    }
    for (const params of [
      {},
      { ref: { type: 'ref/prompt', name: 'ci-gate' } },
      { ref: { type: 'ref/prompt', name: 'ci-gate' }, argument: { name: 'url' } },
      { ref: { type: 'ref/prompt', name: 'ci-gate' }, argument: { name: 'url', value: 42 } },
      { ref: { type: 'ref/file', path: '/etc/passwd' }, argument: { name: 'url', value: '' } },
      { ref: { type: 'ref/resource' }, argument: { name: 'scanId', value: '' } },
    ]) {
      const body = await raw(params)
      expect({ params, code: body.error?.code }).toEqual({ params, code: -32602 })
    }
  })
})
