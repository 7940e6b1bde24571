// The weaknesses an attack on the running service found (docs/security.md), one describe each, numbered as
// reported. Each test failed before its fix.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { deliberateError } from '../../api/app.ts'
import { RateLimiter } from '../../api/http/rate-limit.ts'
import { checkAuthorizeRequest } from '../../api/oauth/authorize.ts'
import { redirectUriProblem } from '../../api/oauth/redirect-uris.ts'
import { exchange } from '../../api/oauth/token.ts'
import { safeReturnTo } from '../../api/signin/index.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { createMemoryInfra } from '../../shared/infra/memory.ts'
import { createRedisInfra } from '../../shared/infra/redis.ts'
import { initializeBody, MCP_HEADERS } from '../harness/client.ts'
import { answerConsent, authorizeUrl, pkcePair, registerClient } from '../harness/oauth.ts'
import { REDIS_URL, startService, dropRedisPrefix, type TestService } from '../harness/service.ts'
import { CookieJar, jarFetch, signIn, startSignInService, type SignInService } from '../harness/signin.ts'
import { within } from '../harness/wait.ts'
import { machineDeadline } from '../harness/machine.ts'

let svc: SignInService
let jar: CookieJar

beforeAll(async () => {
  svc = await startSignInService('production', { TRUSTED_PROXY_HOPS: '1' })
  jar = await signIn(svc)
})
afterAll(() => svc?.stop())

/** A body that streams `total` bytes in 64 KiB chunks without a Content-Length, counting what was read. */
/**
 * A chunked body that offers `offer` bytes, then holds the stream open (never ending it) until `answered()`:
 * a server that waits for the whole body before answering never answers, so the request runs into its
 * deadline; one that stops at its cap answers while the client still has more to send.
 */
function endlessBody(offer: number) {
  const chunk = new Uint8Array(65_536).fill(0x61)
  const state = { sent: 0 }
  let answered!: () => void
  const answer = new Promise<void>((resolve) => {
    answered = resolve
  })
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (state.sent >= offer) {
        await answer
        return c.close()
      }
      state.sent += chunk.byteLength
      c.enqueue(chunk)
    },
  })
  return { body, state, answered }
}

/** Counts URLSearchParams.getAll calls made while fn runs. */
async function countGetAll(fn: () => Promise<unknown>): Promise<number> {
  const original = URLSearchParams.prototype.getAll
  let calls = 0
  URLSearchParams.prototype.getAll = function (this: URLSearchParams, name: string) {
    calls++
    return original.call(this, name)
  }
  try {
    await fn()
  } finally {
    URLSearchParams.prototype.getAll = original
  }
  return calls
}

describe('1. repeated-parameter checks are linear', () => {
  const manyKeys = () => {
    const q = new URLSearchParams({ grant_type: 'authorization_code', response_type: 'code' })
    for (let i = 0; i < 9_400; i++) q.append(`k${i}`, '')
    return q
  }

  test('a token request of 9,400 distinct parameters makes no per-key lookup', async () => {
    const deps = { sql: svc.running.services.db.sql, baseUrl: svc.baseUrl, now: () => new Date(), onRevoked: () => {} }
    expect(await countGetAll(() => exchange(deps, manyKeys()))).toBeLessThan(10)
  })

  test('an authorization request of 9,400 distinct parameters makes no per-key lookup', async () => {
    const { body } = await registerClient(svc)
    const q = manyKeys()
    q.set('client_id', body.client_id)
    expect(await countGetAll(() => checkAuthorizeRequest(svc.running.services.db.sql, svc.baseUrl, q))).toBeLessThan(10)
  })

  test('over HTTP, such a form is answered with an OAuth error', async () => {
    const res = await fetch(`${svc.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: manyKeys().toString(),
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_request')
  })
})

describe('2. every body is read with a cap, declared or chunked', () => {
  const cases: Array<[string, string, Record<string, string>, boolean]> = [
    ['/oauth/register', 'POST', { 'content-type': 'application/json' }, false],
    ['/oauth/token', 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, false],
    ['/oauth/authorize', 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, true],
    ['/auth/logout', 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, true],
  ]
  test.each(cases)('%s refuses an endless chunked body without waiting for its end', async (path, method, headers, signedIn) => {
    // 4 MB offered, then the stream stays open: far past every cap here (64 KiB on OAuth, 4 KiB on sign-out).
    const { body, state, answered } = endlessBody(4 * 1024 * 1024)
    const init = { method, headers: { ...headers, origin: svc.baseUrl }, body, duplex: 'half' } as RequestInit
    try {
      const res = await within(signedIn ? jarFetch(jar, `${svc.baseUrl}${path}`, init) : fetch(`${svc.baseUrl}${path}`, init), 20_000, path)
      expect([400, 413]).toContain(res.status)
      await res.body?.cancel()
    } finally {
      answered()
    }
    expect(state.sent).toBeLessThanOrEqual(4 * 1024 * 1024)
  })
})

describe('3. return_to after sign-in stays on this origin as a browser reads it', () => {
  test.each([
    ['/\t/evil.example', '/dashboard'],
    ['/\n/evil.example', '/dashboard'],
    ['/\\evil.example', '/dashboard'],
    ['/\\/evil.example', '/dashboard'],
    ['//evil.example', '/dashboard'],
    ['/.//evil.example', '/dashboard'],
    ['https://evil.example/', '/dashboard'],
    ['/oauth/authorize?client_id=x&state=y', '/oauth/authorize?client_id=x&state=y'],
    ['/dashboard/apps', '/dashboard/apps'],
  ])('%j -> %s', (raw, expected) => {
    expect(safeReturnTo(raw)).toBe(expected)
  })

  test('the sign-in route refuses /%09/evil.example and lands on the dashboard', async () => {
    const res = await fetch(`${svc.baseUrl}/auth/login?return_to=/%09/evil.example`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const flow = res.headers.getSetCookie().find((c) => c.startsWith('aa_signin='))!
    const state = /aa_signin=([^;]+)/.exec(flow)![1]!
    const stored = JSON.parse((await svc.running.services.infra.kv.get(`signin:flow:${state}`))!)
    expect(stored.returnTo).toBe('/dashboard')
  })
})

describe('4. an invalid authorization request is never redirected automatically', () => {
  const params = (clientId: string, over: Record<string, string> = {}) => ({
    response_type: 'token',
    client_id: clientId,
    redirect_uri: 'https://evil.example/phish',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st-9',
    ...over,
  })

  test('an anonymous visitor gets an error page, not a 302 to the registered URI', async () => {
    const { body } = await registerClient(svc, { redirect_uris: ['https://evil.example/phish'] })
    const res = await fetch(authorizeUrl(svc, params(body.client_id)), { redirect: 'manual' })
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    expect(await res.text()).not.toContain('evil.example')
  })

  test('a signed-in person sees which client asked and may follow a link back with the error', async () => {
    const { body } = await registerClient(svc, { client_name: 'Phish <App>', redirect_uris: ['https://evil.example/phish'] })
    const res = await jarFetch(jar, authorizeUrl(svc, params(body.client_id)))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    const html = await res.text()
    expect(html).toContain('Phish &lt;App&gt;')
    const link = new URL(/id="return-to-client" href="([^"]+)"/.exec(html)![1]!.replaceAll('&amp;', '&'))
    expect(link.origin + link.pathname).toBe('https://evil.example/phish')
    expect(link.searchParams.get('error')).toBe('unsupported_response_type')
    expect(link.searchParams.get('state')).toBe('st-9')
    expect(link.searchParams.get('iss')).toBe(svc.baseUrl)
  })
})

describe('5. errors are deliberate answers, never a debug page', () => {
  test.each(['/viewer/%ZZ/ws', '/viewer/%ZZ', '/%ZZ', '/api/scans/%E0%A4%A', '/oauth/authorize?client_id=%ZZ'])(
    '%s answers 4xx without internals',
    async (path) => {
      const res = await fetch(`${svc.baseUrl}${path}`, { headers: { upgrade: 'websocket', connection: 'upgrade' } })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      const text = await res.text()
      for (const leak of ['/work/', 'node_modules', '.ts:', 'at <', 'URIError', 'stack']) expect(text).not.toContain(leak)
    },
  )

  test('an unexpected error becomes a bare 500 and a log line', () => {
    const lines: string[] = []
    const capture = (msg: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ msg, ...fields }))
    const log: Logger = { debug: capture, info: capture, warn: capture, error: capture, child: () => log }
    const res = deliberateError('UNKNOWN', new Error('secret detail at /work/x.ts:1'), new Request('http://h/p?token=abc'), log)
    expect(res.status).toBe(500)
    expect(lines.join('')).toContain('secret detail')
    expect(lines.join('')).not.toContain('token=abc')
  })
})

describe('6. caps on /api/mcp', () => {
  let api: TestService
  beforeAll(async () => {
    // No crawler: scans stay queued until SCAN_TIMEOUT_MS, holding their slot as a busy scanner would.
    api = await startService('production', { ROLE: 'api', SCAN_TIMEOUT_MS: '4000' })
  })
  afterAll(() => api?.stop())
  // A target that listens, so scan_app records its scans (it refuses a port where nothing listens at once).
  const target = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<p>hi</p>') })
  afterAll(() => target.stop(true))

  const rpc = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(api.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    })
  const session = async (key: string) => (await rpc(key, initializeBody())).headers.get('mcp-session-id')!
  const callScan = async (key: string, sid: string, i: number) => {
    const res = await rpc(
      key,
      { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'scan_app', arguments: { url: `http://127.0.0.1:${target.port}/` } } },
      {
        'mcp-session-id': sid,
      },
    )
    const body = await res.json()
    return JSON.parse(body.result.content[0].text)
  }

  test('a free account runs at most 2 scan_app calls at once; the rest are rate_limited at once; others are unaffected', async () => {
    const key = await api.key('free')
    const sid = await session(key)
    const other = await api.key('free')
    const otherSid = await session(other)
    const t0 = Date.now()
    const results = await Promise.all([...Array.from({ length: 8 }, (_, i) => callScan(key, sid, i)), callScan(other, otherSid, 99)])
    const limited = results.filter((r) => r.error?.code === 'rate_limited')
    expect(limited.length).toBe(6)
    expect(limited[0].error.retryAfter).toBeGreaterThan(0)
    // The two admitted and the other account's call waited for a scanner that never came.
    expect(results.filter((r) => r.error?.code === 'scanner_unavailable').length).toBe(3)
    expect(Date.now() - t0).toBeLessThan(machineDeadline(30_000))
  })

  test('one GET stream per session: a second is 409 until the first ends', async () => {
    const key = await api.key()
    const sid = await session(key)
    const get = (signal?: AbortSignal) =>
      fetch(api.mcpUrl, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'mcp-session-id': sid }, signal })
    const first = new AbortController()
    expect((await get(first.signal)).status).toBe(200)
    const second = await get()
    expect(second.status).toBe(409)
    expect((await second.json()).error.message).toContain('one per session')
    first.abort()
    let status = 0
    for (let i = 0; i < 50 && status !== 200; i++) {
      const ctrl = new AbortController()
      const res = await get(ctrl.signal)
      status = res.status
      ctrl.abort()
      if (status !== 200) await Bun.sleep(100)
    }
    expect(status).toBe(200)
  })

  test('sessions per credential are limited (429 with Retry-After); another credential is unaffected', async () => {
    const key = await api.key()
    let refused: Response | null = null
    for (let i = 0; i < 101 && !refused; i++) {
      const res = await rpc(key, initializeBody(i))
      if (res.status === 429) refused = res
      else expect(res.status).toBe(200)
    }
    expect(refused).not.toBeNull()
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await refused!.json()).error.code).toBe(-32000)
    expect((await rpc(await api.key(), initializeBody())).status).toBe(200)
  })
})

describe('7. the embedded key-value store stays fast when full of live keys', () => {
  test('20,000 writes beside 150,000 live keys visit a bounded number of stored keys (each swept them all before)', async () => {
    const infra = createMemoryInfra({ claimIdleMs: 60_000, heartbeatMs: 10_000 })
    for (let i = 0; i < 150_000; i++) await infra.kv.set(`live:${i}`, '1', 3_600)
    // Work, not time: the entries of every Map walked while the writes run (the store sweeps its Map).
    const iterate = Map.prototype[Symbol.iterator]
    let visited = 0
    Map.prototype[Symbol.iterator] = function (this: Map<unknown, unknown>) {
      const it = iterate.call(this)
      return Object.assign(Object.create(it), { next: () => (visited++, it.next()) }) as ReturnType<typeof iterate>
    }
    try {
      for (let i = 0; i < 20_000; i++) await infra.kv.set(`more:${i}`, '1', 3_600)
    } finally {
      Map.prototype[Symbol.iterator] = iterate
    }
    // Before: every write past 100,000 keys walked the whole map, about 20,000 x 150,000 steps (tens of
    // seconds). Now a sweep over n keys comes at most once per n writes: a few visits per write at most.
    expect(visited).toBeLessThanOrEqual(4 * 20_000)
    expect(await infra.kv.get('live:0')).toBe('1')
    await infra.close()
  })
})

describe('8. rate limits count atomically', () => {
  test.each(['memory', 'redis'] as const)('%s: 100 concurrent hits on a limit of 20 let exactly 20 through', async (kind) => {
    const tuning = { claimIdleMs: 60_000, heartbeatMs: 10_000 }
    const prefix = `test:${Math.random().toString(36).slice(2)}:`
    const infra = kind === 'memory' ? createMemoryInfra(tuning) : await createRedisInfra(REDIS_URL, tuning, prefix)
    try {
      const limiter = new RateLimiter(infra.kv)
      const hits = await Promise.all(Array.from({ length: 100 }, () => limiter.hit('oauthRegister', '203.0.113.9')))
      expect(hits.filter((h) => h.ok).length).toBe(20)
    } finally {
      await infra.close()
      if (kind === 'redis') await dropRedisPrefix(REDIS_URL, prefix)
    }
  })
})

describe('9 and 10. malformed JSON-RPC is refused before anything runs', () => {
  let key: string
  beforeAll(async () => {
    key = await svc.key()
  })
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${svc.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    })
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_account', arguments: {} } }

  test('a batch of a param-less initialize notification and a tools/call runs no tool', async () => {
    const res = await post([{ jsonrpc: '2.0', method: 'initialize' }, call])
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.error.code).toBe(-32602)
    expect(JSON.stringify(body)).not.toContain('plan')
  })

  test('initialize without params is -32602 and opens no session', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize' })
    expect(res.status).toBe(400)
    expect(res.headers.get('mcp-session-id')).toBeNull()
    const body = await res.json()
    expect(body.error.code).toBe(-32602)
    expect(body.id).toBe(1)
  })

  test('tools/call with malformed params is -32602 with a short message, not -32603 and a schema dump', async () => {
    const sid = (await post(initializeBody())).headers.get('mcp-session-id')!
    for (const params of [{ name: 5 }, { arguments: {} }, { name: 'get_account', arguments: 'x' }, null]) {
      const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }, { 'mcp-session-id': sid })
      const body = await res.json()
      expect(body.error.code).toBe(-32602)
      expect(body.id).toBe(7)
      expect(body.error.message.length).toBeLessThan(200)
    }
  })

  test('an empty batch is -32600', async () => {
    const res = await post([])
    expect(res.status).toBe(400)
    expect((await res.json()).error.code).toBe(-32600)
  })
})

describe('11. the embedded default keeps its local user across restarts', () => {
  test('signing in after a restart (a new provider port) finds the same user and account', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { browse, DEV_USER } = await import('../harness/signin.ts')
    const dataDir = mkdtempSync(join(tmpdir(), 'appaudit-restart-'))
    const accounts: string[] = []
    const issuers: string[] = []
    try {
      for (let round = 0; round < 2; round++) {
        const s = await startService('embedded', { ROLE: 'api', DATA_DIR: dataDir, LOCAL_IDP_USER: DEV_USER })
        const baseUrl = s.running.services.config.baseUrl
        try {
          issuers.push(s.running.localSignIn!.issuer)
          const j = new CookieJar()
          await browse(j, `${baseUrl}/auth/login`, {
            password: s.running.localSignIn!.password,
            stopAt: (u) => u.startsWith(baseUrl) && !u.startsWith(`${baseUrl}/auth/`),
          })
          const rows = await s.running.services.db.sql<{ account_id: string }[]>`SELECT account_id FROM users`
          expect(rows.length).toBe(1)
          accounts.push(rows[0]!.account_id)
        } finally {
          await s.stop()
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
    expect(issuers[0]).not.toBe(issuers[1])
    expect(accounts[0]).toBe(accounts[1])
  }, 60_000)
})

describe('12. a consent answered from another session leaves it for its owner', () => {
  test("another session's answer is refused and the owner can still approve", async () => {
    const redirectUri = 'http://127.0.0.1:9999/callback'
    const { body } = await registerClient(svc, { redirect_uris: [redirectUri] })
    const consentUrl = () =>
      authorizeUrl(svc, {
        response_type: 'code',
        client_id: body.client_id,
        redirect_uri: redirectUri,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      })
    const page = await (await jarFetch(jar, consentUrl())).text()
    const otherJar = await signIn(svc)
    const otherPage = await (await jarFetch(otherJar, consentUrl())).text()
    const otherCsrf = /name="csrf" value="([^"]+)"/.exec(otherPage)![1]!
    // The other session answers the owner's request id with its own anti-CSRF token.
    const requestId = /name="request_id" value="([^"]+)"/.exec(page)![1]!
    const stolen = await jarFetch(otherJar, `${svc.baseUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.baseUrl },
      body: new URLSearchParams({ request_id: requestId, csrf: otherCsrf, decision: 'deny' }),
    })
    expect(stolen.status).toBe(400)
    const owner = await answerConsent(svc, jar, page, 'approve')
    expect(owner.status).toBe(303)
    expect(new URL(owner.headers.get('location')!).searchParams.get('code')).toMatch(/^mcc_/)
  })
})

describe('13. redirect URI schemes are allowed by list, not refused by list', () => {
  test.each(['ms-msdt:/id', 'search-ms:query=x', 'x-javascript:alert(1)', 'jar:https://a.example/x.jar!/', 'myapp:/cb', 'intent://x'])(
    '%s is refused',
    (uri) => {
      expect(redirectUriProblem(uri)).not.toBeNull()
    },
  )
  test.each(['com.example.app:/oauth2redirect', 'cursor://anysphere.cursor-retrieval/oauth/user-callback', 'vscode://publisher.ext/cb'])(
    '%s is allowed',
    (uri) => {
      expect(redirectUriProblem(uri)).toBeNull()
    },
  )
})

describe('14. wide JSON is refused before it is parsed or validated', () => {
  let key: string
  beforeAll(async () => {
    key = await svc.key()
  })
  const post = (text: string) =>
    fetch(`${svc.baseUrl}/api/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` }, body: text })
  const fields = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')

  test('a tools/call whose arguments hold 60,000 keys is -32600 naming the limit, and no tool runs', async () => {
    const res = await post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scan_app","arguments":{${fields(60_000)}}}}`)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: an object holds more than 256 keys' },
      id: null,
    })
  })

  test('an initialize with 60,000 keys in capabilities.experimental opens no session', async () => {
    const res = await post(
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"},"capabilities":{"experimental":{${fields(60_000)}}}}}`,
    )
    expect(res.status).toBe(400)
    expect(res.headers.get('mcp-session-id')).toBeNull()
    expect((await res.json()).error.message).toContain('more than 256 keys')
  })

  test('a long array and a deep nesting are refused the same way; the same megabyte as one string is not', async () => {
    const array = await post(
      `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"scan_app","arguments":{"url":[${Array.from({ length: 50_000 }, (_, i) => i).join(',')}]}}}`,
    )
    expect((await array.json()).error.message).toBe('Invalid Request: an array holds more than 1000 items')
    const deep = await post(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":${'['.repeat(40)}${']'.repeat(40)}}}`)
    expect((await deep.json()).error.message).toContain('more than 32 deep')
    const flat = await post(
      `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"explain_check","arguments":{"checkId":"${'x'.repeat(900_000)}"}}}`,
    )
    expect(flat.status).toBe(200)
  })
})
