// What a Node app such as OWASP Juice Shop shows a plain GET, judged from artifacts: a Prometheus exposition
// (server-info-page), serve-index listings with keys, backups and logs (directory-listing), "*" on API answers
// (cors-wildcard-api), and which folders and API prefixes the gatherer asks for (bounded, only what the page shows).
import { describe, expect, test } from 'bun:test'
import { revealedPlans, wellKnownPlans } from '../../../crawler/gather/api-probes.ts'
import { GATHER_LIMITS } from '../../../crawler/gather/limits.ts'
import { directoryLinks } from '../../../crawler/gather/probes.ts'
import { directoryListing, listedNames, sensitiveEntries } from '../../../shared/checks/exposure/directory-listing.ts'
import { findInfoPage, serverInfoPage } from '../../../shared/checks/exposure/server-info-page.ts'
import { API_ERROR_PROBE, API_PROBE_LIMITS, BASELINE_PROBE, PROBE_PATHS } from '../../../shared/checks/probe-paths.ts'
import { corsWildcardApi } from '../../../shared/checks/security/cors-wildcard-api.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { METRICS } from '../../fixtures/sites/lib/node-shop.ts'
import { apiCall, apiProbe, makeArtifacts, probe, SITE, SPA_HTML } from './artifacts.ts'

const OPENMETRICS = `# HELP http_requests Requests served.
# TYPE http_requests counter
http_requests_total{code="200"} 1027
# HELP go_info Information about the Go environment.
# TYPE go_info gauge
go_info{version="go1.22.4"} 1
# EOF
`

const withProbes = (probes: Record<string, ProbeResult>) => makeArtifacts({ probes: { ...makeArtifacts().probes, ...probes } })

describe('server-info-page: Prometheus', () => {
  test('prom-client text format and OpenMetrics are the exposition (medium), with families and runtime versions', () => {
    const r = serverInfoPage.run(withProbes({ '/metrics': probe('/metrics', METRICS, 200, 'text/plain; version=0.0.4; charset=utf-8') }))
    expect(r).toMatchObject({ status: 'fail', severity: 'medium' })
    expect(r.summary).toBe('https://example.com/metrics is the Prometheus metrics exposition.')
    expect(r.evidence.pages).toMatchObject([{ details: { families: 5, versions: { node: 'v20.19.2' } } }])
    const open = findInfoPage({ url: 'https://example.com/metrics', status: 200, body: OPENMETRICS })
    expect(open?.details).toEqual({ format: 'OpenMetrics', families: 2, names: ['http_requests', 'go_info'], versions: { go: 'go1.22.4' } })
  })

  test('not the exposition: the SPA page at /metrics, a 404, an HTML page quoting one, JSON, a page of prose', () => {
    const spa = {
      [BASELINE_PROBE]: probe(BASELINE_PROBE, SPA_HTML, 200, 'text/html'),
      '/metrics': probe('/metrics', SPA_HTML, 200, 'text/html'),
    }
    expect(serverInfoPage.run(withProbes(spa)).status).toBe('pass')
    expect(serverInfoPage.run(withProbes({ '/metrics': probe('/metrics', 'Not Found', 404) })).status).toBe('pass')
    const quoting = `<!doctype html><html><body><h1>Monitoring</h1><pre>\n${METRICS}</pre></body></html>`
    expect(serverInfoPage.run(withProbes({ '/metrics': probe('/metrics', quoting, 200, 'text/html') })).status).toBe('pass')
    expect(findInfoPage({ url: 'x', status: 200, body: '{"metrics":"# TYPE a counter\\na 1"}' })).toBeNull()
    expect(findInfoPage({ url: 'x', status: 200, body: 'How to read metrics.\n# TYPE lines name a type.\nThat is all.' })).toBeNull()
  })
})

const SERVE_INDEX = (dir: string, names: string[]) =>
  `<!DOCTYPE html><html><head><meta charset='utf-8'><title>listing directory ${dir}</title></head><body class="directory">
<div id="wrapper"><h1><a href="/">~</a> / <a href="${dir}">${dir.slice(1)}</a> / </h1>
<ul id="files" class="view-tiles"><li><a href="/" class="icon icon-directory" title=".."><span class="name">..</span></a></li>${names
    .map(
      (n) =>
        `<li><a href="${dir}/${n}" class="icon ${n.endsWith('/') ? 'icon-directory' : 'icon-default'}" title="${n.replace(/\/$/, '')}"><span class="name">${n.replace(/\/$/, '')}</span></a></li>`,
    )
    .join('')}</ul></div></body></html>`

describe('directory-listing: serve-index, and what a listing holds', () => {
  test('serve-index names come from its entries (no breadcrumb, no parent), folders with a slash', () => {
    const body = SERVE_INDEX('/ftp', ['quarantine/', 'legal.md', 'package.json.bak'])
    expect(listedNames(body)).toEqual(['quarantine/', 'legal.md', 'package.json.bak'])
  })

  test('keys, backups and logs make it high; an ordinary listing stays medium', () => {
    expect(sensitiveEntries(SERVE_INDEX('/keys', ['jwt.pub', 'premium.key', 'id_rsa', 'server.pem', 'readme.txt']))).toEqual({
      keys: ['jwt.pub', 'premium.key', 'id_rsa', 'server.pem'],
    })
    expect(sensitiveEntries(SERVE_INDEX('/logs', ['access.log', 'access.log.2026-11-29', 'error.log.1', 'notes.md']))).toEqual({
      logs: ['access.log', 'access.log.2026-11-29', 'error.log.1'],
    })
    expect(sensitiveEntries(SERVE_INDEX('/b', ['site.tar.gz', 'db.sql', 'config.php~', 'a.old', 'logo.png']))).toEqual({
      backups: ['site.tar.gz', 'db.sql', 'config.php~', 'a.old'],
    })
    const plain = directoryListing.run(
      withProbes({ '/ftp': probe('/ftp', SERVE_INDEX('/ftp', ['legal.md', 'logo.png']), 200, 'text/html') }),
    )
    expect(plain.status).toBe('fail')
    expect(plain.severity).toBeUndefined()
    expect(plain.summary).toBe('https://example.com/ftp is a directory listing (Node serve-index): legal.md, logo.png.')
    const keys = directoryListing.run(
      withProbes({
        '/ftp': probe('/ftp', SERVE_INDEX('/ftp', ['legal.md']), 200, 'text/html'),
        '/encryptionkeys': probe('/encryptionkeys', SERVE_INDEX('/encryptionkeys', ['jwt.pub', 'premium.key']), 200, 'text/html'),
      }),
    )
    expect(keys.severity).toBe('high')
    // The listing that holds keys leads.
    expect(keys.evidence.url).toBe('https://example.com/encryptionkeys')
    expect(keys.summary).toContain('jwt.pub, premium.key; 1 more listing(s). Listed: keys.')
  })

  test('403, 404 and the SPA page at /ftp are not listings', () => {
    for (const p of [probe('/ftp', 'Forbidden', 403), probe('/ftp', 'Not Found', 404), probe('/ftp', SPA_HTML, 200, 'text/html')])
      expect(directoryListing.run(withProbes({ '/ftp': p })).status).toBe('pass')
  })
})

describe('linked folders', () => {
  const page = (html: string) => ({ ...makeArtifacts().page, html })
  test('links ending in "/" first, then folders of linked files; same origin, not the root, not probed, at most the limit', () => {
    const html = [
      '<a href="/docs/guide.pdf">guide</a>',
      '<a href="/media/">media</a>',
      '<a href="https://other.example/files/">other</a>',
      '<a href="/">home</a>',
      '<a href="/about.html">about</a>',
      '<a href="/ftp/legal.md">legal</a>',
      '<a href="/uploads/2026/report.xlsx">report</a>',
      '<a href="/static/app.css">css</a>',
      '<a href="/downloads/">downloads</a>',
      '<a href="/more/x.zip">more</a>',
    ].join('')
    expect(directoryLinks(page(html), SITE, PROBE_PATHS)).toEqual(['/media/', '/downloads/', '/docs/'])
    expect(GATHER_LIMITS.directoryLinks).toBe(3)
    expect(
      directoryLinks(
        page('<a href="/ftp/legal.md">x</a><a href="/static/a.css">y</a><a href="/shop/">me</a>'),
        `${SITE}shop/`,
        PROBE_PATHS,
      ),
    ).toEqual([])
  })
})

describe('error probes under API prefixes', () => {
  const pageWith = (calls: ReturnType<typeof apiCall>[]) => ({ ...makeArtifacts().page, api: { calls, unlisted: 0, websockets: [] } })
  const known = wellKnownPlans('https://example.com')
  const errors = (calls: ReturnType<typeof apiCall>[]) =>
    revealedPlans(pageWith(calls), SITE, new Set(known.map((p) => p.url)))
      .filter((p) => p.kind === 'error')
      .map((p) => [p.method, p.url])

  test('one GET per prefix the page used, at most the limit; not for files, single-segment paths or other sites', () => {
    expect(
      errors([
        apiCall('/rest/languages', []),
        apiCall('/rest/admin/application-version', {}),
        apiCall('/api/Quantitys/', {}),
        apiCall('/v2/items', {}),
      ]),
    ).toEqual([
      ['GET', `https://example.com/rest/${API_ERROR_PROBE}`],
      ['GET', `https://example.com/api/${API_ERROR_PROBE}`],
    ])
    expect(API_PROBE_LIMITS.errorPaths).toBe(2)
    expect(
      errors([apiCall('/assets/i18n/en.json', {}), apiCall('/graphql', {}), apiCall('https://tracker.other.example/v1/collect', {})]),
    ).toEqual([])
    expect(errors([])).toEqual([])
  })
})

describe('cors-wildcard-api', () => {
  const STAR = { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' }
  const run = (calls: ReturnType<typeof apiCall>[], apiProbes = makeArtifacts().apiProbes) =>
    corsWildcardApi.run(makeArtifacts({ page: { ...makeArtifacts().page, api: { calls, unlisted: 0, websockets: [] } }, apiProbes }))

  test('warns (low) on same-site JSON answers with *, saying public data is fine', () => {
    const r = run([apiCall('/rest/languages', [], { headers: STAR, credentialed: true }), apiCall('/api/products', [])])
    expect(r).toMatchObject({ status: 'warn', severity: 'low' })
    expect(r.evidence).toMatchObject({
      apiAnswers: 2,
      wildcard: 1,
      answers: [{ url: 'https://example.com/rest/languages', source: 'page', credentialedCall: true }],
    })
    expect(r.summary).toBe(
      '1 of 2 API answer(s), e.g. https://example.com/rest/languages, let any website read them (Access-Control-Allow-Origin: *): ' +
        'fine for public data, not for data meant only for your own front-end or for callers on a trusted network.',
    )
  })

  test('the API probes count too: a CORS probe of an API path answering * (the credentials header noted as ignored)', () => {
    const cors = apiProbe('cors', '/api/orders', '', {
      headers: { ...STAR, 'access-control-allow-credentials': 'true' },
      contentType: 'application/json',
      source: 'traffic',
      origin: 'https://appaudit-cors-probe.example',
    })
    const r = run([], [cors])
    expect(r.status).toBe('warn')
    expect(r.evidence.answers).toEqual([
      {
        url: 'https://example.com/api/orders',
        source: 'probe',
        credentialedCall: false,
        credentialsHeader: 'ignored by browsers next to *',
      },
    ])
  })

  test('not findings: * on HTML, on another site\u2019s API, on error answers; a fixed origin; no API at all is skipped', () => {
    expect(
      run([
        apiCall('/api/products', [], {
          headers: { 'content-type': 'application/json', 'access-control-allow-origin': 'https://app.example.com' },
        }),
      ]).status,
    ).toBe('pass')
    const notApi = [
      apiCall('/page.html', '<html>', { headers: { 'content-type': 'text/html', 'access-control-allow-origin': '*' } }),
      apiCall('https://api.other.example/v1/rates', {}, { headers: STAR }),
      apiCall('/api/boom', { error: 'x' }, { headers: STAR, status: 500 }),
    ]
    const r = run(notApi)
    expect(r.status).toBe('skipped')
    expect(r.summary).toBe('Not applicable: no same-site API answer (JSON) from the page or the API probes.')
  })
})

test('serve-index entries after 40 KB of icon styles are still read', () => {
  const icons = `<style>${'.icon-x { background-image: url(data:image/png;base64,AAAA); }\n'.repeat(700)}</style>`
  const body = SERVE_INDEX('/ftp', ['premium.key']).replace('</head>', `${icons}</head>`)
  expect(body.indexOf('<ul id="files"')).toBeGreaterThan(40_000)
  expect(listedNames(body)).toEqual(['premium.key'])
  expect(sensitiveEntries(body)).toEqual({ keys: ['premium.key'] })
})
