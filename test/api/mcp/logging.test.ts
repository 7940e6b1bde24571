// MCP logging through the official SDK client (production path: the level lives in Redis with the session):
// logging/setLevel is the session's opt-in, a scan's phases then arrive as info log messages ahead of its
// result, an audit's state as one line; a session that set no level, or a level above info, gets none and a
// plain JSON answer; another account cannot set the level of a session it does not own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js'
import { createAccount, createApiKey } from '../../../shared/db/accounts.ts'
import { connectClient, MCP_HEADERS, initializeBody, ok } from '../../harness/client.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { startService, type TestService } from '../../harness/service.ts'
import { generateAuditPages, storeCompletedAudit } from '../../fixtures/large-audit.ts'
import { weakSite, type Site } from '../../fixtures/sites.ts'

let svc: TestService
let key: string
let accountId: string
let site: Site

beforeAll(async () => {
  svc = await startService('production')
  const sql = svc.running.services.db.sql
  const account = await createAccount(sql, 'scale')
  accountId = account.id
  key = (await createApiKey(sql, account.id)).plaintext
  site = await weakSite()
}, machineDeadline(60_000))

afterAll(async () => {
  await site?.stop()
  await svc?.stop()
})

/** A new session whose log messages are collected. */
async function logged(): Promise<{ client: Client; logs: LoggingMessageNotification['params'][] }> {
  const client = await connectClient(svc.mcpUrl, key)
  const logs: LoggingMessageNotification['params'][] = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params))
  return { client, logs }
}

const scan = (client: Client) => client.callTool({ name: 'scan_app', arguments: { url: site.url } }, undefined, { timeout: 60_000 })

describe('logging', () => {
  test('the initialize result declares logging', async () => {
    const { client } = await logged()
    expect(client.getServerCapabilities()?.logging).toEqual({})
    await client.close()
  })

  test(
    "after setLevel info, a scan's phases arrive as info messages from scan_app, the last one its score",
    async () => {
      const { client, logs } = await logged()
      try {
        expect(await client.setLoggingLevel('info')).toEqual({})
        const result = await scan(client)
        expect(result.isError).not.toBe(true)
        expect(logs.length).toBeGreaterThanOrEqual(2)
        for (const l of logs) expect(l).toMatchObject({ level: 'info', logger: 'scan_app' })
        const phases = logs.map((l) => (l.data as { phase: string }).phase)
        expect(phases[0]).toBe('queued')
        const report = result.structuredContent as { score: number; grade: string }
        expect(phases.at(-1)).toBe(`done: score ${report.score} (${report.grade})`)
        // Progress only increases.
        const steps = logs.map((l) => (l.data as { progress: number }).progress)
        expect(steps).toEqual([...steps].sort((a, b) => a - b))
      } finally {
        await client.close()
      }
    },
    machineDeadline(90_000),
  )

  test(
    'a level above info silences them; a session that set none gets none, and plain JSON',
    async () => {
      const { client, logs } = await logged()
      const quiet = await logged()
      try {
        await client.setLoggingLevel('warning')
        expect((await scan(client)).isError).not.toBe(true)
        expect((await scan(quiet.client)).isError).not.toBe(true)
        expect(logs).toEqual([])
        expect(quiet.logs).toEqual([])
      } finally {
        await client.close()
        await quiet.client.close()
      }
      // Without a level the answer of a tools/call stays one JSON body (raw, without a session).
      const res = await fetch(svc.mcpUrl, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'scan_app', arguments: { url: site.url } } }),
      })
      expect(res.headers.get('content-type')).toContain('application/json')
      expect((await res.json()).result.structuredContent.score).toBeNumber()
    },
    machineDeadline(90_000),
  )

  test(
    "get_audit logs the audit's state in one line",
    async () => {
      const sql = svc.running.services.db.sql
      const template = await ok(await connectClient(svc.mcpUrl, key), 'scan_app', { url: site.url, detail: 'full' })
      const { auditId } = await storeCompletedAudit(sql, accountId, generateAuditPages(template.checks, template.url, 3))
      const { client, logs } = await logged()
      try {
        await client.setLoggingLevel('debug')
        await ok(client, 'get_audit', { auditId })
        expect(logs).toEqual([{ level: 'info', logger: 'get_audit', data: `${auditId} completed: 3 of 43 pages scanned` }])
        // A tool that does not log answers as before.
        await ok(client, 'explain_check', { checkId: 'csp' })
        expect(logs).toHaveLength(1)
      } finally {
        await client.close()
      }
    },
    machineDeadline(90_000),
  )

  test(
    'the level is kept per session, not per account',
    async () => {
      const a = await logged()
      const b = await logged()
      try {
        await a.client.setLoggingLevel('info')
        await b.client.setLoggingLevel('error')
        await Promise.all([scan(a.client), scan(b.client)])
        expect(a.logs.length).toBeGreaterThanOrEqual(2)
        expect(b.logs).toEqual([])
      } finally {
        await a.client.close()
        await b.client.close()
      }
    },
    machineDeadline(90_000),
  )

  test("an unknown level is -32602; another account cannot set a session's level", async () => {
    const post = (body: unknown, headers: Record<string, string>) =>
      fetch(svc.mcpUrl, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) })
    const init = await post(initializeBody(), { authorization: `Bearer ${key}` })
    const sessionId = init.headers.get('mcp-session-id')!
    await init.text()
    const setLevel = (level: unknown) => ({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level } })
    const bad = await post(setLevel('loud'), { authorization: `Bearer ${key}`, 'mcp-session-id': sessionId })
    expect((await bad.json()).error.code).toBe(-32602)
    const foreign = await post(setLevel('debug'), { authorization: `Bearer ${await svc.key()}`, 'mcp-session-id': sessionId })
    expect(foreign.status).toBe(404)
    expect(await svc.running.services.infra.kv.get(`mcp:log-level:${sessionId}`)).toBeNull()
    const mine = await post(setLevel('notice'), { authorization: `Bearer ${key}`, 'mcp-session-id': sessionId })
    expect((await mine.json()).result).toEqual({})
    expect(await svc.running.services.infra.kv.get(`mcp:log-level:${sessionId}`)).toBe('notice')
    // A level above info leaves a logging tool's answer plain JSON; info or below makes it a stream.
    const getAudit = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_audit', arguments: { auditId: 'aud_none' } } }
    const headers = { authorization: `Bearer ${key}`, 'mcp-session-id': sessionId }
    const quiet = await post(getAudit, headers)
    expect(quiet.headers.get('content-type')).toContain('application/json')
    expect((await quiet.json()).result.isError).toBe(true)
    await (await post(setLevel('debug'), headers)).text()
    const streamed = await post(getAudit, headers)
    expect(streamed.headers.get('content-type')).toContain('text/event-stream')
    expect(await streamed.text()).toContain('not_found')
  })
})
