import { describe, expect, test } from 'bun:test'
import { asPlatformSignals, detectFromSignals, detectPlatform, platformSignals, signalsFromReport } from '../../shared/platform.ts'

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
    expect(detectPlatform({ server: 'Apache', 'content-type': 'text/html' }, '<html></html>')).toEqual({
      platform: 'generic',
      detectedFrom: [],
      alsoDetected: [],
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
