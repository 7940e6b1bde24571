// A complete Artifacts object for a well-configured https site, with shallow per-artifact overrides.

import type {
  ApiCall,
  ApiProbe,
  Artifacts,
  BrowserRequest,
  HttpResponseArtifact,
  ProbeResult,
  ScriptArtifact,
} from '../../../shared/checks/types.ts'
import { BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'

export const SITE = 'https://example.com/'

export const SPA_HTML =
  '<!doctype html><html><head><meta charset="utf-8"><title>App</title><script type="module" ' +
  'src="/assets/index-3f2a.js"></script></head><body><div id="root"></div></body></html>'

export const GOOD_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=63072000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  server: 'nginx',
}

type Overrides = { [K in keyof Artifacts]?: Artifacts[K] extends object | null ? Partial<NonNullable<Artifacts[K]>> | null : Artifacts[K] }

export function probe(path: string, body: string, status = 200, contentType = 'text/plain'): ProbeResult {
  return { path, url: new URL(path, SITE).href, status, contentType, body, error: null }
}

export function request(url: string, resourceType: string, extra: Partial<BrowserRequest> = {}): BrowserRequest {
  return { url, method: 'GET', resourceType, status: 200, failure: null, headers: {}, initiatorUrl: SITE, ...extra }
}

/** One fetch/XHR call of the page and the answer it got (JSON, anonymous, 200 unless told). */
export function apiCall(url: string, body: unknown, extra: Partial<ApiCall> = {}): ApiCall {
  return {
    url: new URL(url, SITE).href,
    method: 'GET',
    resourceType: 'fetch',
    requestContentType: null,
    credentialed: false,
    authorization: false,
    graphql: false,
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    bodyTruncated: false,
    ...extra,
  }
}

/** One API probe's answer (200 JSON unless told). */
export function apiProbe(kind: ApiProbe['kind'], url: string, body: unknown, extra: Partial<ApiProbe> = {}): ApiProbe {
  const contentType = typeof body === 'string' ? 'text/html' : 'application/json'
  return {
    kind,
    url: new URL(url, SITE).href,
    method: kind === 'graphql' ? 'POST' : 'GET',
    status: 200,
    headers: { 'content-type': contentType },
    contentType,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    bodyTruncated: false,
    source: 'well-known',
    error: null,
    ...extra,
  }
}

export function script(url: string, body: string, inline = false): ScriptArtifact {
  return { url, inline, body }
}

/** A mainResponse override with headers changed: a null value removes the header. */
export function withHeaders(changes: Record<string, string | null>, base = GOOD_HEADERS): Partial<HttpResponseArtifact> {
  const headers = { ...base }
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete headers[k.toLowerCase()]
    else headers[k.toLowerCase()] = v
  }
  return { headers }
}

/** The artifacts makeArtifacts builds: each one present, except those the overrides set to null. */
export type Made<O extends Overrides> = { [K in keyof Artifacts]: O[K] extends null ? null : NonNullable<Artifacts[K]> }

export function makeArtifacts<const O extends Overrides = Record<never, never>>(overrides: O = {} as O): Made<O> {
  const defaults: Artifacts = {
    target: { url: SITE, finalUrl: SITE, origin: 'https://example.com', scheme: 'https' },
    mainResponse: {
      url: SITE,
      status: 200,
      headers: { ...GOOD_HEADERS },
      setCookies: [],
      contentType: 'text/html; charset=utf-8',
      body: SPA_HTML,
      bodyTruncated: false,
    },
    redirectChain: { startUrl: SITE, hops: [{ url: SITE, status: 200, location: null }], finalUrl: SITE, error: null },
    httpRedirect: {
      startUrl: 'http://example.com/',
      hops: [
        { url: 'http://example.com/', status: 301, location: SITE },
        { url: SITE, status: 200, location: null },
      ],
      finalUrl: SITE,
      error: null,
    },
    page: {
      finalUrl: SITE,
      status: 200,
      title: 'App',
      html: SPA_HTML,
      requests: [request(SITE, 'document'), request('https://example.com/assets/index-3f2a.js', 'script')],
      cookies: [],
      consoleErrors: [],
      api: { calls: [apiCall('/api/products', [{ id: 1, name: 'Mug' }])], unlisted: 0, websockets: [] },
    },
    scripts: [script('https://example.com/assets/index-3f2a.js', 'const a=document.getElementById("root");a.textContent="hi";')],
    probes: {
      [BASELINE_PROBE]: probe(BASELINE_PROBE, SPA_HTML, 200, 'text/html'),
      '/.env': probe('/.env', SPA_HTML, 200, 'text/html'),
      '/.git/config': probe('/.git/config', SPA_HTML, 200, 'text/html'),
    },
    sourceMaps: [],
    cors: { url: SITE, origin: 'https://appaudit-cors-probe.example', status: 200, headers: { 'content-type': 'text/html' }, error: null },
    // What a real scan always sends: the well-known GraphQL endpoints and API documents (this site has none).
    apiProbes: [apiProbe('graphql', '/graphql', 'Not Found', { status: 404 }), apiProbe('openapi', '/swagger.json', SPA_HTML)],
    tls: {
      host: 'example.com',
      port: 443,
      authorized: true,
      authorizationError: null,
      protocol: 'TLSv1.3',
      subject: 'CN=example.com',
      issuer: "CN=R11, O=Let's Encrypt, C=US",
      altNames: ['example.com', 'www.example.com'],
      validFrom: '2026-10-01T00:00:00.000Z',
      validTo: '2026-12-30T00:00:00.000Z',
      daysRemaining: 60,
      selfSigned: false,
      error: null,
    },
    accessibility: { engine: 'axe-core 4.14.1', violations: [], passes: 40, incomplete: 0 },
    performance: {
      navigation: { ttfb: 80, domContentLoaded: 250, load: 400, transferSize: 2_000, encodedBodySize: 1_700, decodedBodySize: 4_000 },
      resources: [
        {
          url: 'https://example.com/assets/index-3f2a.js',
          initiatorType: 'script',
          transferSize: 12_000,
          encodedBodySize: 11_700,
          decodedBodySize: 40_000,
          duration: 30,
        },
      ],
    },
  }
  const merged: Record<string, unknown> = { ...defaults }
  for (const [key, value] of Object.entries(overrides)) {
    const base = defaults[key as keyof Artifacts]
    merged[key] =
      value === null || Array.isArray(value) || typeof value !== 'object' || base === null || Array.isArray(base)
        ? value
        : { ...(base as object), ...value }
  }
  return merged as unknown as Made<O>
}

/** Deterministic random-looking characters (no real secret is ever written into a test). */
export function noise(length: number, seed = 1, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'): string {
  let x = seed * 2654435761 || 1
  let out = ''
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out += alphabet[(x >>> 0) % alphabet.length]
  }
  return out
}

const b64url = (s: string) => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

/** An unsigned-looking JWT with the given payload (signature is noise). */
export function jwt(payload: Record<string, unknown>): string {
  return `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}.${noise(43, 7, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')}`
}

/**
 * 64 KiB bodies shaped to trap the checks' patterns: long runs of what a pattern starts with, unclosed
 * quotes, comments and keys, repeated prefixes. The exposure tests bound the work each check does on them
 * (test/harness/regex-work.ts); bench/check-traps.ts times every check on them.
 */
export const ADVERSARIAL_BODIES: readonly string[] = [
  'Fatal error: '.repeat(5_000),
  '"'.repeat(65_536),
  'at Object.<anonymous> ('.repeat(3_000),
  'Traceback (most recent call last):\n'.repeat(1_800),
  `{"version":3,"sources":["${'a'.repeat(65_000)}`,
  `A=${'='.repeat(65_000)}`,
  `${' '.repeat(65_536)}x`,
  '<a href="'.repeat(7_000),
  `services:\n${'  x:\n'.repeat(12_000)}`,
  "define('DB_".repeat(5_000),
  `//${':'.repeat(65_000)}=1`,
  `com.${'a'.repeat(65_000)}`,
  'INSERT INTO t VALUES (1);\n'.repeat(2_500),
  '-----BEGIN PRIVATE KEY-----\n'.repeat(2_400),
  `-----BEGIN RSA PRIVATE KEY-----\n${'A'.repeat(65_000)}`,
  'postgres://a:b@'.repeat(4_300),
  '<td class="e">X</td><td class="v">'.repeat(1_800),
  '<!-- password: '.repeat(4_300),
  '[default]\naws_access_key_id = '.repeat(1_800),
  '\u0000a'.repeat(32_000),
  'a:$apr1$'.repeat(8_000),
  'FROM x\nENV A_KEY '.repeat(3_500),
  `<th>Django Version:</th><td>${'1.'.repeat(30_000)}`,
  'a@'.repeat(32_768),
  `${'a'.repeat(65_000)}@b`,
  '$2b$10$'.repeat(9_000),
  '{"email":"'.repeat(6_500),
  `{"paths":{${'"/admin":{"get":{},'.repeat(3_000)}`,
]

/** The page's API answers and the API probes, each given `body`: how the API checks meet an adversarial body. */
export function apiArtifacts(body: string, status = 200) {
  const calls = Array.from({ length: 8 }, (_, i) => apiCall(`/api/r${i}`, body, { status, bodyTruncated: true }))
  const probes = [
    apiProbe('graphql', '/graphql', body, { status }),
    apiProbe('openapi', '/swagger.json', body, { status }),
    apiProbe('cors', '/api/r0', '', { origin: 'null', headers: { 'access-control-allow-origin': body.slice(0, 4_096) } }),
  ]
  return { page: { ...makeArtifacts().page, html: body, api: { calls, unlisted: 0, websockets: [] } }, apiProbes: probes }
}
