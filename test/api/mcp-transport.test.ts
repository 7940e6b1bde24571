// The raw HTTP rules of /api/mcp (README "Errors"; docs/decisions.md "MCP transport"), with plain fetch.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { initializeBody, MCP_HEADERS } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'

let svc: TestService
let key: string

beforeAll(async () => {
  svc = await startService('production', { ROLE: 'api', MAX_BODY_BYTES: '65536' })
  key = await svc.key()
})
afterAll(() => svc?.stop())

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(svc.mcpUrl, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

async function openSession(k = key): Promise<string> {
  const res = await post(initializeBody(), { authorization: `Bearer ${k}` })
  expect(res.status).toBe(200)
  const id = res.headers.get('mcp-session-id')
  expect(id).toMatch(/^mcs_/)
  return id!
}

describe('CORS', () => {
  test('OPTIONS answers 204 with the CORS headers and no authentication', async () => {
    const res = await fetch(svc.mcpUrl, {
      method: 'OPTIONS',
      headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toContain('POST')
    expect(res.headers.get('access-control-allow-headers')).toContain('authorization')
    expect(res.headers.get('access-control-expose-headers')).toContain('www-authenticate')
    expect(res.headers.get('access-control-expose-headers')).toContain('mcp-session-id')
  })

  test('every answer, even a 401, exposes www-authenticate and mcp-session-id to browsers', async () => {
    const res = await fetch(svc.mcpUrl, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(initializeBody()) })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-expose-headers')).toContain('www-authenticate')
    const ok = await post(initializeBody())
    expect(ok.headers.get('access-control-allow-origin')).toBe('*')
    expect(ok.headers.get('access-control-expose-headers')).toContain('mcp-session-id')
  })
})

describe('authentication', () => {
  test('a call without a credential gets 401 with exactly the documented WWW-Authenticate', async () => {
    const res = await fetch(svc.mcpUrl, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(initializeBody()) })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="No authorization provided", resource_metadata="${svc.running.services.config.baseUrl}/.well-known/oauth-protected-resource"`,
    )
    const body = await res.json()
    expect(body.jsonrpc).toBe('2.0')
    expect(body.error.code).toBe(-32001)
  })

  test.each([
    ['an unknown act_ key', `Bearer act_${'x'.repeat(43)}`],
    ['a malformed token', 'Bearer not-a-key'],
    ['another scheme', `Basic ${btoa('user:pass')}`],
    ['a long token', `Bearer act_${'a'.repeat(5_000)}`],
  ])('%s is refused with 401 and resource_metadata', async (_name, header) => {
    const res = await post(initializeBody(), { authorization: header })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=')
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  test('a header block too large for the server is refused before any work (431)', async () => {
    const res = await post(initializeBody(), { authorization: `Bearer act_${'a'.repeat(100_000)}` })
    expect(res.status).toBe(431)
  })

  test('a revoked key stops working', async () => {
    const { createAccount, createApiKey, revokeApiKey } = await import('../../shared/db/accounts.ts')
    const sql = svc.running.services.db.sql
    const account = await createAccount(sql, 'free')
    const k = await createApiKey(sql, account.id)
    expect((await post(initializeBody(), { authorization: `Bearer ${k.plaintext}` })).status).toBe(200)
    await revokeApiKey(sql, account.id, k.id)
    // The verified-credential cache lives 5 s at most.
    await Bun.sleep(5_100)
    expect((await post(initializeBody(), { authorization: `Bearer ${k.plaintext}` })).status).toBe(401)
  })

  test('the key is stored as a SHA-256 hash, never in plaintext', async () => {
    const rows = await svc.running.services.db.sql`SELECT key_hash, display_prefix FROM api_keys`
    expect(rows.length).toBeGreaterThan(0)
    for (const r of rows) {
      expect(r.key_hash).toMatch(/^[0-9a-f]{64}$/)
      expect(r.key_hash).not.toContain(key)
    }
    expect(rows.some((r) => r.key_hash === new Bun.CryptoHasher('sha256').update(key).digest('hex'))).toBe(true)
  })

  test('the protected-resource document names the MCP resource', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
      const res = await fetch(svc.url + path)
      expect(res.status).toBe(200)
      const doc = await res.json()
      expect(doc.resource).toBe(`${svc.running.services.config.baseUrl}/api/mcp`)
      expect(doc.authorization_servers).toEqual([svc.running.services.config.baseUrl])
    }
  })
})

describe('request rules', () => {
  test('/api/mcp, with or without a trailing slash or a query, reaches the MCP handler; a near-miss path is 404', async () => {
    for (const path of ['/api/mcp', '/api/mcp/', '/api/mcp?x=1', '/api/mcp/./']) {
      const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(initializeBody()) })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('resource_metadata=')
      const tools = await fetch(`${svc.url}${path}`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
      })
      expect(tools.status).toBe(200)
      expect((await tools.json()).id).toBe(7)
    }
    for (const path of ['/api/mcpx', '/api/mcp/x', '/API/MCP']) {
      const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: MCP_HEADERS, body: '{}' })
      expect(res.status).toBe(404)
    }
  })

  test('Accept with only application/json is refused with 406 before any tool runs', async () => {
    const session = await openSession()
    const res = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_account', arguments: {} } },
      { accept: 'application/json', 'mcp-session-id': session },
    )
    expect(res.status).toBe(406)
    const body = await res.json()
    expect(body.jsonrpc).toBe('2.0')
  })

  test('Accept with only text/event-stream is refused with 406', async () => {
    expect((await post(initializeBody(), { accept: 'text/event-stream' })).status).toBe(406)
  })

  test('malformed JSON gets a JSON-RPC -32700 body, never plain text', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ')
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toContain('application/json')
    const body = await res.json()
    expect(body).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) }, id: null })
  })

  test('a JSON body that is not JSON-RPC is refused with a JSON-RPC error', async () => {
    const session = await openSession()
    const res = await post({ hello: 'world' }, { 'mcp-session-id': session })
    expect(res.status).toBe(400)
    expect((await res.json()).jsonrpc).toBe('2.0')
  })

  test('a non-JSON content type gets 415', async () => {
    const res = await post(JSON.stringify(initializeBody()), { 'content-type': 'text/plain' })
    expect(res.status).toBe(415)
  })

  test('a body over the limit gets 413, declared or streamed', async () => {
    const big = JSON.stringify({ ...initializeBody(), pad: 'x'.repeat(70_000) })
    const res = await post(big)
    expect(res.status).toBe(413)
    expect((await res.json()).jsonrpc).toBe('2.0')
    const chunks = [new TextEncoder().encode(big)]
    const streamed = await fetch(svc.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: new ReadableStream({
        pull(c) {
          const next = chunks.shift()
          if (next) c.enqueue(next)
          else c.close()
        },
      }),
    })
    expect(streamed.status).toBe(413)
  })

  test('an unsupported method gets 405 with Allow', async () => {
    const res = await fetch(svc.mcpUrl, { method: 'PUT', headers: { authorization: `Bearer ${key}` } })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toContain('POST')
  })

  test('an unsupported MCP-Protocol-Version gets 400', async () => {
    const session = await openSession()
    const res = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' },
    )
    expect(res.status).toBe(400)
  })
})

describe('sessions', () => {
  test('initialize issues Mcp-Session-Id and negotiates the protocol version', async () => {
    const res = await post(initializeBody())
    expect(res.status).toBe(200)
    expect(res.headers.get('mcp-session-id')).toMatch(/^mcs_[0-9A-Za-z]+$/)
    const body = await res.json()
    expect(body.result.protocolVersion).toBe('2025-06-18')
    expect(body.result.serverInfo.name).toBe('appaudit')
    expect(body.result.capabilities.tools).toBeDefined()
  })

  test('a POST without Mcp-Session-Id is served on its own, whatever its method (README "Using it")', async () => {
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    expect(list.status).toBe(200)
    expect(list.headers.get('mcp-session-id')).toBeNull()
    expect((await list.json()).result.tools.length).toBe(18)
    const call = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_account', arguments: {} } })
    expect(call.status).toBe(200)
    const body = await call.json()
    expect(body.id).toBe(3)
    expect(JSON.parse(body.result.content[0].text).plan).toBe('free')
  })

  test('a sessionless tools/call with a progressToken still streams its progress and result', async () => {
    const res = await post({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'get_account', arguments: {}, _meta: { progressToken: 't' } },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    expect(await res.text()).toContain('"id":4')
  })

  test('GET and DELETE without Mcp-Session-Id get 400', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(svc.mcpUrl, { method, headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` } })
      expect(res.status).toBe(400)
      expect((await res.json()).error.message).toContain('Mcp-Session-Id')
    }
  })

  test('an unknown session gets 404', async () => {
    for (const id of ['mcs_0000000000000000000000', 'garbage', '../../etc/passwd']) {
      const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': id })
      expect(res.status).toBe(404)
    }
  })

  test("another account's session gets 404", async () => {
    const session = await openSession()
    const other = await svc.key()
    const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': session, authorization: `Bearer ${other}` })
    expect(res.status).toBe(404)
  })

  test('a session works, echoes its id, and after DELETE it is gone (404)', async () => {
    const session = await openSession()
    const ok = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': session })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('mcp-session-id')).toBe(session)
    expect((await ok.json()).result.tools.length).toBe(18)
    const del = await fetch(svc.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': session } })
    expect(del.status).toBe(204)
    const after = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': session })
    expect(after.status).toBe(404)
    const again = await fetch(svc.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': session } })
    expect(again.status).toBe(404)
  })

  test('a plain tools/list (answered without the SDK) says exactly what the SDK path says', async () => {
    const session = await openSession()
    const fast = await post({ jsonrpc: '2.0', id: 'a', method: 'tools/list' }, { 'mcp-session-id': session })
    // Any params (here an empty _meta) take the SDK path.
    const sdk = await post({ jsonrpc: '2.0', id: 'a', method: 'tools/list', params: { _meta: {} } }, { 'mcp-session-id': session })
    expect(fast.status).toBe(200)
    expect(fast.headers.get('mcp-session-id')).toBe(session)
    expect(fast.headers.get('access-control-expose-headers')).toContain('mcp-session-id')
    expect(await fast.json()).toEqual(await sdk.json())
    const badVersion = await post(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' },
    )
    expect(badVersion.status).toBe(400)
    const onlyJson = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': session, accept: 'application/json' })
    expect(onlyJson.status).toBe(406)
  })

  test('plain tools/list answers in flight together each carry their own id, short or long', async () => {
    const session = await openSession()
    // Integers and short strings are written into one shared buffer; an id too long for it takes another path.
    const ids: Array<string | number> = [
      ...Array.from({ length: 20 }, (_, i) => i),
      9007199254740991,
      'a',
      'é→𝄞"\\',
      'x'.repeat(300),
      'y'.repeat(5000),
    ]
    const answers = await Promise.all(
      ids.map(async (id) => {
        const res = await post({ jsonrpc: '2.0', id, method: 'tools/list' }, { 'mcp-session-id': session })
        expect(res.status).toBe(200)
        return (await res.json()) as { id: unknown; result: unknown }
      }),
    )
    expect(answers.map((a) => a.id)).toEqual(ids)
    for (const a of answers) expect(a.result).toEqual(answers[0]!.result)
  })

  test('a Response copies a buffer body when it is made (the tools/list answer reuses one buffer)', async () => {
    const bytes = new TextEncoder().encode('first answer')
    const res = new Response(bytes.subarray(0, 5))
    bytes.fill(0x78)
    expect(await res.text()).toBe('first')
  })

  test('a notification is accepted with 202', async () => {
    const session = await openSession()
    const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })
    expect(res.status).toBe(202)
  })

  test('GET opens an SSE stream for a session', async () => {
    const session = await openSession()
    const ctrl = new AbortController()
    const res = await fetch(svc.mcpUrl, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'mcp-session-id': session },
      signal: ctrl.signal,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    expect(res.headers.get('mcp-session-id')).toBe(session)
    ctrl.abort()
    const noSession = await fetch(svc.mcpUrl, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } })
    expect(noSession.status).toBe(400)
    const wrongAccept = await fetch(svc.mcpUrl, {
      headers: { authorization: `Bearer ${key}`, accept: 'application/json', 'mcp-session-id': session },
    })
    expect(wrongAccept.status).toBe(406)
  })
})

describe('DNS rebinding and hosts', () => {
  test('a foreign Host is refused with 403', async () => {
    const res = await post(initializeBody(), { host: 'evil.example.com', origin: 'http://evil.example.com' })
    expect(res.status).toBe(403)
    expect((await res.json()).jsonrpc).toBe('2.0')
  })

  test('loopback Host and Origin are accepted', async () => {
    const port = new URL(svc.url).port
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const res = await post(initializeBody(), { host, origin: `http://${host}` })
      expect(res.status).toBe(200)
    }
  })

  test('a malformed Origin is refused with 403', async () => {
    for (const origin of ['null', 'file://', 'javascript:alert(1)', 'http://a.example/path']) {
      expect((await post(initializeBody(), { origin })).status).toBe(403)
    }
  })
})

describe('apex host', () => {
  test('answers 308 to the www host of BASE_URL, keeping path and query', async () => {
    const s = await startService('production', { ROLE: 'api', BASE_URL: 'https://www.appaudit.test' })
    try {
      const res = await fetch(`${s.url}/api/mcp?x=1`, { method: 'POST', headers: { host: 'appaudit.test' }, redirect: 'manual' })
      expect(res.status).toBe(308)
      expect(res.headers.get('location')).toBe('https://www.appaudit.test/api/mcp?x=1')
      const www = await fetch(s.mcpUrl, { method: 'POST', headers: { host: 'www.appaudit.test', ...MCP_HEADERS }, body: '{}' })
      expect(www.status).toBe(401)
      expect(www.headers.get('www-authenticate')).toContain(
        'resource_metadata="https://www.appaudit.test/.well-known/oauth-protected-resource"',
      )
    } finally {
      await s.stop()
    }
  })
})
