// check_data_exposure through the official SDK client against the production path, with a Supabase
// project made of a real PostgreSQL database, PostgREST (or its wire-format stand-in, see the fixture)
// and a /rest/v1 gateway, plus a Firebase Realtime Database stand-in.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { findInBundle, importedScripts } from '../../api/data-exposure/bundle.ts'
import { contentRangeTotal } from '../../api/data-exposure/data-requests.ts'
import { redact } from '../../api/data-exposure/redact.ts'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { SEEDED, startSupabaseFixture, supabaseAppSite, type AppSite, type SupabaseFixture } from '../fixtures/postgrest.ts'

/**
 * Firebase Realtime Database REST, as documented: GET /.json?shallow=true answers the top-level keys
 * with `true`; locked rules answer 401 {"error": "Permission denied"}.
 */
function firebaseStandIn() {
  const state = { open: true }
  const requests: string[] = []
  const data = { users: { u1: { email: 'zelda.hyrule@fb.example', name: 'Zelda Fitzgerald' } }, orders: { o1: { total: 9131 } } }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url)
      requests.push(`${req.method} ${url.pathname}${url.search}`)
      if (!state.open) return Response.json({ error: 'Permission denied' }, { status: 401 })
      if (url.pathname !== '/.json') return Response.json(null)
      const shallow = url.searchParams.get('shallow') === 'true'
      return Response.json(shallow ? Object.fromEntries(Object.keys(data).map((k) => [k, true])) : data)
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    state,
    requests,
    values: ['zelda.hyrule@fb.example', 'Zelda Fitzgerald'],
    stop: () => server.stop(true),
  }
}

let fx: SupabaseFixture
let fb: ReturnType<typeof firebaseStandIn>
let app: AppSite
let svc: TestService
let guarded: TestService
let client: Client
let guardedClient: Client
const stops: Array<() => unknown> = []

const check = async (c: Client, url: string) => {
  const r = await c.callTool({ name: 'check_data_exposure', arguments: { url } })
  return { isError: r.isError === true, body: payload(r) }
}

/** verify_site by the file method: create the token, serve it, check. */
async function verifyByFile(c: Client, site: AppSite) {
  const first = payload(await c.callTool({ name: 'verify_site', arguments: { url: site.url } }))
  site.setVerificationFile(first.token)
  const done = payload(await c.callTool({ name: 'verify_site', arguments: { url: site.url, method: 'file' } }))
  expect(done.verified).toBe(true)
}

beforeAll(async () => {
  fx = await startSupabaseFixture()
  stops.push(() => fx.stop())
  fb = firebaseStandIn()
  stops.push(fb.stop)
  app = await supabaseAppSite({ projectUrl: fx.projectUrl, anonKey: fx.anonKey, firebaseDatabaseUrl: fb.url })
  stops.push(app.stop)
  svc = await startService('production', { ROLE: 'api' })
  stops.push(() => svc.stop())
  client = await connectClient(svc.mcpUrl, await svc.key('free'))
  stops.push(() => client.close())
  // Private targets refused; only the name "localhost" is trusted (a staging-style exemption).
  guarded = await startService('production', { ROLE: 'api', ALLOW_PRIVATE_TARGETS: 'false', TRUSTED_TARGET_HOSTS: 'localhost' })
  stops.push(() => guarded.stop())
  guardedClient = await connectClient(guarded.mcpUrl, await guarded.key('free'))
  stops.push(() => guardedClient.close())
})

afterAll(async () => {
  for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => {})
})

describe('check_data_exposure', () => {
  test('is listed as read-only and open-world', async () => {
    const { tools } = await client.listTools()
    const t = tools.find((x) => x.name === 'check_data_exposure')!
    expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true, destructiveHint: false })
    expect(t.inputSchema.required).toEqual(['url'])
  })

  test('unverified: reports what the page load reveals and makes no data request', async () => {
    const { isError, body } = await check(client, app.url)
    expect(isError).toBe(false)
    expect(body).toMatchObject({ url: app.url, finalUrl: app.url, origin: app.origin, verified: false, probed: false, exposed: [] })
    expect(body.supabase.projectUrl).toBe(fx.projectUrl)
    expect(body.supabase.keyKind).toBe('anon')
    // Decoys (Array.from("abc"), Buffer.from(...), storage.from("avatars")) are not tables.
    expect(body.supabase.tables.map((t: { name: string }) => t.name).sort()).toEqual(['profiles', 'secrets', 'todos'])
    for (const t of body.supabase.tables) {
      expect(t).toMatchObject({ readable: null, status: 'not_checked', rowCount: null, sample: null })
      expect(t.detail).toContain('not verified')
    }
    expect(body.firebase).toMatchObject({ databaseURL: fb.url, projectId: 'todo-fixture', status: 'not_checked', readable: null })
    expect(body.nextStep).toEqual({ tool: 'verify_site', arguments: { url: `${app.origin}/` }, why: expect.any(String) })
    expect(body.notes.join(' ')).toContain('verify_site')
    // The entry chunk, the modulepreloaded vendor chunk and the lazily imported chunk were read.
    expect(body.loaded.scripts.map((u: string) => new URL(u).pathname).sort()).toEqual([
      '/assets/index-3f9a1c.js',
      '/assets/todos-91ab7c.js',
      '/assets/vendor-8d2e4b.js',
    ])
    expect(fx.requests).toEqual([])
    expect(fb.requests).toEqual([])
  })

  test('verified: RLS off is exposed with a row count and a redacted sample, RLS on is unknown, ungranted is denied', async () => {
    await verifyByFile(client, app)
    const { isError, body } = await check(client, app.url)
    expect(isError).toBe(false)
    expect(body.verified).toBe(true)
    expect(body.probed).toBe(true)
    expect(body.nextStep).toBeUndefined()
    const byName = Object.fromEntries(body.supabase.tables.map((t: { name: string }) => [t.name, t]))

    expect(byName.todos).toMatchObject({ readable: true, status: 'exposed', rowCount: SEEDED.todos.length, httpStatus: 200 })
    expect(byName.todos.sample).toHaveLength(3)
    expect(Object.keys(byName.todos.sample[0]).sort()).toEqual(Object.keys(SEEDED.todos[0]!).sort())
    expect(byName.todos.sample[0]).toEqual({
      id: '#',
      title: 'Re…',
      owner_email: '[email]',
      owner_phone: '[phone]',
      done: '#',
      minutes: '#',
    })

    expect(byName.profiles).toMatchObject({ readable: null, status: 'empty_or_rls', rowCount: null, sample: null, httpStatus: 200 })
    expect(byName.secrets).toMatchObject({ readable: false, status: 'denied', rowCount: null, sample: null, httpStatus: 401 })
    expect(byName.secrets.detail).toContain('permission denied')

    expect(body.firebase).toMatchObject({ readable: true, status: 'open', topLevelKeys: ['users', 'orders'] })
    expect(body.exposed.sort()).toEqual(['firebase:/', 'todos'])

    // Read-only: GET and HEAD only, and the sample asked for no more than 3 rows.
    expect(fx.requests.length).toBeGreaterThan(0)
    expect(fx.requests.every((r) => r.method === 'GET' || r.method === 'HEAD')).toBe(true)
    expect(fx.requests).toContainEqual({ method: 'GET', path: '/rest/v1/todos?select=*&limit=3' })
    expect(fx.requests).toContainEqual({ method: 'HEAD', path: '/rest/v1/todos?select=*' })
    expect(fb.requests).toEqual(['GET /.json?shallow=true'])
  })

  test('no value read from the site appears in the result', async () => {
    const { body } = await check(client, app.url)
    const text = JSON.stringify(body)
    const values = [...Object.values(SEEDED).flatMap((rows) => rows.flatMap((r) => Object.values(r))), ...fb.values].filter(
      (v): v is string => typeof v === 'string',
    )
    expect(values.length).toBeGreaterThan(20)
    for (const v of values) expect(text).not.toContain(v)
    for (const row of SEEDED.todos) expect(text).not.toContain(`"${row.minutes}"`)
    expect(text).not.toContain(fx.anonKey)
  })

  test('a locked Firebase database is reported as denied', async () => {
    fb.state.open = false
    try {
      const { body } = await check(client, app.url)
      expect(body.firebase).toMatchObject({ readable: false, status: 'denied', httpStatus: 401, topLevelKeys: null })
      expect(body.exposed).toEqual(['todos'])
    } finally {
      fb.state.open = true
    }
  })
})

describe('egress guard', () => {
  test('with private targets not allowed, loopback targets are target_blocked', async () => {
    const port = new URL(app.url).port
    const before = fx.requests.length
    for (const url of [app.url, `http://[::1]:${port}/`, `http://0x7f.1:${port}/`, `http://2130706433:${port}/`]) {
      const { isError, body } = await check(guardedClient, url)
      expect(isError).toBe(true)
      expect(body.error.code).toBe('target_blocked')
    }
    expect(fx.requests.length).toBe(before)
  })

  test('a verified app whose bundle points its project at a blocked address gets no data request through', async () => {
    const local = await supabaseAppSite({ projectUrl: fx.projectUrl, anonKey: fx.anonKey, host: 'localhost' })
    stops.push(local.stop)
    await verifyByFile(guardedClient, local)
    const before = fx.requests.length
    const { isError, body } = await check(guardedClient, local.url)
    expect(isError).toBe(false)
    expect(body.verified).toBe(true)
    for (const t of body.supabase.tables) {
      expect(t).toMatchObject({ readable: null, status: 'blocked', sample: null })
      expect(t.detail).toContain('target_blocked')
    }
    expect(body.exposed).toEqual([])
    expect(fx.requests.length).toBe(before)
  })
})

describe('bundle findings', () => {
  const jwt = (claims: Record<string, unknown>) =>
    `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2lnbmF0dXJlLW5vdC1jaGVja2Vk`

  test('a hosted project: the anon key whose ref matches, tables from .from() and /rest/v1 paths', () => {
    const anon = jwt({ iss: 'supabase', ref: 'abcdefghijklmnopqrst', role: 'anon' })
    const other = jwt({ iss: 'supabase', ref: 'zzzzzzzzzzzzzzzzzzzz', role: 'anon' })
    const f = findInBundle([
      {
        url: 'https://app.example/a.js',
        text: `const k="${other}";const x=hb("https://abcdefghijklmnopqrst.supabase.co","${anon}");x.from( "orders" ).select();`,
      },
      {
        url: 'https://app.example/b.js',
        text: `fetch("https://abcdefghijklmnopqrst.supabase.co/rest/v1/invoices?select=id");x.rpc("do_things");fetch(u+"/rest/v1/rpc/f")`,
      },
    ])
    expect(f.supabase).toEqual({
      projectUrl: 'https://abcdefghijklmnopqrst.supabase.co',
      key: { kind: 'anon', value: anon },
      tables: ['orders', 'invoices'],
      otherProjectUrls: [],
    })
    expect(f.leakedSecrets).toEqual([])
  })

  test('a publishable key; a service_role JWT and an sb_secret_ key are reported, never used', () => {
    const f = findInBundle([
      {
        url: 'https://app.example/c.js',
        text: `createClient("https://qwertyuiopasdfghjklz.supabase.co","sb_publishable_AbCdEfGhIjKlMnOp_123");const admin="${jwt({ role: 'service_role' })}";const s="sb_secret_ZyXwVuTsRqPoNm_987";db.from('notes')`,
      },
    ])
    expect(f.supabase?.key).toEqual({ kind: 'publishable', value: 'sb_publishable_AbCdEfGhIjKlMnOp_123' })
    expect(f.leakedSecrets.map((s) => s.kind).sort()).toEqual(['supabase_secret_key', 'supabase_service_role_jwt'])
  })

  test('nothing found in an ordinary bundle', () => {
    const f = findInBundle([
      { url: 'https://app.example/', text: 'const a=Array.from("xyz");const b=Buffer.from("aGk=","base64");Observable.from("q")' },
    ])
    expect(f).toEqual({ supabase: null, firebase: null, leakedSecrets: [] })
  })

  test('Firebase: a Realtime Database host and project id', () => {
    const f = findInBundle([
      {
        url: 'https://app.example/',
        text: 'initializeApp({projectId:"my-proj",databaseURL:"https://my-proj-default-rtdb.europe-west1.firebasedatabase.app"})',
      },
    ])
    expect(f.firebase).toEqual({
      databaseURL: 'https://my-proj-default-rtdb.europe-west1.firebasedatabase.app',
      projectId: 'my-proj',
      webApiKey: false,
    })
  })

  test('same-origin module imports are followed from a script', () => {
    expect(
      importedScripts(
        'import{a}from"./x-1.js";const l=()=>import("../y.mjs");import"/z.js";fetch("./data.json")',
        'https://a.example/assets/i.js',
      ),
    ).toEqual(['https://a.example/assets/x-1.js', 'https://a.example/y.mjs', 'https://a.example/z.js'])
  })
})

describe('redaction', () => {
  test('keeps keys and masks values', () => {
    expect(
      redact({
        name: 'Katherine Johnson',
        email: 'kj@nasa.example',
        tel: '+1 (757) 555-0100',
        n: 42,
        ok: true,
        none: null,
        id: 'ab',
        password_hash: 'x',
        nested: { list: ['alpha', 'beta', 'gamma', 'delta'] },
      }),
    ).toEqual({
      name: 'Ka…',
      email: '[email]',
      tel: '[phone]',
      n: '#',
      ok: '#',
      none: null,
      id: '…',
      password_hash: '[redacted]',
      nested: { list: ['al…', 'be…', 'ga…', '… 1 more'] },
    })
  })

  test('reads the total from a PostgREST Content-Range', () => {
    expect(contentRangeTotal('0-0/57')).toBe(57)
    expect(contentRangeTotal('*/0')).toBe(0)
    expect(contentRangeTotal('0-2/*')).toBeNull()
    expect(contentRangeTotal(null)).toBeNull()
  })
})
