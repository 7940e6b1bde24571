import { describe, expect, test } from 'bun:test'
import { seoCanonical } from '../../../shared/checks/seo/seo-canonical.ts'
import { makeArtifacts, request, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const run = (head: string, finalUrl = SITE) =>
  seoCanonical.run(makeArtifacts({ page: { finalUrl, html: `<html lang="en"><head><title>T</title>${head}</head><body></body></html>` } }))

describe('seo-canonical', () => {
  test('reports a missing canonical as info', () => {
    const r = seoCanonical.run(makeArtifacts())
    expect(r.status).toBe('info')
    expect(r.evidence.canonical).toBeNull()
  })

  test('passes a canonical on the same origin, absolute or relative', () => {
    expect(run('<link rel="canonical" href="https://example.com/">').summary).toContain('its own canonical')
    const relative = run('<link href="/pricing" rel="canonical">', 'https://example.com/pricing?utm_source=x')
    expect(relative.status).toBe('pass')
    expect((relative.evidence.canonicals as Array<{ url: string }>)[0]!.url).toBe('https://example.com/pricing')
  })

  test('warns on a cross-origin canonical, including http vs https and www vs apex', () => {
    expect(run('<link rel="canonical" href="https://staging.other.dev/">').status).toBe('warn')
    expect(run('<link rel="canonical" href="http://example.com/">').status).toBe('warn')
    const www = run('<link rel="canonical" href="https://www.example.com/">')
    expect(www.status).toBe('warn')
    expect(www.summary).toContain('https://www.example.com/')
  })

  test('warns on an invalid canonical', () => {
    expect(run('<link rel="canonical" href="">').status).toBe('warn')
    expect(run('<link rel="canonical" href="javascript:alert(1)">').status).toBe('warn')
    expect(run('<link rel="canonical" href="http://[bad">').status).toBe('warn')
  })

  test('warns when canonicals disagree', () => {
    const r = run('<link rel="canonical" href="https://example.com/a"><link rel="canonical" href="https://example.com/b">')
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('2 different')
  })

  test('reads rel="canonical" from the Link header of the page response', () => {
    const artifacts = makeArtifacts({
      page: {
        requests: [
          request(SITE, 'document', {
            headers: {
              'content-type': 'text/html',
              link: '</app.css>; rel=preload; as=style, <https://other.example.net/>; rel="canonical"',
            },
          }),
        ],
      },
    })
    const r = seoCanonical.run(artifacts)
    expect(r.status).toBe('warn')
    expect(r.summary).toContain('https://other.example.net/')
  })

  test('is skipped without a page', () => {
    expect(runCheck(seoCanonical, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})

describe('seo-canonical: markup', () => {
  test('resolves a relative canonical against <base href>, and ignores markup quoted in scripts', () => {
    const r = run(
      '<base href="https://example.com/docs/"><link rel="canonical" href="intro"><script>var s = \'<link rel="canonical" href="https://evil.example/">\'</script>',
    )
    expect(r.status).toBe('pass')
    expect((r.evidence.canonicals as Array<{ url: string }>).map((c) => c.url)).toEqual(['https://example.com/docs/intro'])
  })
})
