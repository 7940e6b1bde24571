// Fix briefs for the server a scan recognises: a fixture that answers like Apache with PHP (Server and
// X-Powered-By headers, a PHPSESSID cookie, Apache's own 404 page) and one that answers like Express, both
// scanned by scan_app through the real service, then briefed by get_fix_brief over the MCP SDK client. The
// brief must name the server, point at its own configuration (.htaccess, php.ini; the Express app), and
// advise a CSP that allows the page's own inline script by hash.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { cspHash } from '../../shared/checks/util/csp-builder.ts'
import { connectClient, ok } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'

const INLINE = "document.getElementById('cart').textContent = 'Cart: 0 items'"
const PAGE = `<!doctype html><html><head><title>Shop</title></head><body><p id="cart"></p><script>${INLINE}</script></body></html>`
const APACHE_404 =
  '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n' +
  '<p>The requested URL was not found on this server.</p>\n<hr>\n<address>Apache/2.4.62 (Debian) Server at 127.0.0.1 Port 80</address>\n</body></html>\n'

function serve(headers: Record<string, string>, notFound: (path: string) => string) {
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/' || path === '/index.php')
        return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=UTF-8', ...headers } })
      return new Response(notFound(path), {
        status: 404,
        headers: { 'content-type': 'text/html; charset=iso-8859-1', server: headers.server ?? '' },
      })
    },
  })
}

describe('get_fix_brief for the recognised server', () => {
  let svc: TestService
  let client: Client
  let apache: ReturnType<typeof Bun.serve>
  let express: ReturnType<typeof Bun.serve>

  beforeAll(async () => {
    apache = serve(
      {
        server: 'Apache/2.4.62 (Debian)',
        'x-powered-by': 'PHP/8.2.26',
        'set-cookie': 'PHPSESSID=5f1e0c9a8b7d6e5f4a3b2c1d0e9f8a7b; path=/',
        expires: 'Thu, 19 Nov 1981 08:52:00 GMT',
      },
      () => APACHE_404,
    )
    // Express's finalhandler: a 404 page that says "Cannot GET <path>", and no Server header.
    express = serve({ 'x-powered-by': 'Express', 'set-cookie': 'connect.sid=s%3Aabc.def; Path=/; HttpOnly' }, (path) => {
      return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot GET ${path}</pre>\n</body>\n</html>\n`
    })
    svc = await startService('production')
    client = await connectClient(svc.mcpUrl, await svc.key())
  }, 120_000)

  afterAll(async () => {
    await client?.close()
    await svc?.stop()
    apache?.stop(true)
    express?.stop(true)
  })

  test('an Apache + PHP site is briefed for Apache: .htaccess, php.ini, and a CSP with the page script hash', async () => {
    const report = await ok(client, 'scan_app', { url: `http://127.0.0.1:${apache.port}/`, detail: 'full' })
    const b = await ok(client, 'get_fix_brief', { scanId: report.id, detail: 'full' })
    expect(b.platform).toBe('apache')
    expect(b.detectedFrom).toEqual(['server: Apache/2.4.62 (Debian)', 'Apache error page'])
    expect(b.detected.hints).toEqual(['x-powered-by: PHP/8.2.26', 'PHPSESSID cookie (PHP sessions)'])

    const item = (id: string) => b.items.find((i: { checkId: string }) => i.checkId === id)
    const csp = item('csp')
    expect(csp.title).toBe('Content-Security-Policy does not restrict scripts')
    expect(csp.where).toContain('.htaccess')
    expect(csp.platformSpecific).toBe(true)
    expect(csp.change).toContain('<IfModule mod_headers.c>')
    expect(csp.change).toMatch(/Header always set Content-Security-Policy "default-src 'self'; script-src 'self' 'sha256-/)
    expect(csp.change).toContain(cspHash(INLINE))
    expect(csp.change).not.toMatch(/script-src[^;]*'unsafe-inline'/)

    const httponly = item('cookie-httponly')
    expect(httponly.change).toContain('session.cookie_httponly = 1')
    expect(httponly.where).toContain('php.ini')
    const version = item('version-disclosure')
    expect(version.change).toContain('ServerTokens Prod')
    expect(version.change).toContain('expose_php = Off')
    for (const i of b.items) expect(i.status === 'fail' || i.status === 'warn').toBe(true)

    // The report's own advice for the check is the same computed policy.
    const reportCsp = report.checks.find((c: { id: string }) => c.id === 'csp')
    expect(reportCsp.advice).toContain(cspHash(INLINE))

    // Asked for another platform, the same finding is written for it.
    const forIis = await ok(client, 'get_fix_brief', { scanId: report.id, checkId: 'csp', platform: 'iis' })
    expect(forIis.items[0].change).toContain('<add name="Content-Security-Policy" value="default-src')
    expect(forIis.items[0].where).toContain('web.config')
  }, 120_000)

  test('an Express site is briefed for the Express app', async () => {
    const report = await ok(client, 'scan_app', { url: `http://127.0.0.1:${express.port}/`, detail: 'full' })
    const b = await ok(client, 'get_fix_brief', { scanId: report.id, detail: 'full' })
    expect(b.platform).toBe('express')
    expect(b.detectedFrom).toEqual(['x-powered-by: Express', 'connect.sid cookie (express-session)', 'Express "Cannot GET" page'])
    const csp = b.items.find((i: { checkId: string }) => i.checkId === 'csp')
    expect(csp.change).toContain('res.setHeader("Content-Security-Policy"')
    expect(csp.change).toContain(cspHash(INLINE))
    const version = b.items.find((i: { checkId: string }) => i.checkId === 'version-disclosure')
    expect(version?.change).toContain("app.disable('x-powered-by')")
  }, 120_000)
})
