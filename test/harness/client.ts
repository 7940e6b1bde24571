// The official MCP SDK client, authenticated with a bearer key.
import { expect } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { until } from './wait.ts'

export async function connectClient(mcpUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'appaudit-tests', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  })
  await client.connect(transport)
  return client
}

/** The JSON of content[0].text: the whole text, or what follows its one-line summary. */
export function textJson(text: string): any {
  return JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('\n') + 1))
}

/** Parses the JSON payload a tool returns in content[0].text (after its one-line summary, when it has one). */
export function payload(result: unknown): any {
  const r = result as { content?: Array<{ type: string; text?: string }> }
  const first = r.content?.[0]
  if (first?.type !== 'text' || typeof first.text !== 'string') throw new Error(`no text content in ${JSON.stringify(result)}`)
  return textJson(first.text)
}

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
}

export const initializeBody = (id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-fetch', version: '1' } },
})

type ToolArgs = Record<string, unknown>

/** A tool call through the SDK client: whether it was an error, and its parsed JSON payload. */
export async function call(client: Client, name: string, args: ToolArgs) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
  return { isError: r.isError === true, body: payload(r) }
}

/** The payload of a call that must succeed. */
export async function ok(client: Client, name: string, args: ToolArgs) {
  const r = await call(client, name, args)
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.body)}`)
  return r.body
}

/** The `error` of a call that must fail. */
export async function errorOf(client: Client, name: string, args: ToolArgs) {
  const r = await call(client, name, args)
  expect(r.isError).toBe(true)
  return r.body.error
}

/** get_audit, polled until the audit has ended (completed, failed or cancelled); its last answer. */
export async function auditEnded(client: Client, auditId: string, ms: number, what = 'the audit to finish') {
  return until(
    async () => {
      const a = await ok(client, 'get_audit', { auditId })
      return a.status !== 'queued' && a.status !== 'running' && a
    },
    ms,
    what,
    { everyMs: 250 },
  )
}
