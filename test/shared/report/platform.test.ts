import { describe, expect, test } from 'bun:test'
import {
  asPlatformSignals,
  detectFromSignals,
  detectPlatform,
  platformSignals,
  signalsFromReport,
} from '../../../shared/report/platform.ts'

describe('detectPlatform from response headers and page', () => {
  test.each([
    ['Vercel by x-vercel-id', { 'x-vercel-id': 'fra1::iad1::abcde-1700000000000-0123456789ab' }, '', 'vercel', 'x-vercel-id header'],
    ['Vercel by its Server header', { server: 'Vercel' }, '', 'vercel', 'server: Vercel'],
    ['Netlify by its Server header', { server: 'Netlify' }, '', 'netlify', 'server: Netlify'],
    ['Netlify by x-nf-request-id', { 'x-nf-request-id': '01HZX3Q2W5' }, '', 'netlify', 'x-nf-request-id header'],
    ['Next.js by x-powered-by', { 'x-powered-by': 'Next.js' }, '', 'nextjs', 'x-powered-by: Next.js'],
    ['Next.js by its assets alone', {}, '<script src="/_next/static/chunks/main-abc.js"></script>', 'nextjs', '/_next/ assets in the page'],
    ['Cloudflare by cf-ray', { 'cf-ray': '8a1b2c3d4e5f6a7b-FRA' }, '', 'cloudflare', 'cf-ray header'],
    ['Cloudflare by its Server header', { server: 'cloudflare' }, '', 'cloudflare', 'server: cloudflare'],
    ['nginx with a version', { server: 'nginx/1.18.0 (Ubuntu)' }, '', 'nginx', 'server: nginx/1.18.0 (Ubuntu)'],
    ['OpenResty as nginx', { server: 'openresty' }, '', 'nginx', 'server: openresty'],
  ] as const)('%s', (_name, headers, html, platform, signal) => {
    const d = detectPlatform(headers, html)
    expect(d.platform).toBe(platform)
    expect(d.detectedFrom).toContain(signal)
  })

  test('nothing recognisable is generic, with no signals', () => {
    expect(detectPlatform({ server: 'AmazonS3', 'content-type': 'text/html' }, '<html></html>')).toEqual({
      platform: 'generic',
      detectedFrom: [],
      alsoDetected: [],
      hints: [],
    })
  })

  test('a Next.js server on Vercel is briefed as Next.js: next.config.js applies wherever it runs', () => {
    const d = detectPlatform({ server: 'Vercel', 'x-vercel-id': 'iad1::x', 'x-powered-by': 'Next.js' }, '<script src="/_next/static/a.js">')
    expect(d.platform).toBe('nextjs')
    expect(d.alsoDetected).toEqual(['vercel'])
  })

  test('Next.js assets on Netlify without a Next.js server (a static export) are briefed as Netlify', () => {
    const d = detectPlatform({ server: 'Netlify' }, '<link href="/_next/static/css/app.css">')
    expect(d.platform).toBe('netlify')
    expect(d.alsoDetected).toEqual(['nextjs'])
  })

  test('Vercel behind Cloudflare is briefed as Vercel, the config in the repository', () => {
    const d = detectPlatform({ server: 'cloudflare', 'cf-ray': '1-FRA', 'x-vercel-id': 'fra1::x' })
    expect(d.platform).toBe('vercel')
    expect(d.alsoDetected).toEqual(['cloudflare'])
  })

  test('an nginx origin seen through Cloudflare is briefed as nginx', () => {
    expect(detectPlatform({ server: 'nginx', 'cf-ray': '1-FRA' }).platform).toBe('nginx')
  })

  test('a Server header that merely mentions a name elsewhere is not a match', () => {
    expect(detectPlatform({ server: 'my-nginx-like-server' }).platform).toBe('generic')
  })
})

describe('platformSignals', () => {
  test('keeps only fingerprint headers, cut short, so nothing else about the site is stored', () => {
    const s = platformSignals({ server: 'Vercel', 'set-cookie': 'sid=secret', authorization: 'x', 'x-powered-by': 'N'.repeat(500) }, '')
    expect(Object.keys(s.headers).sort()).toEqual(['server', 'x-powered-by'])
    expect(s.headers['x-powered-by']!.length).toBe(200)
    expect(s.nextAssets).toBe(false)
  })

  test('reads __NEXT_DATA__ as a Next.js page', () => {
    expect(platformSignals({}, '<script id="__NEXT_DATA__" type="application/json">{}</script>').nextAssets).toBe(true)
  })

  test('stored signals read back; anything else is refused', () => {
    const s = platformSignals({ 'x-vercel-id': 'a' }, '')
    expect(asPlatformSignals(JSON.parse(JSON.stringify(s)))).toEqual(s)
    expect(asPlatformSignals(null)).toBeNull()
    expect(asPlatformSignals({ headers: 'x' })).toBeNull()
    expect(asPlatformSignals({ headers: { server: 1, via: 'v' }, nextAssets: false })).toEqual({ headers: { via: 'v' }, nextAssets: false })
    const full = platformSignals({ server: 'Apache' }, '', { setCookies: ['PHPSESSID=abc; path=/'], errorPages: [APACHE_404] })
    expect(asPlatformSignals(JSON.parse(JSON.stringify(full)))).toEqual(full)
    expect(asPlatformSignals({ headers: {}, nextAssets: false, cookieNames: [1, 'csrftoken'] })).toEqual({
      headers: {},
      nextAssets: false,
      cookieNames: ['csrftoken'],
    })
  })
})

describe('signalsFromReport: reports recorded without signals', () => {
  const report = (checks: Array<{ id: string; evidence: Record<string, unknown> }>) => ({ checks })

  test('an unversioned Server header kept in version-disclosure evidence', () => {
    const d = detectFromSignals(
      signalsFromReport(report([{ id: 'version-disclosure', evidence: { url: 'https://a/', disclosures: [], server: 'Netlify' } }])),
    )
    expect(d).toMatchObject({ platform: 'netlify', detectedFrom: ['server: Netlify'] })
  })

  test('versioned Server and X-Powered-By disclosures', () => {
    const signals = signalsFromReport(
      report([
        {
          id: 'version-disclosure',
          evidence: {
            disclosures: [
              { name: 'Server', value: 'nginx/1.18.0 (Ubuntu)', version: '1.18.0' },
              { name: 'x-powered-by', value: 'Next.js', version: null },
              { name: 'meta generator', value: 'WordPress 6.4.2', version: '6.4.2' },
            ],
          },
        },
      ]),
    )
    expect(signals.headers).toEqual({ server: 'nginx/1.18.0 (Ubuntu)', 'x-powered-by': 'Next.js' })
    expect(detectFromSignals(signals)).toMatchObject({ platform: 'nextjs', alsoDetected: ['nginx'] })
  })

  test('script URLs in any evidence reveal Next.js assets', () => {
    const secrets = signalsFromReport(
      report([
        {
          id: 'js-secrets',
          evidence: { findings: [{ kind: 'stripe-secret-key', script: 'https://a.example/_next/static/chunks/app.js' }] },
        },
      ]),
    )
    expect(secrets.nextAssets).toBe(true)
    const mixed = signalsFromReport(
      report([{ id: 'mixed-content', evidence: { active: [{ url: 'http://a.example/_next/static/x.js' }] } }]),
    )
    expect(mixed.nextAssets).toBe(true)
  })

  test('text that is not a URL does not count as Next.js assets', () => {
    expect(
      signalsFromReport(report([{ id: 'x', evidence: { note: 'see /_next/static/ docs', other: 'mentions __NEXT_DATA__' } }])).nextAssets,
    ).toBe(false)
  })

  test('a report with nothing to go on is generic', () => {
    expect(detectFromSignals(signalsFromReport(report([{ id: 'csp', evidence: { header: null } }]))).platform).toBe('generic')
    expect(detectFromSignals(signalsFromReport({})).platform).toBe('generic')
  })
})

// Realistic responses of the servers and frameworks fix briefs are written for (headers as Bun/fetch report
// them, lower-cased; Set-Cookie lines as sent; the bodies these servers send for an unknown path).
const APACHE_404 =
  '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n' +
  '<p>The requested URL was not found on this server.</p>\n<hr>\n<address>Apache/2.4.62 (Debian) Server at shop.example Port 443</address>\n</body></html>\n'
const APACHE_404_NO_SIGNATURE =
  '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n' +
  '<p>The requested URL was not found on this server.</p>\n</body></html>\n'
const EXPRESS_404 =
  '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n' +
  '<pre>Cannot GET /__appaudit_probe_4f1c9e2b__</pre>\n</body>\n</html>\n'
const DJANGO_404 =
  '<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n'
const RAILS_404 =
  '<!DOCTYPE html>\n<html>\n<head>\n  <title>The page you were looking for doesn\'t exist (404)</title>\n</head>\n<body>\n  <div class="dialog">\n' +
  "    <h1>The page you were looking for doesn't exist.</h1>\n  </div>\n</body>\n</html>\n"
const IIS_404 =
  '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"><html><head><title>404 - File or directory not found.</title></head>' +
  '<body><div id="content"><h2>404 - File or directory not found.</h2></div></body></html>'

describe('servers and frameworks beyond the hosting platforms', () => {
  test('Apache with PHP (Server, X-Powered-By, PHPSESSID, the Apache 404 page) is Apache, with PHP as a hint', () => {
    const d = detectPlatform(
      {
        date: 'Wed, 25 Nov 2026 10:00:00 GMT',
        server: 'Apache/2.4.62 (Debian)',
        'x-powered-by': 'PHP/8.2.26',
        expires: 'Thu, 19 Nov 1981 08:52:00 GMT',
        'cache-control': 'no-store, no-cache, must-revalidate',
        'content-type': 'text/html; charset=UTF-8',
      },
      '<html><body><form action="/login.php"></form></body></html>',
      { setCookies: ['PHPSESSID=9f3c2b1a0e; path=/'], errorPages: [APACHE_404] },
    )
    expect(d.platform).toBe('apache')
    expect(d.detectedFrom).toEqual(['server: Apache/2.4.62 (Debian)', 'Apache error page'])
    expect(d.hints).toEqual(['x-powered-by: PHP/8.2.26', 'PHPSESSID cookie (PHP sessions)'])
  })

  test('Apache with ServerTokens Prod and no signature is still Apache', () => {
    expect(detectPlatform({ server: 'Apache' }).detectedFrom).toEqual(['server: Apache'])
    expect(detectPlatform({}, '', { errorPages: [APACHE_404_NO_SIGNATURE] }).platform).toBe('apache')
  })

  test('Apache behind Cloudflare is briefed as Apache, the origin config', () => {
    const d = detectPlatform({ server: 'cloudflare', 'cf-ray': '8e1f-FRA', 'x-powered-by': 'PHP/8.1.2' }, '', { errorPages: [APACHE_404] })
    expect(d.platform).toBe('apache')
    expect(d.alsoDetected).toEqual(['cloudflare'])
  })

  test('LiteSpeed reads .htaccess, so it is briefed as Apache', () => {
    expect(detectPlatform({ server: 'LiteSpeed', 'x-powered-by': 'PHP/8.3.7' }).platform).toBe('apache')
  })

  test.each([
    ['Express by X-Powered-By', { 'x-powered-by': 'Express' }, {}, 'express', 'x-powered-by: Express'],
    [
      'Express by its session cookie',
      {},
      { setCookies: ['connect.sid=s%3Aabc.def; Path=/; HttpOnly'] },
      'express',
      'connect.sid cookie (express-session)',
    ],
    ['Express by its 404 page', {}, { errorPages: [EXPRESS_404] }, 'express', 'Express "Cannot GET" page'],
    [
      'Django by csrftoken',
      { server: 'nginx/1.24.0' },
      { setCookies: ['csrftoken=Zx9; expires=Thu, 25 Nov 2027 10:00:00 GMT; Max-Age=31449600; Path=/; SameSite=Lax'] },
      'django',
      'csrftoken cookie',
    ],
    ['Django by its 404 page', { server: 'gunicorn' }, { errorPages: [DJANGO_404] }, 'django', 'Django 404 page'],
    [
      'Rails by its session cookie',
      { 'x-runtime': '0.012345' },
      { setCookies: ['_shop_session=abc--def; path=/; httponly; samesite=lax'] },
      'rails',
      '_shop_session cookie',
    ],
    ['Rails by its 404 page', {}, { errorPages: [RAILS_404] }, 'rails', 'Rails 404 page'],
    ['Caddy by its Server header', { server: 'Caddy' }, {}, 'caddy', 'server: Caddy'],
    ['IIS by its Server header', { server: 'Microsoft-IIS/10.0', 'x-powered-by': 'ASP.NET' }, {}, 'iis', 'server: Microsoft-IIS/10.0'],
    [
      'IIS by X-AspNet-Version behind a CDN',
      { server: 'cloudflare', 'x-aspnet-version': '4.0.30319' },
      {},
      'iis',
      'x-aspnet-version: 4.0.30319',
    ],
    [
      'IIS by ASP.NET_SessionId',
      {},
      { setCookies: ['ASP.NET_SessionId=xk2; path=/; HttpOnly; SameSite=Lax'] },
      'iis',
      'ASP.NET_SessionId cookie',
    ],
    ['IIS by its 404 page', {}, { errorPages: [IIS_404] }, 'iis', 'IIS or ASP.NET error page'],
  ] as const)('%s', (_name, headers, extras, platform, signal) => {
    const d = detectPlatform(headers as Record<string, string>, '', extras)
    expect(d.platform).toBe(platform)
    expect(d.detectedFrom).toContain(signal)
  })

  test('an app framework behind nginx is briefed as the framework: its settings apply behind any proxy', () => {
    const d = detectPlatform({ server: 'nginx/1.24.0', 'x-powered-by': 'Express' })
    expect(d.platform).toBe('express')
    expect(d.alsoDetected).toEqual(['nginx'])
  })

  test('hints alone (a sessionid cookie, a Python app server, X-Runtime) choose only when nothing names a platform', () => {
    expect(detectPlatform({}, '', { setCookies: ['sessionid=abc; HttpOnly'] }).platform).toBe('django')
    expect(detectPlatform({ server: 'WSGIServer/0.2 CPython/3.12.3' }).platform).toBe('django')
    expect(detectPlatform({ 'x-runtime': '0.004' }).platform).toBe('rails')
    const behindNginx = detectPlatform({ server: 'nginx' }, '', { setCookies: ['sessionid=abc; HttpOnly'] })
    expect(behindNginx.platform).toBe('nginx')
    expect(behindNginx.alsoDetected).toEqual(['django'])
  })

  test('a custom 404 page that only mentions a server name is no signal', () => {
    const custom = '<h1>Oops</h1><p>We run on Apache and Express, but this page is not found.</p>'
    expect(detectPlatform({}, '', { errorPages: [custom] }).platform).toBe('generic')
  })

  test('only cookie names are kept, never values, and at most 20', () => {
    const s = platformSignals({}, '', {
      setCookies: ['PHPSESSID=secret-value; path=/', ...Array.from({ length: 30 }, (_, i) => `c${i}=v`)],
    })
    expect(s.cookieNames![0]).toBe('PHPSESSID')
    expect(s.cookieNames).toHaveLength(20)
    expect(JSON.stringify(s)).not.toContain('secret-value')
  })

  test('reports recorded without signals: cookie names in the cookie checks evidence count', () => {
    const d = detectFromSignals(
      signalsFromReport({
        checks: [{ id: 'cookie-secure', evidence: { url: 'https://a/', cookies: 2, withoutSecure: ['csrftoken', 'sessionid'] } }],
      }),
    )
    expect(d.platform).toBe('django')
    expect(d.detectedFrom).toEqual(['csrftoken cookie', 'sessionid cookie'])
  })
})
