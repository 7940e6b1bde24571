// Log files recognised by their lines, as npm, yarn, Laravel, PHP and web servers write them.
import { describe, expect, test } from 'bun:test'
import { exposedLogFiles, readLog } from '../../../shared/checks/exposure/exposed-log-files.ts'
import { BASELINE_PROBE, LOG_PROBES } from '../../../shared/checks/probe-paths.ts'
import { YARN_ERROR } from '../../fixtures/sites/exposed-files.ts'
import { makeArtifacts, noise, probe, SPA_HTML } from './artifacts.ts'

const NPM_DEBUG = `0 info it worked if it ends with ok
1 verbose cli [ '/usr/bin/node', '/usr/bin/npm', 'run', 'build' ]
2 info using npm@6.14.18
3 info using node@v14.21.3
4 verbose run-script [ 'prebuild', 'build', 'postbuild' ]
5 error code ELIFECYCLE
6 error shop@1.0.0 build: \`vite build\`
`
const LARAVEL = `[2026-11-20 09:12:01] production.ERROR: SQLSTATE[HY000] [2002] Connection refused {"exception":"[object] (PDOException(code: 2002): SQLSTATE[HY000] [2002] Connection refused at /var/www/shop/vendor/laravel/framework/src/Illuminate/Database/Connectors/Connector.php:70)
[stacktrace]
#0 /var/www/shop/vendor/laravel/framework/src/Illuminate/Database/Connectors/Connector.php(70): PDO->__construct()
[2026-11-20 09:12:05] production.INFO: queue restarted
[2026-11-20 09:13:44] production.WARNING: slow query 1200 ms
`
const PHP_ERROR_LOG = `[20-Nov-2026 09:12:01 UTC] PHP Warning:  Undefined variable $cart in /var/www/html/cart.php on line 12
[20-Nov-2026 09:12:02 UTC] PHP Notice:  Trying to access array offset on value of type null in /var/www/html/cart.php on line 13
[20-Nov-2026 09:12:09 UTC] PHP Fatal error:  Uncaught Error: Call to undefined function mysql_connect() in /var/www/html/db.php:4
`
const NGINX_ERROR = `2026/11/20 09:12:01 [error] 1234#1234: *5 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.7
2026/11/20 09:12:04 [error] 1234#1234: *9 open() "/var/www/html/favicon.ico" failed (2: No such file or directory)
2026/11/20 09:13:11 [warn] 1234#1234: *12 an upstream response is buffered to a temporary file
`
const APP_LOG = (secret: string) => `2026-11-20T09:12:01.123Z INFO server listening on 3000
2026-11-20T09:12:02.004Z INFO connected to postgres://shop:${secret}@db.internal:5432/shop
2026-11-20T09:12:09.551Z ERROR request failed
`

const run = (files: Record<string, string>, baseline = SPA_HTML) =>
  exposedLogFiles.run(
    makeArtifacts({
      probes: {
        [BASELINE_PROBE]: probe(BASELINE_PROBE, baseline, 200, 'text/html'),
        ...Object.fromEntries(Object.entries(files).map(([path, body]) => [path, probe(path, body)])),
      },
    }),
  )

describe('exposed-log-files', () => {
  test('each format is recognised by its lines', () => {
    expect(readLog(NPM_DEBUG)?.kind).toBe('npm-debug')
    expect(readLog(YARN_ERROR)?.kind).toBe('yarn-error')
    expect(readLog(LARAVEL)?.kind).toBe('laravel')
    expect(readLog(PHP_ERROR_LOG)?.kind).toBe('php-error')
    expect(readLog(NGINX_ERROR)?.kind).toBe('nginx-error')
    expect(readLog(APP_LOG('x'))?.kind).toBe('application-log')
  })

  test('a served log fails: medium, high with a stack trace, critical with a credential, never quoting its lines', () => {
    const plain = run({ '/logs/error.log': NGINX_ERROR })
    expect([plain.status, plain.severity]).toEqual(['fail', 'medium'])
    const traced = run({ '/yarn-error.log': YARN_ERROR })
    expect([traced.status, traced.severity]).toEqual(['fail', 'high'])
    expect(traced.summary).toContain('/yarn-error.log holds a Node.js stack trace')
    const password = noise(16, 81)
    const leaked = run({ '/debug.log': APP_LOG(password), '/error_log': PHP_ERROR_LOG })
    expect([leaked.status, leaked.severity]).toEqual(['fail', 'critical'])
    expect(leaked.summary).toContain('with a credential in /debug.log: connection-string-password')
    expect(JSON.stringify(leaked)).not.toContain(password)
    expect(JSON.stringify(leaked)).not.toContain('Undefined variable')
  })

  test('an SPA answering index.html, a 404 page, prose about logs and a few dated lines are not logs', () => {
    const html = run(Object.fromEntries(LOG_PROBES.map((p) => [p, SPA_HTML])))
    expect(html.status).toBe('pass')
    const text = run({
      '/debug.log': 'Not Found',
      '/error_log': 'Our changelog:\n2026-11-01 INFO: we shipped dark mode\nThanks for reading.',
      '/npm-debug.log': '# How to read npm-debug.log\nLook for lines starting with "error".',
    })
    expect(text.status).toBe('pass')
  })
})
