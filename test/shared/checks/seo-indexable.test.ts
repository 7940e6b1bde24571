import { describe, expect, test } from 'bun:test'
import { parseRobotsHeader, seoIndexable } from '../../../shared/checks/seo/seo-indexable.ts'
import { GOOD_HEADERS, makeArtifacts, request, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const withHead = (head: string) => `<html lang="en"><head><title>T</title>${head}</head><body></body></html>`
const withDocumentHeaders = (headers: Record<string, string>, head = '') =>
  makeArtifacts({
    page: { html: withHead(head), requests: [request(SITE, 'document', { headers: { 'content-type': 'text/html', ...headers } })] },
  })

describe('seo-indexable', () => {
  test('passes a page without robots directives', () => {
    const r = seoIndexable.run(makeArtifacts())
    expect(r.status).toBe('pass')
  })

  test('warns on <meta name="robots" content="noindex">, with the tag as evidence and a pre-launch note', () => {
    const r = seoIndexable.run(makeArtifacts({ page: { html: withHead('<meta name="robots" content="noindex, nofollow">') } }))
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('<meta name="robots" content="noindex">')
    expect(r.summary).toContain('before launch')
    expect(r.evidence.noindex).toEqual([{ source: 'meta', agent: 'all', value: 'noindex' }])
  })

  test('warns on a crawler-specific meta tag and on content="none"', () => {
    expect(seoIndexable.run(makeArtifacts({ page: { html: withHead('<meta name="googlebot" content="noindex">') } })).summary).toContain(
      'googlebot',
    )
    expect(seoIndexable.run(makeArtifacts({ page: { html: withHead('<meta name="ROBOTS" content="NONE">') } })).status).toBe('warn')
  })

  test('warns on X-Robots-Tag: noindex on the page response, from the browser or the plain-HTTP response', () => {
    const browser = seoIndexable.run(withDocumentHeaders({ 'x-robots-tag': 'noindex' }))
    expect(browser.status).toBe('warn')
    expect(browser.evidence.xRobotsTag).toBe('noindex')
    const plain = seoIndexable.run(
      makeArtifacts({ mainResponse: { headers: { ...GOOD_HEADERS, 'x-robots-tag': 'googlebot: noindex' } }, page: { requests: [] } }),
    )
    expect(plain.status).toBe('warn')
    expect(plain.summary).toContain('googlebot')
  })

  test('nofollow, noarchive and unavailable_after alone keep the page indexable', () => {
    const r = seoIndexable.run(
      withDocumentHeaders(
        { 'x-robots-tag': 'unavailable_after: 25 Jun 2030 15:00:00 PST, noarchive' },
        '<meta name="robots" content="nofollow">',
      ),
    )
    expect(r.status).toBe('pass')
    expect(r.summary).toContain('nofollow')
  })

  test('a page-level "noindex, follow" for every crawler is a per-page choice: low, and says so', () => {
    const r = runCheck(seoIndexable, makeArtifacts({ page: { html: withHead('<meta name="robots" content="noindex,follow"/>') } }))
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('low')
    expect(r.summary).toContain('per-page choice')
    // The same words with nofollow beside them, in a header, for a named crawler, or as "none" stay medium.
    for (const html of [
      withHead('<meta name="robots" content="noindex, follow, nofollow">'),
      withHead('<meta name="googlebot" content="noindex, follow">'),
      withHead('<meta name="robots" content="none, follow">'),
    ]) {
      const blanket = runCheck(seoIndexable, makeArtifacts({ page: { html } }))
      expect([blanket.status, blanket.severity]).toEqual(['warn', 'medium'])
    }
    const header = runCheck(
      seoIndexable,
      withDocumentHeaders({ 'x-robots-tag': 'noindex' }, '<meta name="robots" content="noindex, follow">'),
    )
    expect([header.status, header.severity]).toEqual(['warn', 'medium'])
  })

  test('a sign-in page kept out of search results passes, whatever the directive', () => {
    const login = (head: string) =>
      `<html lang="en"><head><title>Log in</title>${head}</head><body><form method="post"><input name="u">` +
      '<input type="Password" name="p"></form></body></html>'
    for (const head of ['<meta name="robots" content="noindex,nofollow,notranslate">', '<meta name="robots" content="none">']) {
      const r = runCheck(seoIndexable, makeArtifacts({ page: { html: login(head) } }))
      expect(r.status).toBe('pass')
      expect(r.summary).toContain('sign-in page')
      expect(r.evidence.signInPage).toBe(true)
    }
    // A password field named in text is not one.
    const text = withHead('<meta name="robots" content="noindex">').replace('<body>', '<body><p>&lt;input type="password"&gt;</p>')
    expect(runCheck(seoIndexable, makeArtifacts({ page: { html: text } })).status).toBe('warn')
  })

  test('parses agent-prefixed X-Robots-Tag values', () => {
    expect(parseRobotsHeader('googlebot: nofollow, otherbot: noindex, nofollow')).toEqual([
      { agent: 'googlebot', directive: 'nofollow' },
      { agent: 'otherbot', directive: 'noindex' },
      { agent: 'otherbot', directive: 'nofollow' },
    ])
    expect(parseRobotsHeader('max-snippet: 20, noindex')).toEqual([
      { agent: 'all', directive: 'max-snippet: 20' },
      { agent: 'all', directive: 'noindex' },
    ])
  })

  test('is skipped without a page', () => {
    expect(runCheck(seoIndexable, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})
