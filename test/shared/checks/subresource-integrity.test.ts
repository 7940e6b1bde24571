import { describe, expect, test } from 'bun:test'
import { subresourceIntegrity, validIntegrityHashes } from '../../../shared/checks/security/subresource-integrity.ts'
import { documentBaseUrl, startTags } from '../../../shared/checks/util/html.ts'
import { makeArtifacts, SITE } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const HASH = 'sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC'
const page = (body: string) =>
  `<!doctype html><html><head><script type="module" src="/assets/index-3f2a.js"></script>${body}</head><body></body></html>`
/** The rendered DOM is `html`; the server's HTML is `serverHtml` (the same by default). */
const run = (html: string, serverHtml = html, finalUrl = SITE) =>
  subresourceIntegrity.run(makeArtifacts({ page: { html, finalUrl }, mainResponse: { body: serverHtml, url: finalUrl } }))

describe('startTags', () => {
  test('skips comments, script text and noscript, and keeps ">" inside quoted values', () => {
    const html = `<!-- <script src="commented.js"></script> --><script src="a.js" data-x="1>0"></script>
<script>document.write('<script src="written.js"><\\/script>')</script><noscript><script src="noscript.js"></script></noscript>
<textarea><script src="text.js"></textarea><SCRIPT SRC=b.js async></SCRIPT>`
    expect(startTags(html, ['script']).map((t) => t.attrs.src)).toEqual(['a.js', undefined, 'b.js'])
  })

  test('decodes entities in attribute values and keeps the first of a repeated attribute', () => {
    expect(startTags('<script src="/a.js?x=1&amp;y=2" src="/b.js">', ['script'])[0]!.attrs.src).toBe('/a.js?x=1&y=2')
  })

  test('does not treat <title/> inside <svg> as raw text that swallows the rest', () => {
    expect(startTags('<svg><title/></svg><script src="after.js"></script>', ['script'])).toHaveLength(1)
  })

  test('reads the document base URL from <base href>', () => {
    expect(documentBaseUrl('<head><base href="/app/"></head>', 'https://example.com/x/y')).toBe('https://example.com/app/')
    expect(documentBaseUrl('<head></head>', 'https://example.com/x/y')).toBe('https://example.com/x/y')
  })
})

describe('subresource-integrity', () => {
  test('passes a page whose scripts are all same-origin, without integrity', () => {
    const r = run(page('<script src="https://example.com/other.js"></script>'))
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ thirdParty: 0, firstParty: 2 })
  })

  test("does not count scripts from the site's own subdomains", () => {
    expect(run(page('<script src="https://static.example.com/app.js"></script>')).status).toBe('pass')
  })

  test('passes third-party scripts that carry a valid integrity hash', () => {
    const r = run(
      page(`<script src="https://cdn.jsdelivr.net/npm/lib@1.2.3/lib.min.js" integrity="${HASH}" crossorigin="anonymous"></script>`),
    )
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ thirdParty: 1, withIntegrity: 1 })
  })

  test('warns on a public CDN script without integrity and lists its URL', () => {
    const url = 'https://cdn.jsdelivr.net/npm/lib@1.2.3/lib.min.js'
    const r = run(page(`<script src="${url}"></script>`))
    expect(r.status).toBe('warn')
    expect(r.evidence.withoutIntegrity).toEqual([{ url }])
  })

  test('fails a third-party script without integrity loaded over http', () => {
    const r = run(page('<script src="http://cdn.example.net/lib.js"></script>'))
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('high')
    expect(r.evidence.withoutIntegrity).toEqual([{ url: 'http://cdn.example.net/lib.js', http: true }])
  })

  test('treats another app on the same hosting suffix as a third party', () => {
    const r = run(page('<script src="https://other-app.vercel.app/x.js"></script>'), undefined, 'https://my-app.vercel.app/')
    expect(r.status).toBe('warn')
  })

  test('treats an integrity attribute without a valid hash as missing', () => {
    const r = run(page('<script src="https://cdn.example.net/lib.js" integrity="md5-abc" crossorigin></script>'))
    expect(r.status).toBe('warn')
    expect(r.evidence.withoutIntegrity).toEqual([{ url: 'https://cdn.example.net/lib.js', invalidIntegrity: 'md5-abc' }])
  })

  test('marks scripts that other scripts inserted, and vendor loaders that cannot be pinned', () => {
    const rendered = page('<script async src="https://www.googletagmanager.com/gtag/js?id=G-123"></script>')
    const r = run(rendered, page(''))
    expect(r.status).toBe('warn')
    expect(r.evidence.withoutIntegrity).toEqual([
      { url: 'https://www.googletagmanager.com/gtag/js?id=G-123', addedAtRuntime: true, vendorManaged: true },
    ])
  })

  test('ignores third-party URLs in comments, inline script text and non-JavaScript script types', () => {
    const html = page(
      '<!-- <script src="https://cdn.example.net/old.js"></script> -->' +
        '<script>var s = "<script src=\\"https://cdn.example.net/str.js\\">"</script>' +
        '<script type="text/x-template" src="https://cdn.example.net/tpl.html"></script>',
    )
    expect(run(html).status).toBe('pass')
  })

  test('resolves protocol-relative and <base>-relative sources', () => {
    const r = run(
      '<head><base href="https://cdn.example.net/v1/"><script src="lib.js"></script><script src="//cdn2.example.org/x.js"></script></head>',
    )
    expect(r.status).toBe('warn')
    expect((r.evidence.withoutIntegrity as Array<{ url: string }>).map((s) => s.url)).toEqual([
      'https://cdn.example.net/v1/lib.js',
      'https://cdn2.example.org/x.js',
    ])
  })

  test('lists at most 20 URLs but counts them all, each URL once', () => {
    const tags = Array.from({ length: 25 }, (_, i) => `<script src="https://cdn.example.net/${i}.js"></script>`).join('')
    const r = run(page(tags + tags))
    expect(r.evidence.withoutIntegrity).toHaveLength(20)
    expect(r.evidence.withoutIntegrityCount).toBe(25)
  })

  test('notes integrity without crossorigin, which browsers block, without making it a finding', () => {
    const r = run(page(`<script src="https://cdn.example.net/lib.js" integrity="${HASH}"></script>`))
    expect(r.status).toBe('pass')
    expect(r.evidence.integrityWithoutCrossorigin).toEqual(['https://cdn.example.net/lib.js'])
  })

  test('is skipped when the browser could not load the page', () => {
    expect(runCheck(subresourceIntegrity, makeArtifacts({ page: null })).status).toBe('skipped')
  })
})

describe('validIntegrityHashes', () => {
  test('keeps sha256/384/512 expressions, with options, and drops others', () => {
    expect(validIntegrityHashes(`md5-x ${HASH} sha256-abc=?opt`)).toEqual([HASH, 'sha256-abc=?opt'])
    expect(validIntegrityHashes('')).toEqual([])
  })
})

describe('subresource-integrity metadata', () => {
  test('documents why, how it is confirmed, and a fix for every platform', () => {
    for (const field of [
      subresourceIntegrity.title,
      subresourceIntegrity.description,
      subresourceIntegrity.why,
      subresourceIntegrity.confirmation,
    ])
      expect(field.length).toBeGreaterThan(10)
    for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
      expect(subresourceIntegrity.fix[platform]?.length ?? 0).toBeGreaterThan(10)
    }
  })
})
