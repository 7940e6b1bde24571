import { describe, expect, test } from 'bun:test'
import { debugErrorPage, findDebugPage, redactedExcerpt } from '../../../shared/checks/exposure/debug-error-page.ts'
import { API_ERROR_PROBE, BASELINE_PROBE } from '../../../shared/checks/probe-paths.ts'
import type { ProbeResult } from '../../../shared/checks/types.ts'
import { apiProbe, makeArtifacts, noise, probe, SPA_HTML } from './artifacts.ts'

const URL = 'https://example.com/'
const page = (body: string, status = 500) => findDebugPage({ url: URL, status, body })
const filler = `<!doctype html><html><head><title>Shop</title><style>${'body{margin:0}'.repeat(200)}</style></head><body><main>`

const DJANGO_500 = `<!DOCTYPE html><html lang="en"><head><title>ZeroDivisionError at /</title></head><body>
<div id="summary"><h1>ZeroDivisionError at /</h1><pre class="exception_value">division by zero</pre>
<table class="meta"><tr><th scope="row">Request Method:</th><td>GET</td></tr><tr><th scope="row">Django Version:</th><td>5.1</td></tr>
<tr><th scope="row">Exception Location:</th><td><span class="fname">/app/shop/views.py</span>, line 12, in index</td></tr></table></div>
<div id="explanation"><p>You’re seeing this error because you have <code>DEBUG = True</code> in your Django settings file.</p></div></body></html>`

const DJANGO_404 = `<!DOCTYPE html><html lang="en"><head><title>Page not found at /__appaudit_probe_4f1c9e2b__</title></head><body>
<div id="summary"><h1>Page not found <span>(404)</span></h1><table class="meta"><tr><th>Request Method:</th><td>GET</td></tr><tr><th>Request URL:</th><td>http://example.com/__appaudit_probe_4f1c9e2b__</td></tr></table></div>
<div id="info"><p>Using the URLconf defined in <code>shop.urls</code>, Django tried these URL patterns, in this order:</p></div>
<div id="explanation"><p>You're seeing this error because you have <code>DEBUG = True</code> in your Django settings file. Change that to <code>False</code>, and Django will display a standard 404 page.</p></div></body></html>`

const LARAVEL = `<!doctype html><html class="theme-light"><head><title>Division by zero</title></head><body><script>window.data = {"report":{"notifier":"Laravel Client"}};</script><script>ignite(window.data)</script></body></html>`

const RAILS = `<!DOCTYPE html><html lang="en"><head><title>Action Controller: Exception caught</title></head><body><header><h1>NoMethodError in OrdersController#show</h1></header>
<div id="container"><p><code>Rails.root: /app</code></p><a href="#" id="Application-Trace">Application Trace</a> | <a href="#">Framework Trace</a> | <a href="#">Full Trace</a></div></body></html>`

const EXPRESS = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Error</title></head><body><pre>TypeError: Cannot read properties of undefined (reading &#39;id&#39;)<br> &nbsp; &nbsp;at /app/routes/orders.js:14:27<br> &nbsp; &nbsp;at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)<br> &nbsp; &nbsp;at next (/app/node_modules/express/lib/router/route.js:149:13)</pre></body></html>`

const NODE_TEXT = `Error: connect ECONNREFUSED 10.0.0.5:5432
    at Object.<anonymous> (/srv/app/server.js:10:9)
    at Module._compile (node:internal/modules/cjs/loader:1554:14)`

const YSOD = `<html><head><title>Object reference not set to an instance of an object.</title></head><body bgcolor="white">
<span><H1>Server Error in '/' Application.<hr width=100% size=1 color=silver></H1>
<h2> <i>Object reference not set to an instance of an object.</i> </h2></span>
<b> Exception Details: </b>System.NullReferenceException: Object reference not set to an instance of an object.<br><br>
<b>Stack Trace:</b> <br><br><table width=100% bgcolor="#ffffcc"><tr><td><code><pre>[NullReferenceException]   Shop.Controllers.HomeController.Index() in C:\\src\\Shop\\HomeController.cs:21</pre></code></td></tr></table></body></html>`

const YSOD_HIDDEN = `<html><head><title>Runtime Error</title></head><body><span><H1>Server Error in '/' Application.<hr width=100% size=1 color=silver></H1><h2> <i>Runtime Error</i> </h2></span>
<b>Description: </b>An application error occurred on the server. The current custom error settings for this application prevent the details of the application error from being viewed remotely (for security reasons).</body></html>`

const PHP_WARNING = `<br />
<b>Warning</b>:  Undefined variable $user in <b>/var/www/html/index.php</b> on line <b>7</b><br />
<!doctype html><html><head><title>Shop</title></head><body>...</body></html>`

const PHP_FATAL = `PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /var/www/html/db.php:5
Stack trace:
#0 /var/www/html/db.php(5): PDO->__construct()
#1 {main}
  thrown in /var/www/html/db.php on line 5`

const PYTHON = `Traceback (most recent call last):
  File "/app/server.py", line 42, in handle
    rows = db.query(sql)
psycopg2.OperationalError: could not connect to server`

const WHITELABEL_TRACE = `<html><body><h1>Whitelabel Error Page</h1><p>This application has no explicit mapping for /error, so you are seeing this as a fallback.</p><div id='created'>Thu Oct 01 10:00:00 UTC 2026</div><div>There was an unexpected error (type=Internal Server Error, status=500).</div><div style='white-space:pre-wrap;'>java.lang.NullPointerException: null
\tat com.acme.shop.OrderController.show(OrderController.java:42)
\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)</div></body></html>`

const WHITELABEL_PLAIN = `<html><body><h1>Whitelabel Error Page</h1><p>This application has no explicit mapping for /error, so you are seeing this as a fallback.</p><div id='created'>Thu Oct 01 10:00:00 UTC 2026</div><div>There was an unexpected error (type=Not Found, status=404).</div></body></html>`

const NEXT_DEV = `<!DOCTYPE html><html><head></head><body><div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{}},"page":"/_error","query":{},"buildId":"development","isFallback":false,"err":{"name":"Error","source":"server","message":"boom","stack":"Error: boom\\n    at getServerSideProps (webpack-internal:///./pages/index.js:12:11)"},"gip":true}</script></body></html>`

const WERKZEUG = `<!doctype html><html lang=en><head><title>ZeroDivisionError: division by zero // Werkzeug Debugger</title></head><body><div class="debugger"><h1>ZeroDivisionError</h1><div class="detail"><p class="errormsg">ZeroDivisionError: division by zero</p></div><div class="explanation">The debugger caught an exception in your WSGI application.</div></div></body></html>`

const GENERIC_500 =
  '<html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>'

describe('debug-error-page: recognising pages', () => {
  test.each([
    ['Django', DJANGO_500],
    ['Django', DJANGO_404],
    ['Werkzeug/Flask', WERKZEUG],
    ['Laravel', LARAVEL],
    ['Rails', RAILS],
    ['Node.js', EXPRESS],
    ['Node.js', NODE_TEXT],
    ['ASP.NET', YSOD],
    ['PHP', PHP_WARNING],
    ['PHP', PHP_FATAL],
    ['Python', PYTHON],
    ['Spring Boot', WHITELABEL_TRACE],
    ['Next.js', NEXT_DEV],
  ])('%s', (framework, body) => {
    const found = page(body)
    expect(found?.framework).toBe(framework)
    expect(found!.excerpt.length).toBeLessThanOrEqual(301)
    expect(found!.excerpt).not.toMatch(/<\/?(?:html|head|body|div|span|pre|code|b|br|h1|h2|table|td|tr|th|p|title|script|a)\b/i)
  })

  test.each([
    ['a generic 500 page', GENERIC_500],
    ['the Spring Whitelabel page without a trace', WHITELABEL_PLAIN],
    ['an ASP.NET page hiding the details', YSOD_HIDDEN],
    ['a single-page app', SPA_HTML],
    ['plain "Internal Server Error"', 'Internal Server Error'],
  ])('not %s', (_, body) => {
    expect(page(body)).toBeNull()
  })

  test('generic traces quoted deep inside a 200 page are not findings; at the start or on an error status they are', () => {
    const quoted = `${filler}<article><h1>Debugging Python</h1><pre>${PYTHON}</pre></article></main></body></html>`
    expect(page(quoted, 200)).toBeNull()
    expect(page(quoted, 500)?.framework).toBe('Python')
    expect(page(PHP_WARNING, 200)?.framework).toBe('PHP')
    expect(page(PYTHON, 200)?.framework).toBe('Python')
  })

  test('the excerpt is redacted: URL credentials, secret assignments and random tokens', () => {
    const secret = noise(32, 41)
    const body = `Traceback (most recent call last):\n  File "/app/x.py", line 3, in <module>\n    connect("postgres://app:${noise(16, 42)}@db/app", api_key="${secret}")\nValueError: bad`
    const excerpt = redactedExcerpt(body, 0)
    expect(excerpt).toContain('postgres://***@db/app')
    expect(excerpt).toContain('api_key="***')
    expect(excerpt).not.toContain(secret)
    expect(redactedExcerpt(`Error at token ${secret} here`, 0)).not.toContain(secret)
  })
})

const run = (probes: Record<string, ProbeResult>, main: { body: string; status: number } = { body: SPA_HTML, status: 200 }) =>
  debugErrorPage.run(makeArtifacts({ probes: { ...makeArtifacts().probes, ...probes }, mainResponse: main }))

describe('debug-error-page: the check', () => {
  test('fails a debug page on the main response, high, with URL, framework and excerpt', () => {
    const r = run({}, { body: DJANGO_500, status: 500 })
    expect(r.status).toBe('fail')
    expect(r.severity).toBeUndefined()
    expect(r.evidence.pages).toMatchObject([{ framework: 'Django', url: 'https://example.com/', status: 500, occurrences: 1, alsoAt: [] }])
    expect((r.evidence.pages as Array<{ excerpt: string }>)[0]!.excerpt).toContain('DEBUG = True')
  })

  test('fails a debug 404 at the baseline path and groups the same framework across probes', () => {
    const r = run({
      [BASELINE_PROBE]: probe(BASELINE_PROBE, DJANGO_404, 404, 'text/html'),
      '/.env': probe('/.env', DJANGO_404, 404, 'text/html'),
    })
    expect(r.status).toBe('fail')
    expect(r.evidence.pages).toMatchObject([
      { framework: 'Django', url: `https://example.com${BASELINE_PROBE}`, occurrences: 2, alsoAt: ['https://example.com/.env'] },
    ])
  })

  test('passes generic error pages and a healthy site', () => {
    expect(run({}).status).toBe('pass')
    expect(run({ [BASELINE_PROBE]: probe(BASELINE_PROBE, GENERIC_500, 500, 'text/html') }, { body: GENERIC_500, status: 500 }).status).toBe(
      'pass',
    )
    expect(run({ '/.env': probe('/.env', WHITELABEL_PLAIN, 404, 'text/html') }).status).toBe('pass')
  })

  test('ignores probes that got no answer', () => {
    expect(run({ '/.env': { ...probe('/.env', PYTHON, 0), error: 'timeout' } }).status).toBe('pass')
  })
})

describe('debug-error-page: excerpts', () => {
  test('keep frame names in angle brackets and never start inside a tag', () => {
    expect(page(NODE_TEXT)!.excerpt).toContain('at Object.<anonymous> (/srv/app/server.js:10:9)')
    expect(page(WERKZEUG)!.excerpt.startsWith('ZeroDivisionError')).toBe(true)
  })

  test('redact quoted keys in JSON and PHP arrays', () => {
    const password = noise(10, 43)
    expect(redactedExcerpt(`{"DB_PASSWORD":"${password}","APP_ENV":"local"}`, 0)).toBe('{"DB_PASSWORD":"***","APP_ENV":"local"}')
    expect(redactedExcerpt(`'password' => '${password}'`, 0)).not.toContain(password)
  })
})

describe('error pages and traces as frameworks write them', () => {
  // finalhandler 2 (Express 5) in development: the stack, HTML-escaped, in a <pre>.
  const EXPRESS5 =
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Error: boom<br> &nbsp; &nbsp;at /srv/shop/server.js:14:9<br> &nbsp; &nbsp;at Layer.handleRequest (/srv/shop/node_modules/router/lib/layer.js:152:17)<br> &nbsp; &nbsp;at next (/srv/shop/node_modules/router/lib/route.js:157:13)</pre>\n</body>\n</html>\n'
  const KOA_TEXT =
    'Error: boom\n    at /srv/api/app.js:8:9\n    at dispatch (/srv/api/node_modules/koa-compose/index.js:42:32)\n    at /srv/api/node_modules/koa-router/lib/router.js:425:16'
  const JSON_NODE = JSON.stringify({
    error: 'Internal Server Error',
    stack:
      "TypeError: Cannot read properties of undefined (reading 'id')\n    at getUser (/srv/api/routes/users.js:22:31)\n    at Layer.handle [as handle_request] (/srv/api/node_modules/express/lib/router/layer.js:95:5)",
  })
  const JSON_PYTHON = JSON.stringify({
    detail:
      'Traceback (most recent call last):\n  File "/srv/app/views.py", line 41, in orders\n    total = 1 / 0\nZeroDivisionError: division by zero',
  })
  const SYMFONY =
    '<!DOCTYPE html><html><head><title>Division by zero (500 Internal Server Error)</title></head><body><div class="exception-message-wrapper"><div class="container"><h1 class="break-long-words exception-message">Division by zero</h1></div></div><abbr title="Symfony\\Component\\ErrorHandler\\Error\\FatalError">FatalError</abbr></body></html>'

  test('Express 5, Koa, Symfony and stack traces in JSON answers are found', () => {
    expect(page(EXPRESS5)?.framework).toBe('Node.js')
    expect(page(KOA_TEXT)?.framework).toBe('Node.js')
    expect(findDebugPage({ url: URL, status: 500, body: JSON_NODE })?.framework).toBe('Node.js')
    expect(findDebugPage({ url: URL, status: 200, body: JSON_NODE })?.framework).toBe('Node.js')
    expect(findDebugPage({ url: URL, status: 500, body: JSON_PYTHON })?.framework).toBe('Python')
    expect(page(SYMFONY)?.framework).toBe('Symfony')
    // The excerpt keeps the server path readable and redacts nothing that is not secret.
    expect(page(EXPRESS5)!.excerpt).toContain('server.js:14:9 at Layer.handleRequest')
  })

  test('a page that quotes a frame in its text, and prose about Symfony, are not findings', () => {
    expect(page(`${filler}<p>Frames look like: at /srv/app/server.js:1:1</p></main></body></html>`, 200)).toBeNull()
    expect(page(`${filler}<p>Built with Symfony components.</p></main></body></html>`, 200)).toBeNull()
  })
})

describe('debug-error-page: the error probe under an API prefix', () => {
  // errorhandler's JSON, as Express answers an Accept: application/json client.
  const STACK = {
    error: {
      message: `Unexpected path: /rest/${API_ERROR_PROBE}`,
      stack: [
        `Error: Unexpected path: /rest/${API_ERROR_PROBE}`,
        '    at /juice-shop/build/routes/angular.js:15:18',
        '    at Layer.handle [as handle_request] (/juice-shop/node_modules/express/lib/router/layer.js:95:5)',
        '    at next (/juice-shop/node_modules/express/lib/router/index.js:280:10)',
      ].join('\n'),
    },
  }
  const run = (probes: ReturnType<typeof apiProbe>[]) => debugErrorPage.run(makeArtifacts({ apiProbes: probes }))

  test("a 500 with Express's stack at /rest/<nonsense> fails", () => {
    const r = run([apiProbe('error', `/rest/${API_ERROR_PROBE}`, STACK, { status: 500, source: 'traffic' })])
    expect(r.status).toBe('fail')
    expect(r.evidence.pages).toMatchObject([{ framework: 'Node.js', url: `https://example.com/rest/${API_ERROR_PROBE}`, status: 500 }])
  })

  test('the SPA page, a JSON 404 or a 500 without a stack there pass; other API probes are not read for traces', () => {
    expect(run([apiProbe('error', `/api/${API_ERROR_PROBE}`, SPA_HTML, { source: 'traffic' })]).status).toBe('pass')
    expect(run([apiProbe('error', `/api/${API_ERROR_PROBE}`, { error: 'Not found' }, { status: 404 })]).status).toBe('pass')
    expect(run([apiProbe('error', `/api/${API_ERROR_PROBE}`, { error: 'Something went wrong' }, { status: 500 })]).status).toBe('pass')
    expect(run([apiProbe('graphql', '/api/graphql', STACK, { status: 500 })]).status).toBe('pass')
  })
})
