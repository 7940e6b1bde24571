import { describe, expect, test } from 'bun:test'
import { httpsRedirect } from '../../../shared/checks/https/https-redirect.ts'
import type { RedirectChain, RedirectHop } from '../../../shared/checks/types.ts'
import { makeArtifacts } from './artifacts.ts'

const chain = (hops: RedirectHop[], finalUrl: string | null, error: string | null = null): RedirectChain => ({
  startUrl: 'http://example.com/',
  hops,
  finalUrl,
  error,
})
const run = (c: RedirectChain | null) => httpsRedirect.run(makeArtifacts({ httpRedirect: c }))

describe('https-redirect', () => {
  test('passes a direct redirect to https on the same host, with the hops as evidence', () => {
    const r = run(
      chain(
        [
          { url: 'http://example.com/', status: 301, location: 'https://example.com/' },
          { url: 'https://example.com/', status: 200, location: null },
        ],
        'https://example.com/',
      ),
    )
    expect(r.status).toBe('pass')
    expect(r.evidence.hops).toEqual([
      { url: 'http://example.com/', status: 301, location: 'https://example.com/' },
      { url: 'https://example.com/', status: 200, location: null },
    ])
  })

  test('passes https on the same host, then on to www', () => {
    const r = run(
      chain(
        [
          { url: 'http://example.com/', status: 308, location: 'https://example.com/' },
          { url: 'https://example.com/', status: 301, location: 'https://www.example.com/' },
        ],
        'https://www.example.com/',
      ),
    )
    expect(r.status).toBe('pass')
  })

  test('warns when the first hop goes to another host before https', () => {
    const r = run(
      chain(
        [
          { url: 'http://example.com/', status: 301, location: 'http://www.example.com/' },
          { url: 'http://www.example.com/', status: 301, location: 'https://www.example.com/' },
        ],
        'https://www.example.com/',
      ),
    )
    expect(r.status).toBe('warn')
    expect(String(r.evidence.note)).toContain('same host first')
  })

  test('resolves a relative Location against the hop', () => {
    expect(
      run(chain([{ url: 'http://example.com/', status: 301, location: '//example.com/home' }], 'https://example.com/home')).status,
    ).toBe('warn')
    expect(
      run(chain([{ url: 'http://example.com/', status: 302, location: 'https://example.com/home' }], 'https://example.com/home')).status,
    ).toBe('pass')
  })

  test('fails when the http form answers 200 without redirecting', () => {
    const r = run(chain([{ url: 'http://example.com/', status: 200, location: null }], 'http://example.com/'))
    expect(r.status).toBe('fail')
  })

  test('fails a chain that ends on http', () => {
    expect(
      run(chain([{ url: 'http://example.com/', status: 301, location: 'http://example.com/home' }], 'http://example.com/home')).status,
    ).toBe('fail')
  })

  test('fails a redirect loop', () => {
    expect(
      run(chain([{ url: 'http://example.com/', status: 301, location: 'https://example.com/' }], null, 'too many redirects')).status,
    ).toBe('fail')
    expect(
      run(chain([{ url: 'http://example.com/', status: 301, location: 'https://example.com/' }], null, 'more than 10 redirects')).status,
    ).toBe('fail')
  })

  test('is skipped when the http form is unreachable, and says why', () => {
    const r = run(chain([], null, 'unreachable: connection refused'))
    expect(r.status).toBe('skipped')
    expect(String(r.evidence.reason)).toContain('connection refused')
  })

  test('passes when the chain reached https on the same host but the https page did not answer', () => {
    expect(
      run(chain([{ url: 'http://example.com/', status: 301, location: 'https://example.com/' }], null, 'target_unreachable: timeout'))
        .status,
    ).toBe('pass')
  })

  test('is skipped when there is no http chain', () => {
    expect(run(null).status).toBe('skipped')
  })
})
