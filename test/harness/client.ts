// The official MCP SDK client, authenticated with a bearer key.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

export async function connectClient(mcpUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'appaudit-tests', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  })
  await client.connect(transport)
  return client
}

/** Parses the JSON payload a tool returns in content[0].text. */
export function payload(result: unknown): any {
  const r = result as { content?: Array<{ type: string; text?: string }> }
  const first = r.content?.[0]
  if (first?.type !== 'text' || typeof first.text !== 'string') throw new Error(`no text content in ${JSON.stringify(result)}`)
  return JSON.parse(first.text)
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
