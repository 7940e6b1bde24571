// Small sites that sit on the boundaries of the Observatory's tests, for the comparison only: each one
// answers "/" with one header choice that the two scanners might read differently (a repeated header, an
// obsolete value, a cookie name, an off-host redirect...). The test fixtures mostly send no security headers
// at all, which both sides agree on; these are where the rules differ. Every server listens on 127.0.0.1,
// port 0; the https ones use the test certificate (trusted by both sides in the comparison).
import { testCertificate, type TlsMaterial } from '../../test/fixtures/sites.ts'
import type { FixtureSite } from '../../test/fixtures/sites/lib/serve.ts'
import type { StartedFixture } from './fixtures.ts'
import { rawServer } from './raw-server.ts'

type HeaderList = Array<[string, string]>

/** Headers that make every other test pass, so each site isolates the one under study. */
const GOOD: Record<string, string> = {
  'content-security-policy': "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
}
const HSTS = 'max-age=63072000; includeSubDomains'

interface EdgeSpec {
  name: string
  /** What the site shows, for the report. */
  about: string
  https: boolean
  /** Headers that replace the GOOD ones of the same name; a name listed twice is sent twice. */
  headers: HeaderList
  /** GOOD headers to leave out. */
  remove?: string[]
}

const page = (title: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1></main></body></html>`

export const EDGE_SPECS: EdgeSpec[] = [
  {
    name: 'edge-csp-script-self-only',
    about: "CSP script-src 'self' and nothing else (no object-src, no default-src)",
    https: false,
    headers: [
      ['content-security-policy', "script-src 'self'"],
      ['x-frame-options', 'DENY'],
    ],
  },
  {
    name: 'edge-csp-unsafe-eval',
    about: "CSP allowing 'unsafe-eval' in script-src",
    https: false,
    headers: [
      [
        'content-security-policy',
        "default-src 'self'; script-src 'self' 'unsafe-eval'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
      ],
    ],
  },
  {
    name: 'edge-csp-report-only',
    about: 'only Content-Security-Policy-Report-Only',
    https: false,
    headers: [
      ['content-security-policy-report-only', "default-src 'self'"],
      ['x-frame-options', 'DENY'],
    ],
    remove: ['content-security-policy'],
  },
  {
    name: 'edge-xfo-allow-from',
    about: 'X-Frame-Options ALLOW-FROM and no frame-ancestors',
    https: false,
    headers: [
      ['content-security-policy', "default-src 'self'; object-src 'none'; base-uri 'self'"],
      ['x-frame-options', 'ALLOW-FROM https://partner.example'],
    ],
  },
  {
    name: 'edge-frame-ancestors-star',
    about: 'CSP frame-ancestors *',
    https: false,
    headers: [['content-security-policy', "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors *"]],
  },
  { name: 'edge-referrer-unsafe-url', about: 'Referrer-Policy unsafe-url', https: false, headers: [['referrer-policy', 'unsafe-url']] },
  {
    name: 'edge-referrer-leaky',
    about: 'Referrer-Policy no-referrer-when-downgrade',
    https: false,
    headers: [['referrer-policy', 'no-referrer-when-downgrade']],
  },
  {
    name: 'edge-referrer-invalid',
    about: 'Referrer-Policy with a misspelt token only (no-referer)',
    https: false,
    headers: [['referrer-policy', 'no-referer']],
  },
  {
    name: 'edge-nosniff-repeated',
    about: 'X-Content-Type-Options sent twice (app and proxy both add it)',
    https: false,
    headers: [
      ['x-content-type-options', 'nosniff'],
      ['x-content-type-options', 'nosniff'],
    ],
  },
  {
    name: 'edge-corp-typo',
    about: 'Cross-Origin-Resource-Policy same-orign (misspelt)',
    https: false,
    headers: [['cross-origin-resource-policy', 'same-orign']],
  },
  {
    name: 'edge-corp-uppercase',
    about: 'Cross-Origin-Resource-Policy Same-Origin (capitalised)',
    https: false,
    headers: [['cross-origin-resource-policy', 'Same-Origin']],
  },
  {
    name: 'edge-cors-null-credentials',
    about: 'Access-Control-Allow-Origin: null with credentials',
    https: false,
    headers: [
      ['access-control-allow-origin', 'null'],
      ['access-control-allow-credentials', 'true'],
    ],
  },
  {
    name: 'edge-hsts-short',
    about: 'https with HSTS max-age of one day',
    https: true,
    headers: [['strict-transport-security', 'max-age=86400']],
  },
  {
    name: 'edge-hsts-merged',
    about: 'https, Strict-Transport-Security given twice and sent as one line with a comma (what Bun.serve does)',
    https: true,
    headers: [
      ['strict-transport-security', 'max-age=31536000'],
      ['strict-transport-security', 'max-age=31536000'],
    ],
  },
  {
    name: 'edge-cookie-theme-insecure',
    about: 'https + HSTS, a non-session cookie without Secure',
    https: true,
    headers: [
      ['strict-transport-security', HSTS],
      ['set-cookie', 'theme=dark; Path=/; SameSite=Lax'],
    ],
  },
  {
    name: 'edge-cookie-token-readable',
    about: 'https + HSTS, an auth_token cookie without HttpOnly',
    https: true,
    headers: [
      ['strict-transport-security', HSTS],
      ['set-cookie', 'auth_token=q8Zr2mVt7LkPw3Xn; Path=/; Secure; SameSite=Lax'],
    ],
  },
  {
    name: 'edge-cookie-samesite-invalid',
    about: 'https + HSTS, a session cookie with SameSite=Bogus',
    https: true,
    headers: [
      ['strict-transport-security', HSTS],
      ['set-cookie', 'sid=Hk4nW9pLc2Rt6Yb1; Path=/; Secure; HttpOnly; SameSite=Bogus'],
    ],
  },
]

function headersFor(spec: EdgeSpec): Headers {
  const replaced = new Set([...spec.headers.map(([k]) => k), ...(spec.remove ?? [])])
  const h = new Headers({ 'content-type': 'text/html; charset=utf-8' })
  for (const [k, v] of Object.entries(GOOD)) if (!replaced.has(k)) h.append(k, v)
  for (const [k, v] of spec.headers) h.append(k, v)
  return h
}

function serveOne(spec: EdgeSpec, tls: TlsMaterial | null) {
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
    fetch(req) {
      if (new URL(req.url).pathname !== '/') return new Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain' } })
      return new Response(page(spec.about), { headers: headersFor(spec) })
    },
  })
}

/** The http form redirects off-host: http://127.0.0.1:P/ -> https://localhost:S/ (another host name). */
function startOffHostRedirect(tls: TlsMaterial): StartedFixture {
  const https = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    tls: { cert: tls.cert, key: tls.key },
    fetch: () => {
      const h = headersFor({ name: '', about: '', https: true, headers: [['strict-transport-security', HSTS]] })
      return new Response(page('Redirected'), { headers: h })
    },
  })
  const httpsOrigin = `https://localhost:${https.port}`
  const http = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    fetch: (req) => new Response(null, { status: 301, headers: { location: `${httpsOrigin}${new URL(req.url).pathname}` } }),
  })
  const httpOrigin = `http://127.0.0.1:${http.port}`
  const stop = async () => {
    http.stop(true)
    https.stop(true)
  }
  const site: FixtureSite = { url: `${httpOrigin}/`, origins: { http: httpOrigin, https: httpsOrigin }, stop }
  return { name: 'edge-redirect-off-host', site, scanUrl: site.url, urlSource: 'site' }
}

/** Strict-Transport-Security on two separate header lines, which only a raw server can send. */
async function startHstsTwoLines(tls: TlsMaterial): Promise<StartedFixture> {
  const lines = [
    ...Object.entries(GOOD).map(([k, v]) => `${k}: ${v}`),
    'strict-transport-security: max-age=31536000',
    'strict-transport-security: max-age=31536000',
  ]
  const server = await rawServer(
    (path) =>
      path === '/'
        ? { type: 'text/html; charset=utf-8', body: page(EDGE_ABOUT['edge-hsts-two-lines']!), lines }
        : { status: 404, type: 'text/plain', body: 'Not Found', lines: [] },
    tls,
  )
  const origin = `https://localhost:${server.port}`
  const site: FixtureSite = { url: `${origin}/`, origins: { https: origin }, stop: async () => server.close() }
  return { name: 'edge-hsts-two-lines', site, scanUrl: site.url, urlSource: 'site' }
}

export const EDGE_ABOUT: Record<string, string> = {
  ...Object.fromEntries(EDGE_SPECS.map((s) => [s.name, s.about])),
  'edge-hsts-two-lines': 'https, Strict-Transport-Security sent twice on two separate lines',
  'edge-redirect-off-host': 'http://127.0.0.1 redirects straight to https://localhost (another host)',
}

export async function startEdgeSites(tls = testCertificate()): Promise<StartedFixture[]> {
  const out: StartedFixture[] = []
  for (const spec of EDGE_SPECS) {
    const server = serveOne(spec, spec.https ? tls : null)
    const origin = spec.https ? `https://localhost:${server.port}` : `http://127.0.0.1:${server.port}`
    const site: FixtureSite = {
      url: `${origin}/`,
      origins: spec.https ? { https: origin } : { http: origin },
      stop: async () => void server.stop(true),
    }
    out.push({ name: spec.name, site, scanUrl: site.url, urlSource: 'site' })
  }
  out.push(await startHstsTwoLines(tls))
  out.push(startOffHostRedirect(tls))
  return out
}
