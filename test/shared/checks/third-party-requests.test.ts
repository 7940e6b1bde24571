import { describe, expect, test } from 'bun:test'
import { thirdPartyRequests } from '../../../shared/checks/privacy/third-party-requests.ts'
import type { BrowserRequest } from '../../../shared/checks/types.ts'
import { makeArtifacts, request } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const WWW = 'https://www.example.com/'
const onWww = (requests: BrowserRequest[]) =>
  makeArtifacts({
    target: { url: WWW, finalUrl: WWW, origin: 'https://www.example.com', scheme: 'https' },
    mainResponse: { url: WWW },
    page: { finalUrl: WWW, requests: [request(WWW, 'document'), ...requests] },
  })
type Party = { domain: string; requests: number; types: Record<string, number>; example: string }

describe('third-party-requests', () => {
  test('passes when every request goes to the site', () => {
    const r = thirdPartyRequests.run(makeArtifacts())
    expect(r.status).toBe('pass')
    expect(r.evidence.thirdPartyDomains).toBe(0)
  })

  test('a subdomain of the same registrable domain is first-party (cdn.example.com for www.example.com)', () => {
    const r = thirdPartyRequests.run(
      onWww([
        request('https://cdn.example.com/app.js', 'script'),
        request('https://api.example.com/v1/me', 'fetch'),
        request('https://example.com/logo.svg', 'image'),
      ]),
    )
    expect(r.status).toBe('pass')
    expect(r.evidence.requests).toBe(4)
  })

  test('lists third-party registrable domains with request counts, as info', () => {
    const r = thirdPartyRequests.run(
      onWww([
        request('https://www.googletagmanager.com/gtag/js?id=G-XXXX', 'script'),
        request('https://region1.google-analytics.com/g/collect?v=2&cid=123', 'fetch'),
        request('https://region1.google-analytics.com/g/collect?v=2&cid=124', 'fetch'),
        request('https://fonts.gstatic.com/s/inter.woff2', 'font'),
        request('https://connect.facebook.net/en_US/fbevents.js', 'script', { status: 0, failure: 'net::ERR_BLOCKED_BY_CLIENT' }),
      ]),
    )
    expect(r.status).toBe('info')
    const domains = r.evidence.domains as Party[]
    expect(domains.map((d) => [d.domain, d.requests])).toEqual([
      ['google-analytics.com', 2],
      ['facebook.net', 1],
      ['googletagmanager.com', 1],
      ['gstatic.com', 1],
    ])
    expect(domains[0]!.types).toEqual({ fetch: 2 })
    expect(JSON.stringify(r.evidence)).not.toContain('cid=123')
    expect(r.summary).toContain('4 third-party domain(s)')
  })

  test('another app on the same hosting suffix is a third party', () => {
    const app = 'https://my-app.vercel.app/'
    const r = thirdPartyRequests.run(
      makeArtifacts({
        target: { url: app, finalUrl: app, origin: 'https://my-app.vercel.app', scheme: 'https' },
        mainResponse: { url: app },
        page: { finalUrl: app, requests: [request(app, 'document'), request('https://other-app.vercel.app/x.js', 'script')] },
      }),
    )
    expect((r.evidence.domains as Party[]).map((d) => d.domain)).toEqual(['other-app.vercel.app'])
  })

  test('ignores data: and blob: URLs', () => {
    expect(
      thirdPartyRequests.run(onWww([request('data:image/png;base64,AAAA', 'image'), request('blob:https://www.example.com/1', 'media')]))
        .status,
    ).toBe('pass')
  })

  test('is skipped without a page', () => {
    expect(runCheck(thirdPartyRequests, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
