// What the HTTP fuzzer sends, as fast-check arbitraries of small request descriptions (RequestSpec):
// a route, a method, a path, a query, headers and a body. Large parts are described, not generated
// byte by byte (a body is {kind, size, seed}, a query {extraKeys: 9000}), so generating stays cheap,
// shrinking works on sizes and counts, and a counterexample prints in a few lines. probe.ts turns a spec
// into a real request.
//
// Placeholders filled in at build time: {port} (the service's port), {basehost} (BASE_URL's host),
// {key} (a valid API key), {session} (an open MCP session), {client} (a registered OAuth client).
//
// Safety: every request goes to svc.url (127.0.0.1); Host is only a header. Tool arguments never name a
// host outside loopback (defang below), and the service runs with ALLOW_PRIVATE_TARGETS=false, so site
// tools answer target_blocked before any outbound connection or DNS lookup.
import fc from 'fast-check'

export type BodySpec =
  /** Text sent as it is (JSON, JSON-RPC, forms, garbage). */
  | { kind: 'text'; text: string }
  /** `size` pseudo-random bytes from `seed`. */
  | { kind: 'bytes'; size: number; seed: number }
  /** JSON nested `depth` levels deep; `closed: false` leaves every bracket open. */
  | { kind: 'deep'; depth: number; style: 'array' | 'object' | 'rpc'; closed: boolean }
  /** A form with `keys` distinct keys, and one key repeated `repeat` times. */
  | { kind: 'form'; keys: number; repeat: number; prefix: string }
  /**
   * One JSON object with `keys` distinct keys (or an array of `keys` items), bare or inside an MCP message:
   * tools/list params, a tools/call's arguments, an initialize's capabilities.experimental.
   */
  | { kind: 'wide'; keys: number; rpc: boolean; where?: 'params' | 'arguments' | 'capabilities' | 'array' }
  /** A valid JSON-RPC tools/call padded with a long string to exactly `size` bytes (limits are checked around here). */
  | { kind: 'padded'; size: number }

export interface QuerySpec {
  /** Parameters the route reads, with hostile values. */
  params: Array<[string, string]>
  /** k0=0&k1=1...: this many distinct extra keys. */
  extraKeys: number
  /** The same key this many times. */
  repeat: number
  /** Appended as is: malformed escapes, lone separators. */
  raw: string
}

export interface RequestSpec {
  /** The route aimed at, for the report (the path may have been mangled). */
  route: string
  method: string
  path: string
  query: QuerySpec | null
  headers: Array<[string, string]>
  body: BodySpec | null
  /** Streamed without Content-Length, in chunks of this many bytes; null sends a framed body. */
  chunk: number | null
}

/** MAX_BODY_BYTES by default (README "Configuration"): sizes cluster around it. */
export const MCP_BODY_LIMIT = 1_048_576
/** /oauth/* read at most this much (api/oauth/index.ts). */
const OAUTH_BODY_LIMIT = 65_536

// --- strings -----------------------------------------------------------------------------------------

/** Printable ASCII: what a header value may hold. */
const headerText = (maxLength = 40) => fc.string({ maxLength })

const hostileText = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '%',
    '%ZZ',
    '%C0%AE',
    '%00',
    '\u0000',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '{{7*7}}',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j-style lookup, sent as plain text
    '${jndi:ldap://127.0.0.1/a}',
    '\r\nSet-Cookie: x=1',
    'null',
    'undefined',
    'NaN',
    '-1',
    '1e309',
    '[]',
    '{}',
    '\uFEFF',
    '\uD800',
    '😀'.repeat(20),
    '__proto__',
    'constructor',
    'toString',
  ),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.integer({ min: 200, max: 3_000 }).map((n) => 'A'.repeat(n)),
)

/** Host names that still reach 127.0.0.1 (the connection is always made to svc.url). */
const hostHeader = fc.constantFrom(
  '127.0.0.1:{port}',
  'localhost:{port}',
  '{basehost}',
  'LOCALHOST:{port}',
  'localhost.:{port}',
  '[::1]:{port}',
  '127.0.0.1',
  '127.0.0.1:99999',
  '127.0.0.1:',
  'evil.example',
  'www.evil.example:{port}',
  '127.0.0.1.evil.example',
  '',
  ' ',
  '[::1',
  'localhost:{port}, evil.example',
  `${'a'.repeat(300)}.example`,
)

const originHeader = fc.oneof(
  fc.constantFrom(
    'http://127.0.0.1:{port}',
    'http://{basehost}',
    'http://localhost:{port}/',
    'https://evil.example',
    'null',
    'file://',
    'http://[::1',
    'javascript:alert(1)',
    'http://127.0.0.1:{port}/path',
    'http://user:pass@127.0.0.1',
    '',
  ),
  headerText(60),
)

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json;;;',
    'application/json; charset=utf-16',
    'application/json, text/plain',
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=iso-8859-1',
    'multipart/form-data',
    'multipart/form-data; boundary=x',
    'text/plain',
    'text/event-stream',
    'application/octet-stream',
    'application/*',
    '*/*',
    ';',
    '',
  ),
  headerText(40),
)

const acceptHeader = fc.oneof(
  fc.constantFrom(
    'application/json, text/event-stream',
    'text/event-stream, application/json',
    'application/json',
    'text/event-stream',
    '*/*',
    'text/html',
    '',
    'application/json;q=0, text/event-stream;q=0',
  ),
  headerText(80),
  // Huge: a few kB up to past what the server takes in one header block.
  fc.integer({ min: 50, max: 4_000 }).map((n) => `application/json, text/event-stream, ${'x/y;q=0.1, '.repeat(n)}`),
)

const bearerGarbage = fc.oneof(
  fc.constantFrom('Bearer', 'Bearer ', 'Bearer act_', 'Bearer mca_', 'bearer act_x', 'Basic dXNlcjpwYXNz', 'Bearer  act_a', 'Token x'),
  headerText(60).map((s) => `Bearer act_${s}`),
  fc.integer({ min: 100, max: 20_000 }).map((n) => `Bearer act_${'a'.repeat(n)}`),
)

const cookieHeader = fc.oneof(
  fc.constantFrom('aa_session=', 'aa_session', '=', ';;;', 'aa_signin=x; aa_session=y', 'aa_session=%ZZ'),
  headerText(60).map((s) => `aa_session=${s}`),
  headerText(60).map((s) => `aa_signin=${s}`),
  fc.integer({ min: 100, max: 10_000 }).map((n) => `aa_session=${'s'.repeat(n)}`),
)

const forwardedFor = fc.oneof(fc.ipV4(), fc.ipV6(), headerText(30), fc.constant(''), fc.constant('1.1.1.1, 2.2.2.2, , ,'))

const sessionHeader = fc.oneof(
  fc.constantFrom('{session}', 'mcs_', 'mcs_unknown', '', 'null'),
  headerText(40),
  fc.integer({ min: 100, max: 10_000 }).map((n) => `mcs_${'z'.repeat(n)}`),
)

const protocolVersion = fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', ''), headerText(20))

/** Random header names: tokens only (fetch refuses anything else before sending). */
const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter((n) => !RESERVED_HEADERS.has(n))
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
  'expect',
])

type Header = [string, string]
const h = (name: string, value: fc.Arbitrary<string>): fc.Arbitrary<Header> => value.map((v): Header => [name, v])

/** Extra headers: the interesting ones, random ones, and sometimes many. */
function headersArb(opts: { auth: 'none' | 'garbage' | 'valid'; max?: number }): fc.Arbitrary<Header[]> {
  const pool: fc.Arbitrary<Header>[] = [
    h('content-type', contentType),
    h('accept', acceptHeader),
    h('host', hostHeader),
    h('origin', originHeader),
    h('cookie', cookieHeader),
    h('x-forwarded-for', forwardedFor),
    h('mcp-session-id', sessionHeader),
    h('mcp-protocol-version', protocolVersion),
    h('last-event-id', headerText(30)),
    h('x-csrf-token', headerText(40)),
    h('referer', originHeader),
    h('accept-encoding', fc.constantFrom('gzip', 'br, gzip, deflate', 'identity;q=0', '*;q=0', 'x'.repeat(500))),
    h('access-control-request-method', fc.constantFrom('POST', 'GET', 'X')),
    fc.tuple(headerName, headerText(100)),
  ]
  if (opts.auth === 'garbage') pool.push(h('authorization', bearerGarbage))
  const some = fc.array(fc.oneof(...pool), { maxLength: opts.max ?? 8 })
  // Many headers at once: hundreds of small ones.
  const many = fc.integer({ min: 50, max: 400 }).map((n) => Array.from({ length: n }, (_, i): Header => [`x-fuzz-${i}`, String(i)]))
  const extra = fc.oneof({ arbitrary: some, weight: 9 }, { arbitrary: many, weight: 1 })
  return extra.map((hs) => {
    // Each header once, except where repeating is the point (random names).
    const seen = new Set<string>()
    const out = hs.filter(([n]) => (seen.has(n) ? false : (seen.add(n), true)))
    if (opts.auth === 'valid' && !seen.has('authorization')) out.unshift(['authorization', 'Bearer {key}'])
    return out
  })
}

// --- paths -------------------------------------------------------------------------------------------

const hostileSegment = fc.oneof(
  fc.constantFrom(
    '%ZZ',
    '%',
    '%%',
    '%C0%AE',
    '%C0%AE%C0%AE',
    '%2e%2e',
    '%2E',
    '%00',
    '%09',
    '%0A',
    '%0D%0A',
    '%2F',
    '%5C',
    '%FF',
    '%E2%80%AE',
    '%F0%9F%98%80',
    '%ED%A0%80',
    '%EF%BF%BF',
    '%u0041',
    '%%41',
    '%25',
    '',
    ';',
    ':',
    '@',
    '*',
    'ws',
    'index.html',
    '.env',
  ),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/),
  fc.stringMatching(/^(scn|aud|key|mcl|pch|dir)_[A-Za-z0-9]{1,30}$/),
  fc.string({ unit: 'grapheme', maxLength: 10 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ maxLength: 20 }).map((s) => s.replace(/[?#]/g, '')),
  // Very long: up to past what the server takes in a request line.
  fc.integer({ min: 200, max: 20_000 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 10, max: 3_000 }).map((n) => '%41'.repeat(n)),
)

/** A route's path with its {id} slots filled, sometimes mangled (double slashes, trailing slash, case, encoding). */
function pathArb(template: string): fc.Arbitrary<string> {
  const slots = template.split('{id}').length - 1
  const filled = fc.array(hostileSegment, { minLength: slots, maxLength: slots }).map((ids) => {
    let i = 0
    return template.replace(/\{id\}/g, () => ids[i++] ?? '')
  })
  const mangle = fc.constantFrom<(p: string) => string>(
    (p) => p,
    (p) => p,
    (p) => p,
    (p) => `/${p}`,
    (p) => p.replace(/\//g, '//'),
    (p) => `${p}/`,
    (p) => p.toUpperCase(),
    (p) => `/${p.slice(1).replace(/\//g, '%2F')}`,
    (p) => p.replace(/a/g, '%61'),
    (p) => `${p}%00`,
    (p) => `${p}%ZZ`,
    (p) => `${p}/%09/`,
    (p) => `${p};x=1`,
    (p) => `/./${p.slice(1)}`,
  )
  return fc.tuple(filled, mangle).map(([p, f]) => f(p))
}

// --- queries -----------------------------------------------------------------------------------------

const queryValue = fc.oneof(
  hostileText,
  fc.constantFrom('{client}', 'code', 'S256', 'plain', 'http://127.0.0.1:9/cb', '/dashboard', '//evil'),
)

function queryArb(names: string[]): fc.Arbitrary<QuerySpec | null> {
  const params = names.length
    ? fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 10 })), queryValue), { maxLength: 10 })
    : fc.array(fc.tuple(fc.string({ maxLength: 10 }), queryValue), { maxLength: 4 })
  // Up to ~1,500 keys fit in the request line Bun accepts; more tests that limit.
  const extraKeys = fc.oneof(
    { arbitrary: fc.constant(0), weight: 6 },
    { arbitrary: fc.integer({ min: 1, max: 200 }), weight: 2 },
    { arbitrary: fc.integer({ min: 1_000, max: 1_500 }), weight: 1 },
    { arbitrary: fc.integer({ min: 1_500, max: 10_000 }), weight: 1 },
  )
  const repeat = fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, { arbitrary: fc.integer({ min: 2, max: 3_000 }), weight: 1 })
  const raw = fc.constantFrom('', '', '', '&', '&&&', '=', '%', '%ZZ', '%C0%AE=%C0%AE', '=%', 'a=%E0%A4%A', '%00=%00', '+', ';;')
  const spec = fc.record({ params, extraKeys, repeat, raw })
  return fc.oneof({ arbitrary: fc.constant(null), weight: 2 }, { arbitrary: spec, weight: 3 })
}

// --- bodies ------------------------------------------------------------------------------------------

const bodySize = fc.oneof(
  { arbitrary: fc.nat(2_048), weight: 6 },
  { arbitrary: fc.integer({ min: 2_049, max: 200_000 }), weight: 2 },
  { arbitrary: fc.integer({ min: OAUTH_BODY_LIMIT - 4, max: OAUTH_BODY_LIMIT + 4 }), weight: 1 },
  { arbitrary: fc.integer({ min: MCP_BODY_LIMIT - 4, max: MCP_BODY_LIMIT + 4 }), weight: 1 },
  { arbitrary: fc.integer({ min: 1_100_000, max: 4_000_000 }), weight: 1 },
)

const bytesBody: fc.Arbitrary<BodySpec> = fc.record({ kind: fc.constant('bytes' as const), size: bodySize, seed: fc.nat() })

const deepBody: fc.Arbitrary<BodySpec> = fc.record({
  kind: fc.constant('deep' as const),
  depth: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 500, max: 5_000 })),
  style: fc.constantFrom('array' as const, 'object' as const, 'rpc' as const),
  closed: fc.boolean(),
})

const formBody: fc.Arbitrary<BodySpec> = fc.record({
  kind: fc.constant('form' as const),
  keys: fc.oneof(fc.nat(20), fc.integer({ min: 1_000, max: 10_000 })),
  repeat: fc.oneof(fc.constant(0), fc.integer({ min: 2, max: 5_000 })),
  prefix: fc.constantFrom('', 'grant_type=authorization_code&', 'csrf=x&request_id=y&decision=approve&', 'code=%ZZ&'),
})

const wideBody: fc.Arbitrary<BodySpec> = fc.record({
  kind: fc.constant('wide' as const),
  // Up to what fits in the 1 MiB body (about 90,000 short keys).
  keys: fc.oneof(fc.nat(50), fc.integer({ min: 1_000, max: 10_000 }), fc.integer({ min: 50_000, max: 90_000 })),
  rpc: fc.boolean(),
  where: fc.constantFrom('params' as const, 'arguments' as const, 'capabilities' as const, 'array' as const),
})

const paddedBody: fc.Arbitrary<BodySpec> = fc.record({
  kind: fc.constant('padded' as const),
  size: fc.oneof(fc.integer({ min: MCP_BODY_LIMIT - 2, max: MCP_BODY_LIMIT + 2 }), fc.integer({ min: 200, max: 3_000_000 })),
})

const text = (arb: fc.Arbitrary<string>): fc.Arbitrary<BodySpec> => arb.map((t) => ({ kind: 'text' as const, text: t }))

const garbageText = text(
  fc.oneof(
    fc.constantFrom('', ' ', '{', '}', '[', ']', '[]', '{}', 'null', 'true', '0', '"', '\u0000', '\uFEFF{}', '{"a":1}garbage', '{"a":'),
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
  ),
)

// --- JSON-RPC ----------------------------------------------------------------------------------------

const TOOLS = [
  'scan_app',
  'get_scan',
  'audit_app',
  'get_audit',
  'get_findings',
  'scan_history',
  'list_apps',
  'explain_check',
  'get_fix_brief',
  'verify_site',
  'check_data_exposure',
  'get_account',
  'compare_scans',
  'export_report',
  'monitor_app',
  'create_patch',
  'start_directory_run',
  'audit_authenticated',
]

/** Site URLs the tools may be given: loopback only, refused as target_blocked by the service (ALLOW_PRIVATE_TARGETS=false). */
const siteUrl = fc.oneof(
  fc.constantFrom(
    'http://127.0.0.1:9/',
    'http://127.0.0.1:{port}/',
    'https://[::1]/',
    'http://127.1/',
    'http://0x7f000001/',
    'http://127.0.0.1:9/%ZZ',
    'ftp://127.0.0.1/',
    'javascript:alert(1)',
    'http://user:pw@127.0.0.1/',
    'http://',
    'not a url',
    '',
  ),
  fc.integer({ min: 1_000, max: 5_000 }).map((n) => `http://127.0.0.1:9/${'a'.repeat(n)}`),
)

const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.nat(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.nat(), { maxKeys: 3 }),
)

const idLike = (prefix: string) =>
  fc.oneof(
    fc.stringMatching(new RegExp(`^${prefix}_[A-Za-z0-9]{1,40}$`)),
    hostileText,
    wrongType,
    fc.constant(`${prefix}_${'x'.repeat(70)}`),
  )

/** Each argument the tools take, with right and wrong values. */
const ARGS: Record<string, fc.Arbitrary<unknown>> = {
  url: fc.oneof(siteUrl, wrongType),
  scanId: idLike('scn'),
  auditId: idLike('aud'),
  appId: idLike('app'),
  checkId: fc.oneof(fc.constantFrom('csp', 'hsts', 'js-secrets', 'CSP', ''), hostileText, wrongType),
  severity: fc.oneof(fc.constantFrom('high', 'low', 'critical'), hostileText, wrongType),
  category: fc.oneof(fc.constantFrom('security', 'seo'), hostileText, wrongType),
  status: fc.oneof(fc.constantFrom('fail', 'warn', 'pass'), hostileText, wrongType),
  platform: fc.oneof(fc.constantFrom('vercel', 'nginx', 'generic'), hostileText),
  method: fc.oneof(fc.constantFrom('meta', 'file', 'dns'), hostileText),
  limit: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer(), fc.double(), fc.constantFrom(0, -1, 101, 1e308), hostileText),
  cursor: fc.oneof(fc.base64String({ maxLength: 60 }), hostileText, wrongType),
  options: fc.oneof(
    fc.record(
      { maxPages: fc.oneof(fc.integer(), wrongType), maxDepth: fc.oneof(fc.integer(), wrongType), maxDurationSeconds: fc.integer() },
      { requiredKeys: [] },
    ),
    wrongType,
  ),
  extra: fc.jsonValue({ maxDepth: 3 }),
}

/** Which arguments each tool reads (api/mcp/tools/); the planned ones get the site ones. */
const TOOL_ARGS: Record<string, string[]> = {
  scan_app: ['url'],
  get_scan: ['scanId'],
  audit_app: ['url', 'options'],
  get_audit: ['auditId'],
  get_findings: ['scanId', 'severity', 'category', 'status', 'limit', 'cursor'],
  scan_history: ['url', 'appId', 'limit', 'cursor'],
  list_apps: ['limit', 'cursor'],
  explain_check: ['checkId'],
  get_fix_brief: ['scanId', 'checkId', 'platform'],
  verify_site: ['url', 'method'],
  check_data_exposure: ['url'],
  get_account: [],
}

/** Values each argument's schema accepts, so that a call gets past validation into the tool. */
const VALID_ARGS: Record<string, fc.Arbitrary<unknown>> = {
  url: fc.constantFrom('http://127.0.0.1:9/', 'https://[::1]/app', 'http://127.0.0.1:{port}/'),
  scanId: fc.stringMatching(/^scn_[A-Za-z0-9]{4,30}$/),
  auditId: fc.stringMatching(/^aud_[A-Za-z0-9]{4,30}$/),
  appId: fc.stringMatching(/^app_[A-Za-z0-9]{4,30}$/),
  checkId: fc.constantFrom('csp', 'hsts', 'js-secrets', 'cookie-secure', 'exposed-env-file', 'seo-title', 'nope'),
  severity: fc.constantFrom('critical', 'high', 'medium', 'low', 'info'),
  category: fc.constantFrom('security', 'seo', 'performance', 'accessibility'),
  status: fc.constantFrom('fail', 'warn', 'pass', 'info', 'skipped', 'error'),
  platform: fc.constantFrom('vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare', 'generic'),
  method: fc.constantFrom('meta', 'file', 'dns'),
  limit: fc.integer({ min: 1, max: 100 }),
  cursor: fc.oneof(fc.base64String({ maxLength: 60 }), fc.string({ maxLength: 30 })),
  options: fc.record(
    {
      maxPages: fc.integer({ min: 1, max: 500 }),
      maxDepth: fc.integer({ min: 0, max: 10 }),
      maxDurationSeconds: fc.integer({ min: 5, max: 600 }),
    },
    { requiredKeys: [] },
  ),
}

/** A tool's arguments: each present or not, or (all: true) every one present. */
const argsOf = (tool: string, values: Record<string, fc.Arbitrary<unknown>>, all = false) => {
  const keys = TOOL_ARGS[tool] ?? ['url', 'scanId']
  return fc.record(Object.fromEntries(keys.map((k) => [k, values[k] ?? ARGS[k]!])), { requiredKeys: all ? keys : [] })
}

/** Any mix of arguments, as if for the wrong tool. */
const toolArgs = fc.record(ARGS, { requiredKeys: [] })

const rpcId = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.double(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
)

const rpcMethod = fc.oneof(
  fc.constantFrom(
    'initialize',
    'notifications/initialized',
    'tools/list',
    'tools/call',
    'ping',
    'resources/list',
    'resources/read',
    'prompts/list',
    'prompts/get',
    'logging/setLevel',
    'completion/complete',
    'notifications/cancelled',
    'notifications/progress',
    'sampling/createMessage',
    'roots/list',
    '',
    'rpc.discover',
    '__proto__',
  ),
  fc.string({ maxLength: 30 }),
  wrongType,
)

const initializeParams = fc.record(
  {
    protocolVersion: fc.oneof(protocolVersion, wrongType),
    capabilities: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 3 }), wrongType),
    clientInfo: fc.oneof(
      fc.record({ name: fc.oneof(hostileText, wrongType), version: fc.oneof(hostileText, wrongType) }, { requiredKeys: [] }),
      wrongType,
    ),
  },
  { requiredKeys: [] },
)

const callParams = fc.record(
  {
    name: fc.oneof(fc.constantFrom(...TOOLS), hostileText, wrongType),
    arguments: fc.oneof(toolArgs, wrongType, fc.jsonValue({ maxDepth: 4 })),
    _meta: fc.oneof(
      fc.record({ progressToken: fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), wrongType) }, { requiredKeys: [] }),
      wrongType,
    ),
  },
  { requiredKeys: [] },
)

const jsonrpcField = fc.oneof(
  { arbitrary: fc.constant('2.0'), weight: 8 },
  { arbitrary: fc.oneof(fc.constantFrom('1.0', '2', ''), wrongType), weight: 1 },
)

/** A tools/call the transport accepts: a real tool, arguments of the right shape or close to it. */
const wellFormedCall = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.nat(),
  method: fc.constant('tools/call'),
  params: fc.constantFrom(...TOOLS).chain((name) =>
    fc.record({
      name: fc.constant(name),
      arguments: fc.oneof(
        { arbitrary: argsOf(name, VALID_ARGS, true), weight: 3 },
        { arbitrary: argsOf(name, ARGS), weight: 2 },
        { arbitrary: toolArgs, weight: 1 },
      ),
    }),
  ),
})

/** Messages of the methods that do something, with wrong types inside, and anything else. */
const rpcMessage = fc
  .oneof(
    { arbitrary: wellFormedCall, weight: 8 },
    {
      arbitrary: fc.record(
        { jsonrpc: jsonrpcField, id: rpcId, method: fc.constant('tools/call'), params: fc.oneof(callParams, wrongType) },
        { requiredKeys: ['jsonrpc', 'method'] },
      ),
      weight: 5,
    },
    {
      // initialize, sometimes without params at all.
      arbitrary: fc.record(
        { jsonrpc: jsonrpcField, id: rpcId, method: fc.constant('initialize'), params: fc.oneof(initializeParams, wrongType) },
        { requiredKeys: ['jsonrpc', 'method'] },
      ),
      weight: 2,
    },
    {
      arbitrary: fc.record(
        {
          jsonrpc: jsonrpcField,
          id: rpcId,
          method: fc.constantFrom('tools/list', 'ping', 'notifications/initialized', 'notifications/cancelled', 'logging/setLevel'),
          params: fc.oneof(fc.jsonValue({ maxDepth: 3 }), wrongType),
        },
        { requiredKeys: ['jsonrpc', 'method'] },
      ),
      weight: 2,
    },
    {
      // Anything shaped like JSON-RPC: unknown methods, responses sent to the server, missing fields.
      arbitrary: fc.record(
        {
          jsonrpc: jsonrpcField,
          id: rpcId,
          method: rpcMethod,
          params: fc.oneof(initializeParams, callParams, fc.jsonValue({ maxDepth: 4 }), wrongType),
          result: fc.jsonValue({ maxDepth: 2 }),
          error: fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), wrongType),
        },
        { requiredKeys: [] },
      ),
      weight: 2,
    },
  )
  .map(defang)

/** JSON-RPC shaped bodies: single messages, batches (empty, mixed, nested), and not-quite messages. */
export const rpcBody: fc.Arbitrary<BodySpec> = fc
  .oneof(
    { arbitrary: rpcMessage, weight: 10 },
    { arbitrary: fc.array(rpcMessage, { maxLength: 20 }), weight: 2 },
    { arbitrary: fc.constant([]), weight: 1 },
    { arbitrary: fc.constant([[]]), weight: 1 },
    { arbitrary: fc.array(wrongType, { minLength: 1, maxLength: 5 }), weight: 1 },
    { arbitrary: fc.constant({ jsonrpc: '2.0', id: 1, method: 'initialize' }), weight: 1 },
    { arbitrary: fc.jsonValue({ maxDepth: 5 }).map(defang), weight: 1 },
  )
  .map((v) => ({ kind: 'text' as const, text: JSON.stringify(v) ?? 'null' }))

/** Any string that parses as a URL to a host other than loopback becomes a loopback one. */
export function defang(v: unknown): unknown {
  if (typeof v === 'string') {
    if (!URL.canParse(v)) return v
    const host = new URL(v).hostname
    return host === '127.0.0.1' || host === '[::1]' || host === '' ? v : 'http://127.0.0.1:9/'
  }
  if (Array.isArray(v)) return v.map(defang)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, defang(x)]))
  return v
}

const registration = fc
  .record(
    {
      client_name: fc.oneof(hostileText, wrongType),
      redirect_uris: fc.oneof(
        fc.array(
          fc.oneof(
            fc.constantFrom(
              'http://127.0.0.1:9/cb',
              'https://127.0.0.1/cb',
              'http://[::1]:9/cb',
              'cursor://cb',
              'javascript:alert(1)',
              'http://127.0.0.1:9/cb#f',
            ),
            hostileText,
            wrongType,
          ),
          { maxLength: 5 },
        ),
        fc.integer({ min: 100, max: 3_000 }).map((n) => Array.from({ length: n }, (_, i) => `http://127.0.0.1:9/${i}`)),
        wrongType,
      ),
      grant_types: fc.oneof(fc.constant(['authorization_code']), fc.array(hostileText, { maxLength: 3 }), wrongType),
      response_types: fc.oneof(fc.constant(['code']), fc.array(hostileText, { maxLength: 3 }), wrongType),
      token_endpoint_auth_method: fc.oneof(fc.constantFrom('none', 'client_secret_basic', 'private_key_jwt'), wrongType),
      scope: fc.oneof(hostileText, wrongType),
      logo_uri: fc.oneof(hostileText, wrongType),
    },
    { requiredKeys: [] },
  )
  .map(defang)
  .map((v): BodySpec => ({ kind: 'text', text: JSON.stringify(v) }))

const tokenForm = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('grant_type', 'code', 'client_id', 'redirect_uri', 'code_verifier', 'resource', 'refresh_token', 'scope'),
        fc.string({ maxLength: 10 }),
      ),
      fc.oneof(queryValue, fc.constantFrom('authorization_code', 'refresh_token', 'mcc_x', 'mca_x')),
    ),
    { maxLength: 12 },
  )
  .map((pairs): BodySpec => ({ kind: 'text', text: new URLSearchParams(pairs).toString() }))

/** A body for a route: its own shapes most of the time, anything else sometimes. */
function bodyArb(own: fc.Arbitrary<BodySpec>[]): fc.Arbitrary<BodySpec | null> {
  const anything = fc.oneof(bytesBody, deepBody, formBody, wideBody, paddedBody, garbageText, rpcBody)
  return fc.oneof({ arbitrary: fc.constant(null), weight: 2 }, ...own.map((arbitrary) => ({ arbitrary, weight: 3 })), {
    arbitrary: anything,
    weight: 3,
  })
}

/** Streamed without Content-Length about one time in three, in chunks of 1 byte to 256 kB. */
const chunkArb = fc.oneof(
  { arbitrary: fc.constant(null), weight: 2 },
  { arbitrary: fc.oneof(fc.constantFrom(1, 7, 1_024, 16_384), fc.integer({ min: 1, max: 262_144 })), weight: 1 },
)

// --- methods and routes ------------------------------------------------------------------------------

const COMMON_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']
/** Rarer methods Bun's fetch sends as they are (it sends any other token as GET, and lowercase ones upper-cased). */
const ODD_METHODS = ['PROPFIND', 'MKCOL', 'M-SEARCH', 'PURGE', 'LINK', 'QUERY', 'CONNECT', 'post', 'patch']
/** Tokens only a raw socket can send. Bun's HTTP parser closes the connection on most of them. */
export const RAW_ONLY_METHODS = ['FOO', 'get', 'X', 'TRACE', `X${'Y'.repeat(200)}`]

function methodArb(own: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...own), weight: 6 },
    { arbitrary: fc.constantFrom(...COMMON_METHODS), weight: 3 },
    { arbitrary: fc.constantFrom(...ODD_METHODS), weight: 1 },
  )
}

interface Route {
  path: string
  methods: string[]
  params?: string[]
  bodies?: fc.Arbitrary<BodySpec>[]
}

/** Every route that answers without a credential (api/app.ts and the plugins it uses), and /api/mcp without one. */
export const PUBLIC_ROUTES: Route[] = [
  { path: '/', methods: ['GET'] },
  { path: '/healthz', methods: ['GET'] },
  { path: '/.well-known/oauth-protected-resource', methods: ['GET'] },
  { path: '/.well-known/oauth-protected-resource/api/mcp', methods: ['GET'] },
  { path: '/.well-known/oauth-authorization-server', methods: ['GET'] },
  { path: '/.well-known/{id}', methods: ['GET'] },
  { path: '/oauth/register', methods: ['POST', 'OPTIONS'], bodies: [registration] },
  {
    path: '/oauth/authorize',
    methods: ['GET', 'POST'],
    params: ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource'],
    bodies: [tokenForm, formBody],
  },
  { path: '/oauth/token', methods: ['POST', 'OPTIONS'], bodies: [tokenForm, formBody] },
  { path: '/auth/login', methods: ['GET'], params: ['return_to'] },
  { path: '/auth/callback', methods: ['GET'], params: ['state', 'code', 'iss', 'error', 'error_description'] },
  { path: '/auth/logout', methods: ['POST'], bodies: [formBody] },
  { path: '/viewer/{id}', methods: ['GET'] },
  { path: '/viewer/{id}/ws', methods: ['GET'] },
  { path: '/dashboard', methods: ['GET'] },
  { path: '/dashboard/settings', methods: ['GET'] },
  { path: '/dashboard/api/keys', methods: ['POST'] },
  { path: '/dashboard/api/keys/{id}/regenerate', methods: ['POST'] },
  { path: '/dashboard/api/keys/{id}/revoke', methods: ['POST'] },
  { path: '/dashboard/api/agents/{id}/revoke', methods: ['POST'] },
  { path: '/api/scans/{id}', methods: ['GET'] },
  { path: '/api/audits/{id}', methods: ['GET'] },
  { path: '/api/patches/{id}', methods: ['GET'] },
  { path: '/api/directory-runs/{id}', methods: ['GET'] },
  { path: '/api/mcp', methods: ['POST', 'GET', 'DELETE', 'OPTIONS'], bodies: [rpcBody] },
  { path: '/api/status/active', methods: ['GET'] },
  { path: '/api/benchmark', methods: ['GET'] },
  { path: '/api/cron/{id}', methods: ['POST', 'GET'] },
  { path: '/api/webhooks/stripe', methods: ['POST'], bodies: [rpcBody] },
  { path: '/api/exports/{id}', methods: ['GET'] },
  { path: '/dashboard/api/monitors/{id}/{id}', methods: ['POST'] },
  { path: '/dashboard/api/billing/checkout/{id}', methods: ['POST'] },
  { path: '/llms.txt', methods: ['GET'] },
  { path: '/llms-full.txt', methods: ['GET'] },
  { path: '/api/skills.md', methods: ['GET'] },
  { path: '/agent-prompt', methods: ['GET'] },
  { path: '/docs', methods: ['GET'] },
  { path: '/docs/{id}', methods: ['GET'] },
  { path: '/{id}', methods: ['GET', 'POST'] },
  { path: '/{id}/{id}/{id}', methods: ['GET'] },
]

function routeRequest(route: Route, auth: 'none' | 'garbage' | 'valid'): fc.Arbitrary<RequestSpec> {
  return fc
    .record({
      route: fc.constant(route.path),
      method: methodArb(route.methods),
      path: pathArb(route.path),
      query: queryArb(route.params ?? []),
      headers: headersArb({ auth }),
      body: bodyArb(route.bodies ?? []),
      chunk: chunkArb,
    })
    .map((r) => ((r.method === 'GET' || r.method === 'HEAD') && r.body ? { ...r, body: null, chunk: null } : r))
}

/** A request to any public route, without a credential or with a bad one. */
export const publicRequest: fc.Arbitrary<RequestSpec> = fc.oneof(
  ...PUBLIC_ROUTES.map((r) => routeRequest(r, 'none')),
  ...PUBLIC_ROUTES.map((r) => routeRequest(r, 'garbage')),
)

/** A request to /api/mcp with a valid bearer key: mostly well-formed transport, hostile JSON-RPC inside. */
export const keyedMcpRequest: fc.Arbitrary<RequestSpec> = fc
  .record({
    method: fc.oneof(
      { arbitrary: fc.constant('POST'), weight: 12 },
      { arbitrary: fc.constantFrom('GET', 'DELETE', 'OPTIONS'), weight: 2 },
      { arbitrary: fc.constantFrom(...COMMON_METHODS, ...ODD_METHODS), weight: 1 },
    ),
    session: fc.oneof(
      { arbitrary: fc.constant('{session}'), weight: 6 },
      { arbitrary: fc.constant(null), weight: 2 },
      { arbitrary: sessionHeader, weight: 1 },
    ),
    transport: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
    // Few extra headers: most requests keep a well-formed transport and reach the tools.
    extra: headersArb({ auth: 'valid', max: 2 }),
    query: queryArb([]),
    body: fc.oneof(
      { arbitrary: rpcBody, weight: 10 },
      { arbitrary: deepBody, weight: 2 },
      { arbitrary: wideBody, weight: 1 },
      { arbitrary: paddedBody, weight: 1 },
      { arbitrary: bytesBody, weight: 1 },
      { arbitrary: garbageText, weight: 1 },
    ),
    chunk: chunkArb,
  })
  .map(({ method, session, transport, extra, query, body, chunk }): RequestSpec => {
    // The well-formed transport headers first; the generated ones may override them.
    const base: Header[] = transport
      ? [
          ['content-type', 'application/json'],
          ['accept', 'application/json, text/event-stream'],
        ]
      : []
    if (session !== null) base.push(['mcp-session-id', session])
    const names = new Set(extra.map(([n]) => n))
    const headers = [...base.filter(([n]) => !names.has(n)), ...extra]
    const noBody = method === 'GET' || method === 'HEAD'
    return {
      route: '/api/mcp (valid key)',
      method,
      path: '/api/mcp',
      query,
      headers,
      body: noBody ? null : body,
      chunk: noBody ? null : chunk,
    }
  })

/** Bodies of a few MB, framed or streamed, to the routes that read bodies. */
export const largeBodyRequest: fc.Arbitrary<RequestSpec> = fc
  .record({
    route: fc.constantFrom('/api/mcp', '/api/mcp (valid key)', '/oauth/register', '/oauth/token', '/oauth/authorize', '/auth/logout', '/'),
    body: fc.oneof(
      fc.record({ kind: fc.constant('bytes' as const), size: fc.integer({ min: 1_000_000, max: 4_000_000 }), seed: fc.nat() }),
      fc.record({ kind: fc.constant('padded' as const), size: fc.integer({ min: 1_000_000, max: 4_000_000 }) }),
      fc.record({
        kind: fc.constant('form' as const),
        keys: fc.integer({ min: 5_000, max: 10_000 }),
        repeat: fc.integer({ min: 0, max: 50_000 }),
        prefix: fc.constant(''),
      }),
    ),
    contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'application/octet-stream'),
    chunk: fc.oneof(fc.constant(null), fc.integer({ min: 1_024, max: 262_144 })),
  })
  .map(({ route, body, contentType, chunk }): RequestSpec => {
    const keyed = route.endsWith('(valid key)')
    const headers: Header[] = [
      ['content-type', contentType],
      ['accept', 'application/json, text/event-stream'],
    ]
    if (keyed) headers.push(['authorization', 'Bearer {key}'], ['mcp-session-id', '{session}'])
    return { route, method: 'POST', path: keyed ? '/api/mcp' : route, query: null, headers, body, chunk }
  })

// --- raw requests ------------------------------------------------------------------------------------

export interface RawSpec {
  method: string
  /** The request target exactly as written on the request line (latin1). */
  target: string
  headers: Array<[string, string]>
  framing: 'none' | 'length' | 'chunked' | 'bad-chunk' | 'length-and-chunked' | 'short-length'
  body: string
}

const rawTarget = fc.oneof(
  fc.constantFrom(
    '/a/../healthz',
    '/../../../../etc/passwd',
    '/%2e%2e/%2e%2e/healthz',
    '/viewer/..%2f..%2fhealthz',
    '/viewer/%ZZ',
    '/viewer/%ZZ/ws',
    '/api/scans/%ZZ',
    '/api/scans/%C0%AE%C0%AE',
    '/api/mcp/../mcp',
    '/api/mcp/./',
    '//healthz',
    '///',
    '*',
    'http://127.0.0.1:{port}/healthz',
    'http://evil.example/healthz',
    '127.0.0.1:{port}',
    '/\u00ff\u00fe\u0080',
    '/?a=\u0080\u00ff',
    '/oauth/authorize?client_id=%ZZ&redirect_uri=%',
    '/auth/login?return_to=/%0d%0aSet-Cookie:x=1',
    '/auth/callback?state=%ZZ',
    '/dashboard/api/keys/%ZZ/revoke',
    '/.well-known/../oauth/token',
  ),
  fc
    .array(fc.oneof(fc.constantFrom('..', '.', '%2e%2e', '%ZZ', '%', '', 'api', 'mcp', 'viewer', 'healthz'), fc.string({ maxLength: 8 })), {
      maxLength: 8,
    })
    // Spaces and control characters would end the target: leave them out, keep the rest raw.
    .map((segs) => `/${segs.map((s) => [...s].filter((c) => c > ' ' && c !== '\u007f').join('')).join('/')}`),
)

export const rawRequestSpec: fc.Arbitrary<RawSpec> = fc.record({
  method: fc.oneof(fc.constantFrom(...COMMON_METHODS), fc.constantFrom(...ODD_METHODS, ...RAW_ONLY_METHODS)),
  target: rawTarget,
  headers: fc.array(
    fc.oneof(
      h('content-type', contentType),
      h('accept', acceptHeader),
      h('origin', originHeader),
      h('authorization', bearerGarbage),
      // Raw header bytes that fetch would refuse to send: obs-text and odd spacing.
      h('x-raw', fc.constantFrom('\u00ff\u00fe', ' leading', 'trailing ', 'a\u0080b', '')),
    ),
    { maxLength: 4 },
  ),
  framing: fc.constantFrom(
    'none' as const,
    'length' as const,
    'chunked' as const,
    'bad-chunk' as const,
    'length-and-chunked' as const,
    'short-length' as const,
  ),
  body: fc.oneof(fc.constant(''), fc.string({ maxLength: 200 }), fc.constant('{"jsonrpc":"2.0","id":1,"method":"ping"}')),
})
