// The checks that judge the page's API traffic and the probes it led to: what counts, and the traps that
// must not (an SPA's index.html at /swagger.json, a CSRF token, one contact address, a script-driven form).
import { describe, expect, test } from 'bun:test'
import { apiDataExposure } from '../../../shared/checks/exposure/api-data-exposure.ts'
import { debugErrorPage, findDebugPage } from '../../../shared/checks/exposure/debug-error-page.ts'
import { exposedApiDocs } from '../../../shared/checks/exposure/exposed-api-docs.ts'
import { runCheck } from '../../../shared/checks/runner.ts'
import { corsCredentialedReflection } from '../../../shared/checks/security/cors-credentialed-reflection.ts'
import { passwordForm, passwordForms } from '../../../shared/checks/security/password-form.ts'
import type { ApiCall } from '../../../shared/checks/types.ts'
import { readApiDocument } from '../../../shared/checks/util/api-docs.ts'
import { countPersonalData } from '../../../shared/checks/util/personal-data.ts'
import { countRegexWork } from '../../harness/regex-work.ts'
import { machineDeadline } from '../../harness/machine.ts'
import { ADVERSARIAL_BODIES, apiArtifacts, apiCall, apiProbe, makeArtifacts, SITE, SPA_HTML } from './artifacts.ts'

const BCRYPT = `$2b$10$${'N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'}`
const withCalls = (...calls: ApiCall[]) => makeArtifacts({ page: { ...makeArtifacts().page, api: { calls, unlisted: 0, websockets: [] } } })

describe('api-data-exposure', () => {
  test('counts e-mails and password hashes in an anonymous JSON answer, without quoting them', () => {
    const users = [1, 2, 3].map((i) => ({ id: i, email: `u${i}@shop.example`, password: BCRYPT }))
    const r = runCheck(apiDataExposure, withCalls(apiCall('/api/users', users)))
    expect([r.status, r.severity]).toEqual(['fail', 'critical'])
    expect(r.evidence.exposed).toEqual([
      { url: 'https://example.com/api/users', status: 200, counts: { emails: 3, passwordHashes: 3 }, secrets: [] },
    ])
    expect(JSON.stringify(r)).not.toContain('shop.example')
    expect(JSON.stringify(r)).not.toContain(BCRYPT)
  })

  test('a list of people without credentials is high; one contact address, a CSRF token or a page cursor is nothing', () => {
    const people = runCheck(
      apiDataExposure,
      withCalls(apiCall('/api/team', [{ email: 'a@x.example' }, { email: 'b@x.example', phone: '+1 555 010 9999' }])),
    )
    expect([people.status, people.severity]).toEqual(['fail', 'high'])
    const calm = runCheck(
      apiDataExposure,
      withCalls(
        apiCall('/api/config', {
          support: 'help@shop.example',
          csrfToken: 'aZ7kQ2mX9pL4vB8nR3tY6wE1',
          nextPageToken: 'Zm9vYmFyYmF6cXV4MTIzNDU2',
        }),
      ),
    )
    expect(calm.status).toBe('pass')
  })

  test("on a signed-in visit, answers to credentialed calls are the user's own; error answers are never judged", () => {
    const users = [{ email: 'a@x.example', passwordHash: BCRYPT }, { email: 'b@x.example' }]
    const calls = [apiCall('/api/me', users, { credentialed: true }), apiCall('/api/x', users, { status: 500 })]
    const signedIn = makeArtifacts({ page: { ...makeArtifacts().page, api: { calls, unlisted: 0, websockets: [], signedIn: true } } })
    const r = runCheck(apiDataExposure, signedIn)
    expect(r.status).toBe('pass')
    expect(r.evidence.anonymousJsonAnswers).toBe(0)
  })

  test('in a scan a call carrying a cookie the site handed an anonymous visitor is still anonymous', () => {
    const users = [{ email: 'a@x.example' }, { email: 'b@x.example' }]
    const r = runCheck(apiDataExposure, withCalls(apiCall('/api/users', users, { credentialed: true })))
    expect([r.status, r.severity]).toEqual(['fail', 'high'])
  })

  test('a token under a token-like key in an anonymous answer is critical', () => {
    expect(countPersonalData({ user: { apiKey: 'q8Zr4LmN2vXc7TbW1yHs5KdP' } }).tokens).toBe(1)
    expect(runCheck(apiDataExposure, withCalls(apiCall('/api/session', { accessToken: 'q8Zr4LmN2vXc7TbW1yHs5KdP9' }))).severity).toBe(
      'critical',
    )
  })
})

describe('debug-error-page on the API answers the page got', () => {
  test('a JSON 500 with a Node stack trace is found', () => {
    const stack =
      'Error: boom\n    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)\n    at next (/srv/app/node_modules/express/lib/router/route.js:144:13)'
    const r = runCheck(debugErrorPage, withCalls(apiCall('/api/boom', { error: 'boom', stack }, { status: 500 })))
    expect(r.status).toBe('fail')
    expect(JSON.stringify(r.evidence)).toContain('/api/boom')
  })
})

describe('exposed-api-docs: GraphQL introspection', () => {
  const schema = {
    data: {
      __schema: {
        queryType: { name: 'Query' },
        mutationType: { name: 'Mutation' },
        types: [
          { name: 'Query', fields: [{ name: 'me' }] },
          { name: 'Mutation', fields: [{ name: 'adminDeleteUser' }, { name: 'login' }] },
        ],
      },
    },
  }
  test('fails on a schema answer and names admin operations', () => {
    const r = runCheck(exposedApiDocs, makeArtifacts({ apiProbes: [apiProbe('graphql', '/api/graphql', schema, { source: 'traffic' })] }))
    expect([r.status, r.severity]).toEqual(['fail', 'medium'])
    expect(r.evidence.graphql).toMatchObject({ types: 2, queries: 1, mutations: 2, internal: ['adminDeleteUser'], source: 'traffic' })
  })
  test('passes when introspection is refused or the path is the SPA', () => {
    const refused = apiProbe('graphql', '/graphql', { errors: [{ message: 'introspection disabled' }] }, { status: 400 })
    const spa = apiProbe('graphql', '/api/graphql', SPA_HTML)
    const r = runCheck(exposedApiDocs, makeArtifacts({ apiProbes: [refused, spa] }))
    expect([r.status, r.evidence.probed]).toEqual(['pass', { graphql: 2, openapi: 0 }])
  })
})

describe('exposed-api-docs: OpenAPI documents', () => {
  const doc = {
    openapi: '3.0.3',
    paths: {
      '/api/users': { get: {} },
      '/api/admin/users': { get: {}, delete: {} },
      '/options': { get: { tags: ['Internal tools'] } },
    },
  }
  test('an OpenAPI document naming admin and internal operations fails, listing a few', () => {
    const r = runCheck(exposedApiDocs, makeArtifacts({ apiProbes: [apiProbe('openapi', '/docs/swagger.json', doc, { source: 'link' })] }))
    const o = r.evidence.openapi as Record<string, unknown>
    expect([r.status, o.operations, o.internal, o.source]).toEqual([
      'fail',
      4,
      ['GET /api/admin/users', 'DELETE /api/admin/users', 'GET /options'],
      'link',
    ])
  })
  test("the SPA's index.html at /swagger.json is not a document; one without internal operations is info when the page links it", () => {
    expect(runCheck(exposedApiDocs, makeArtifacts()).status).toBe('pass')
    const plain = { swagger: '2.0', paths: { '/pets': { get: {} }, '/operations': { get: {} } } }
    const linked = runCheck(
      exposedApiDocs,
      makeArtifacts({ apiProbes: [apiProbe('openapi', '/docs/openapi.json', plain, { source: 'link' })] }),
    )
    expect(linked.status).toBe('info')
    // Found only at a well-known path (Juice Shop's /api-docs): an API the site does not advertise, mapped. Low.
    const unlinked = runCheck(exposedApiDocs, makeArtifacts({ apiProbes: [apiProbe('openapi', '/openapi.json', plain)] }))
    expect([unlinked.status, unlinked.severity]).toEqual(['warn', 'low'])
    expect(unlinked.summary).toContain('does not link')
  })
  test('YAML documents are read line by line', () => {
    const yaml =
      'openapi: 3.1.0\ninfo:\n  title: x\npaths:\n  /users:\n    get:\n      summary: u\n  /internal/jobs:\n    post:\n      summary: j\n'
    expect(readApiDocument(yaml)).toMatchObject({ operations: 2, internal: ['POST /internal/jobs'] })
  })
  test("swagger-ui-express's swagger-ui-init.js (the Swagger UI at /api-docs/) is read for the document it embeds", () => {
    // The shape swagger-ui-express 5 writes (OWASP Juice Shop's /api-docs/swagger-ui-init.js, cut short).
    const doc = {
      openapi: '3.0.0',
      servers: [{ url: '/b2b/v2' }],
      paths: { '/orders': { post: { tags: ['Order'] } }, '/admin/jobs': { get: {} } },
    }
    const init = `\nwindow.onload = function() {\n  var url = window.location.search.match(/url=([^&]+)/);\n  var options = ${JSON.stringify({ swaggerDoc: doc, customOptions: {} }, null, 2)};\n  url = options.swaggerUrl || url\n}\n`
    expect(readApiDocument(init)).toMatchObject({ format: 'openapi', version: '3.0.0', operations: 2, internal: ['GET /admin/jobs'] })
    expect(readApiDocument('window.onload = function() { var options = {};\n}')).toBeNull()
  })
})

describe('cors-credentialed-reflection on the API paths the page used', () => {
  const cors = (origin: string, headers: Record<string, string>) =>
    apiProbe('cors', '/api/users', '', { origin, headers, source: 'traffic', contentType: '' })
  test('an API path reflecting "null" with credentials fails even when the page URL does not reflect', () => {
    const r = runCheck(
      corsCredentialedReflection,
      makeArtifacts({
        apiProbes: [
          cors('https://appaudit-cors-probe.example', {}),
          cors('null', { 'access-control-allow-origin': 'null', 'access-control-allow-credentials': 'true' }),
        ],
      }),
    )
    expect(r.status).toBe('fail')
    expect(r.evidence.apiPaths).toMatchObject({ probed: 1, requests: 2, allowed: [{ origin: 'null', credentials: true }] })
  })
  test('the evidence lists distinct paths first, whatever order the page called them in', () => {
    const reflects = (path: string, origin: string) =>
      apiProbe('cors', path, '', {
        origin,
        headers: { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' },
        source: 'traffic',
        contentType: '',
      })
    const paths = ['/api/boom', '/api/graphql', '/api/me', '/api/users']
    for (const order of [paths, [...paths].reverse()]) {
      const probes = order.flatMap((p) => [reflects(p, 'https://appaudit-cors-probe.example'), reflects(p, 'null')])
      const r = runCheck(corsCredentialedReflection, makeArtifacts({ apiProbes: probes }))
      expect(r.status).toBe('fail')
      const listed = (r.evidence.apiPaths as { allowed: Array<{ url: string }> }).allowed.map((a) => new URL(a.url).pathname)
      expect(listed).toHaveLength(5)
      expect(new Set(listed.slice(0, 4))).toEqual(new Set(paths))
      expect(r.summary).toContain('7 other API answer(s) allow it too')
    }
    // A path whose first answer seen only warns, seen last, still has its failing one listed among the first.
    const warnOnly = (path: string) =>
      apiProbe('cors', path, '', {
        origin: 'https://appaudit-cors-probe.example',
        headers: { 'access-control-allow-origin': 'https://appaudit-cors-probe.example' },
        source: 'traffic',
        contentType: '',
      })
    const probes = [
      ...paths.filter((p) => p !== '/api/me').flatMap((p) => [reflects(p, 'https://appaudit-cors-probe.example'), reflects(p, 'null')]),
      warnOnly('/api/me'),
      reflects('/api/me', 'null'),
    ]
    const r = runCheck(corsCredentialedReflection, makeArtifacts({ apiProbes: probes }))
    const listed = (r.evidence.apiPaths as { allowed: Array<{ url: string }> }).allowed.map((a) => new URL(a.url).pathname)
    expect(new Set(listed.slice(0, 4))).toEqual(new Set(paths))
  })
  test('"*" with credentials on an API path is a note, not a finding', () => {
    const star = cors('https://appaudit-cors-probe.example', {
      'access-control-allow-origin': '*',
      'access-control-allow-credentials': 'true',
    })
    const r = runCheck(corsCredentialedReflection, makeArtifacts({ apiProbes: [star] }))
    expect(r.status).toBe('pass')
    expect(r.evidence.apiPaths).toMatchObject({ wildcardWithCredentials: 1 })
  })
})

describe('password-form', () => {
  const page = (html: string, url = SITE) => makeArtifacts({ page: { ...makeArtifacts().page, html, finalUrl: url } })
  const pw = '<input type="password" name="p">'
  test('http, GET and another site are each named', () => {
    expect(passwordForms(`<form action="http://login.other.example/s" method="post">${pw}</form>`, SITE)[0]!.problems).toEqual([
      'http',
      'other-site',
    ])
    expect(passwordForms(`<form action="/login">${pw}</form>`, SITE)[0]!.problems).toEqual(['get'])
    expect(passwordForms(`<form action="https://idp.other.example/s" method="POST">${pw}</form>`, SITE)[0]!.problems).toEqual([
      'other-site',
    ])
    expect(runCheck(passwordForm, page(`<form action="https://idp.other.example/s" method="post">${pw}</form>`)).status).toBe('warn')
    expect(runCheck(passwordForm, page(`<form method="get" action="/s">${pw}</form>`)).status).toBe('fail')
  })
  test('not findings: a script-driven form, a relative action on a plain-http page, a form without a password', () => {
    expect(runCheck(passwordForm, page(`<form>${pw}</form>`)).status).toBe('pass')
    expect(runCheck(passwordForm, page(`<form action="/login" method="post">${pw}</form>`, 'http://example.com/')).status).toBe('pass')
    expect(runCheck(passwordForm, page('<form action="http://x.other.example/q"><input name="q"></form>')).status).toBe('pass')
  })
})

describe('api-data-exposure: signed-in answers shared caches may store', () => {
  const signedIn = (cacheControl: string | null, extra: Partial<ApiCall> = {}) =>
    apiCall(
      '/api/me',
      { id: 1 },
      {
        credentialed: true,
        headers: { 'content-type': 'application/json', ...(cacheControl ? { 'cache-control': cacheControl } : {}) },
        ...extra,
      },
    )
  test('public or s-maxage on a credentialed answer fails; max-age with cookies warns', () => {
    expect(runCheck(apiDataExposure, withCalls(signedIn('public, max-age=600'))).status).toBe('fail')
    expect(runCheck(apiDataExposure, withCalls(signedIn('s-maxage=60'))).status).toBe('fail')
    expect(runCheck(apiDataExposure, withCalls(signedIn('max-age=60')))).toMatchObject({ status: 'warn', severity: 'low' })
  })
  test('not findings: private or no-store, max-age on an Authorization call, anonymous answers', () => {
    expect(runCheck(apiDataExposure, withCalls(signedIn('public, max-age=60, private'))).status).toBe('pass')
    expect(runCheck(apiDataExposure, withCalls(signedIn('max-age=60', { authorization: true }))).status).toBe('pass')
    expect(
      runCheck(apiDataExposure, withCalls(apiCall('/api/p', [], { headers: { 'cache-control': 'public, max-age=600' } }))).status,
    ).toBe('pass')
  })
})

describe('the API checks on adversarial bodies', () => {
  test(
    'read 64 KiB adversarial bodies as the page, eight API answers and the probes a bounded number of times',
    () => {
      // The time they take is measured in bench/check-traps.ts.
      const checks = [apiDataExposure, exposedApiDocs, passwordForm, corsCredentialedReflection]
      const over: string[] = []
      for (const body of ADVERSARIAL_BODIES) {
        for (const status of [200, 500]) {
          const a = makeArtifacts(apiArtifacts(body, status))
          const given = body.length * (1 + 8 + 2)
          for (const check of checks) {
            const { scanned } = countRegexWork(() => runCheck(check, a))
            // api-data-exposure runs the secret scanner, whose rules read each answer once each (19 readings).
            if (scanned > (check === apiDataExposure ? 24 : 16) * given)
              over.push(`${check.id} on ${JSON.stringify(body.slice(0, 24))}: ${(scanned / given).toFixed(1)} readings`)
          }
          const { scanned } = countRegexWork(() => runCheck(debugErrorPage, makeArtifacts({ ...apiArtifacts(body, status), probes: {} })))
          if (scanned > 16 * (given + body.length))
            over.push(`debug-error-page on ${JSON.stringify(body.slice(0, 24))}: ${scanned} characters`)
        }
      }
      expect(over).toEqual([])
    },
    machineDeadline(20_000),
  )
})

describe('debug-error-page: framework error answers in JSON', () => {
  const answer = (body: unknown, status = 500) => findDebugPage({ url: 'https://example.com/api/x', status, body: JSON.stringify(body) })
  test.each([
    [
      'Laravel',
      {
        message: 'SQLSTATE[42S02]',
        exception: 'Illuminate\\Database\\QueryException',
        file: '/var/www/html/vendor/laravel/framework/src/Illuminate/Database/Connection.php',
        line: 760,
        trace: [{ file: '/var/www/html/app/Http/Controllers/UserController.php', line: 21 }],
      },
    ],
    [
      'Rails',
      {
        status: 500,
        error: 'Internal Server Error',
        exception: '#<NoMethodError: undefined method `name` for nil>',
        traces: { 'Application Trace': [{ id: 0, trace: "app/controllers/users_controller.rb:5:in `show'" }], 'Framework Trace': [] },
      },
    ],
    [
      'Spring Boot',
      {
        timestamp: '2026-11-29T01:00:00.000+00:00',
        status: 500,
        error: 'Internal Server Error',
        trace:
          'java.lang.NullPointerException: boom\n\tat com.shop.web.UserController.show(UserController.java:42)\n\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)',
        path: '/api/users/1',
      },
    ],
    [
      '.NET',
      {
        type: 'https://tools.ietf.org/html/rfc9110#section-15.6.1',
        title: 'System.InvalidOperationException',
        exception: {
          details:
            'System.InvalidOperationException: boom\r\n   at Shop.Controllers.UsersController.Get(Int32 id) in /src/Shop/Controllers/UsersController.cs:line 27',
        },
      },
    ],
  ])('%s', (framework, body) => {
    expect(answer(body)?.framework).toBe(framework)
  })
  test('a JSON error without a trace is not a finding', () => {
    expect(answer({ error: 'Not found', exception: 'NotFound', message: 'No user with id 7 was found on this server.' }, 404)).toBeNull()
    expect(answer({ stack: [], items: ['a', 'b'], note: 'a list that happens to have a stack field' }, 200)).toBeNull()
  })
})
