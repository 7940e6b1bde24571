import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { adviseCsp } from '../../../../api/patches/csp-policy.ts'
import { csp } from '../../../../shared/checks/security/csp.ts'
import type { InlineCode, InlineItem } from '../../../../shared/checks/types.ts'
import {
  asPageSources,
  buildCsp,
  CSP_LIMITS,
  cspAdviceText,
  cspHash,
  pageSources,
  safeOrigin,
  type PageSources,
} from '../../../../shared/checks/util/csp-builder.ts'
import { makeArtifacts, request, SITE, withHeaders } from '../artifacts.ts'

const item = (text: string): InlineItem => ({ sha256: createHash('sha256').update(text).digest('base64'), length: text.length, text })

function inline(
  parts: Partial<{ scripts: string[]; nonced: string[]; handlers: string[]; styles: string[]; styleAttributes: string[] }>,
): InlineCode {
  const scripts = [
    ...(parts.scripts ?? []).map((t) => ({ ...item(t), nonce: false })),
    ...(parts.nonced ?? []).map((t) => ({ ...item(t), nonce: true })),
  ]
  return {
    scripts,
    scriptCount: scripts.length,
    handlers: (parts.handlers ?? []).map(item),
    handlerCount: parts.handlers?.length ?? 0,
    handlerNames: parts.handlers?.length ? ['onclick'] : [],
    styles: (parts.styles ?? []).map(item),
    styleCount: parts.styles?.length ?? 0,
    styleAttributes: (parts.styleAttributes ?? []).map(item),
    styleAttributeCount: parts.styleAttributes?.length ?? 0,
  }
}

const directive = (policy: string, name: string) => policy.split('; ').find((d) => d.split(' ')[0] === name) ?? null

const sourcesOf = (code: InlineCode, html: string | null = null, requests = [request(SITE, 'document')]) =>
  pageSources({ pageUrl: SITE, requests, inline: code, serverHtml: html })

describe('cspHash and safeOrigin', () => {
  test('hashes as CSP does: base64 SHA-256 of the UTF-8 text (the CSP specification example)', () => {
    expect(cspHash("alert('Hello, world.');")).toBe("'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='")
  })

  test('keeps plain origins with their port and refuses anything that could inject into a policy', () => {
    expect(safeOrigin('https://cdn.example.com/lib.js?v=1')).toBe('https://cdn.example.com')
    expect(safeOrigin('http://localhost:8123/a')).toBe('http://localhost:8123')
    expect(safeOrigin('wss://rt.example.com/socket')).toBe('wss://rt.example.com')
    expect(safeOrigin('https://[::1]:8443/')).toBe('https://[::1]:8443')
    for (const bad of [
      'data:image/png;base64,AAA',
      'blob:https://a.example/1',
      'chrome-extension://abc/x.js',
      'not a url',
      'ftp://a.example/',
    ]) {
      expect(safeOrigin(bad)).toBeNull()
    }
  })
})

describe('pageSources: what the page loads and runs', () => {
  test('groups other origins by directive, leaving out the site itself, redirects and what no directive governs', () => {
    const s = sourcesOf(inline({}), null, [
      request(SITE, 'document'),
      request('https://example.com/app.js', 'script'),
      request('https://cdn.example.net/lib.js', 'script'),
      request('https://cdn.example.net/lib2.js', 'script'),
      request('https://fonts.example.org/a.css', 'stylesheet'),
      request('https://fonts.example.org/a.woff2', 'font'),
      request('https://img.example.org/a.png', 'image'),
      request('https://api.example.org/v1', 'fetch'),
      request('wss://rt.example.org/s', 'websocket'),
      request('https://www.youtube-nocookie.com/embed/x', 'document'),
      request('https://old.example.com/', 'document', { status: 301 }),
      request('https://t.example.org/ping', 'ping'),
    ])
    expect(s.origins).toEqual({
      'script-src': ['https://cdn.example.net'],
      'style-src': ['https://fonts.example.org'],
      'font-src': ['https://fonts.example.org'],
      'img-src': ['https://img.example.org'],
      'connect-src': ['https://api.example.org', 'wss://rt.example.org'],
      'frame-src': ['https://www.youtube-nocookie.com'],
    })
  })

  test('at most 20 origins per directive', () => {
    const many = Array.from({ length: 40 }, (_, i) => request(`https://img${i}.example.org/a.png`, 'image'))
    expect(sourcesOf(inline({}), null, many).origins['img-src']).toHaveLength(CSP_LIMITS.originsPerDirective)
  })

  test('an inline script the server HTML does not hold as it is counts as dynamic (line endings aside)', () => {
    const html = '<script>\r\nwindow.a = 1\r\n</script><script>window.b = 2</script>'
    const s = sourcesOf(inline({ scripts: ['\nwindow.a = 1\n', 'window.b = 2', "window.csrf = 'f00d'"] }), html)
    expect(s.scripts).toMatchObject({ count: 3, dynamic: 1 })
    expect(sourcesOf(inline({ scripts: ["window.csrf = 'f00d'"] }), null).scripts.dynamic).toBe(0)
  })
})

describe('buildCsp', () => {
  const base = (code: InlineCode, requests = [request(SITE, 'document')]) => buildCsp(sourcesOf(code, null, requests))

  test('a page with nothing inline and nothing from elsewhere gets the strict base', () => {
    expect(base(inline({})).policy).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
        "object-src 'none'; base-uri 'self'; frame-ancestors 'self'",
    )
  })

  test('each inline script is allowed by its hash, never by unsafe-inline', () => {
    const a = base(inline({ scripts: ['window.a = 1', 'window.b = 2'] }), [
      request(SITE, 'document'),
      request('https://cdn.example.net/x.js', 'script'),
    ])
    expect(a.mode).toBe('hashes')
    expect(directive(a.policy, 'script-src')).toBe(
      `script-src 'self' https://cdn.example.net ${cspHash('window.a = 1')} ${cspHash('window.b = 2')}`,
    )
    expect(a.notes.join(' ')).toContain('SHA-256')
  })

  test('inline event handlers get unsafe-hashes and their hashes, with a note; too many different ones only a note', () => {
    const few = base(inline({ handlers: ['go()', 'stop()'] }))
    expect(directive(few.policy, 'script-src')).toBe(`script-src 'self' 'unsafe-hashes' ${cspHash('go()')} ${cspHash('stop()')}`)
    expect(few.notes.join(' ')).toContain('addEventListener')
    const many = base(inline({ handlers: Array.from({ length: 12 }, (_, i) => `go(${i})`) }))
    expect(directive(many.policy, 'script-src')).toBe("script-src 'self'")
    expect(many.notes.join(' ')).toMatch(/this policy blocks them/)
  })

  test('style blocks by hash; style attributes by hash with unsafe-hashes, or unsafe-inline for styles only when there are many', () => {
    const few = base(inline({ styles: ['p{color:red}'], styleAttributes: ['color: red'] }))
    expect(directive(few.policy, 'style-src')).toBe(`style-src 'self' 'unsafe-hashes' ${cspHash('p{color:red}')} ${cspHash('color: red')}`)
    const many = base(inline({ scripts: ['x()'], styles: ['p{}'], styleAttributes: Array.from({ length: 15 }, (_, i) => `width: ${i}px`) }))
    expect(directive(many.policy, 'style-src')).toBe("style-src 'self' 'unsafe-inline'")
    expect(directive(many.policy, 'script-src')).not.toContain("'unsafe-inline'")
  })

  test.each([
    ['many inline scripts', inline({ scripts: Array.from({ length: CSP_LIMITS.scriptHashes + 1 }, (_, i) => `s(${i})`) }), null],
    ['a script made per response', inline({ scripts: ["window.t = 'a81f'"] }), "<script>window.t = '77c0'</script>"],
    ['scripts that already carry a nonce', inline({ nonced: ['boot()'] }), '<script nonce="x">boot()</script>'],
  ] as const)('%s: a nonce recipe instead of hashes', (_name, code, html) => {
    const a = buildCsp(sourcesOf(code, html))
    expect(a.mode).toBe('nonce')
    expect(directive(a.policy, 'script-src')).toBe("script-src 'self' 'nonce-{NONCE}'")
    expect(a.notes[1]).toContain('fresh random value')
  })

  test('a configuration patch cannot make nonces: hashes, and a note on why they may not last', () => {
    const a = buildCsp(sourcesOf(inline({ scripts: ["window.t = 'a81f'"] }), '<p></p>'), { allowNonce: false })
    expect(a.mode).toBe('hashes')
    expect(a.policy).toContain(cspHash("window.t = 'a81f'"))
    expect(a.notes.join(' ')).toContain('cannot make a nonce')
  })

  test('no combination of inputs puts unsafe-inline in script-src', () => {
    for (const scripts of [0, 3, 20])
      for (const handlers of [0, 2, 12])
        for (const attrs of [0, 2, 15]) {
          const code = inline({
            scripts: Array.from({ length: scripts }, (_, i) => `s${i}()`),
            handlers: Array.from({ length: handlers }, (_, i) => `h${i}()`),
            styleAttributes: Array.from({ length: attrs }, (_, i) => `width:${i}px`),
          })
          expect(directive(base(code).policy, 'script-src')).not.toContain("'unsafe-inline'")
        }
  })
})

describe('stored evidence and advice texts', () => {
  const sources: PageSources = sourcesOf(inline({ scripts: ['window.a = 1'] }), '<script>window.a = 1</script>', [
    request(SITE, 'document'),
    request('https://cdn.example.net/x.js', 'script'),
  ])

  test('asPageSources reads stored evidence back and drops anything that is not a plain origin or a hash', () => {
    expect(asPageSources(JSON.parse(JSON.stringify(sources)))).toEqual(sources)
    const hostile = asPageSources({
      page: SITE,
      origins: {
        'script-src': ['https://ok.example', "https://a.example; script-src 'unsafe-inline'", 'https://b.example "x'],
        'bogus-src': ['https://c.example'],
      },
      scripts: { hashes: ["'sha256-x'; default-src *", cspHash('a')], count: 'many', dynamic: -1 },
    })!
    expect(hostile.origins).toEqual({ 'script-src': ['https://ok.example'] })
    expect(hostile.scripts).toEqual({ hashes: [cspHash('a')], count: 0, dynamic: 0, nonced: 0 })
    expect(asPageSources(null)).toBeNull()
    expect(asPageSources('policy')).toBeNull()
  })

  test('each platform gets the computed policy in its own syntax', () => {
    const advice = buildCsp(sources)
    const hash = cspHash('window.a = 1')
    expect(cspAdviceText(advice, 'apache', SITE)).toContain(`Header always set Content-Security-Policy "${advice.policy}"`)
    expect(cspAdviceText(advice, 'nginx', SITE)).toContain(`add_header Content-Security-Policy "${advice.policy}" always;`)
    expect(cspAdviceText(advice, 'caddy', SITE)).toContain(`Content-Security-Policy "${advice.policy}"`)
    expect(cspAdviceText(advice, 'iis', SITE)).toContain(`<add name="Content-Security-Policy" value="${advice.policy}" />`)
    expect(cspAdviceText(advice, 'express', SITE)).toContain(`res.setHeader("Content-Security-Policy", ${JSON.stringify(advice.policy)})`)
    expect(cspAdviceText(advice, 'django', SITE)).toContain(`"script-src": ["'self'", "https://cdn.example.net", "${hash}"]`)
    expect(cspAdviceText(advice, 'rails', SITE)).toContain(`policy.script_src :self, "https://cdn.example.net", "${hash}"`)
    expect(cspAdviceText(advice, 'rails', SITE)).toContain('policy.object_src :none')
    const generic = cspAdviceText(advice, 'generic', SITE)
    expect(generic.split('\n')[1]).toBe(advice.policy)
  })

  test('nonce mode: the app platforms get a recipe, static servers are told a nonce must come from the app', () => {
    const nonce = buildCsp(sourcesOf(inline({ nonced: ['boot()'] })))
    expect(cspAdviceText(nonce, 'express', SITE)).toContain("crypto.randomBytes(16).toString('base64')")
    expect(cspAdviceText(nonce, 'django', SITE)).toContain('request.csp_nonce')
    expect(cspAdviceText(nonce, 'rails', SITE)).toContain('content_security_policy_nonce_generator')
    expect(cspAdviceText(nonce, 'apache', SITE)).toContain('cannot make a fresh nonce')
  })
})

describe('the csp check records the page sources when it fails or warns', () => {
  const page = (code: InlineCode) => ({
    inline: code,
    requests: [request(SITE, 'document'), request('https://cdn.example.net/x.js', 'script')],
  })

  test('a failing check carries them, and its advice is the computed policy', () => {
    const artifacts = makeArtifacts({
      mainResponse: { ...withHeaders({ 'content-security-policy': null }), body: '<script>window.a = 1</script>' },
      page: page(inline({ scripts: ['window.a = 1'] })),
    })
    const out = csp.run(artifacts)
    expect(out.status).toBe('fail')
    const sources = asPageSources(out.evidence.pageSources)!
    expect(sources.scripts).toMatchObject({ count: 1, dynamic: 0, hashes: [cspHash('window.a = 1')] })
    const advice = csp.advise!({ status: out.status, evidence: out.evidence }, 'generic')!
    expect(advice).toContain(`script-src 'self' https://cdn.example.net ${cspHash('window.a = 1')}`)
  })

  test('a passing check carries none and advises nothing', () => {
    const out = csp.run(makeArtifacts({ page: page(inline({ scripts: ['window.a = 1'] })) }))
    expect(out.status).toBe('pass')
    expect(out.evidence.pageSources).toBeUndefined()
    expect(csp.advise!({ status: 'pass', evidence: out.evidence }, 'apache')).toBeNull()
  })

  test('patches use the same builder (hash form) when the report has the sources, and the old one otherwise', () => {
    const artifacts = makeArtifacts({
      mainResponse: withHeaders({ 'content-security-policy': null }),
      page: page(inline({ scripts: ['window.a = 1'] })),
    })
    const out = csp.run(artifacts)
    const patch = adviseCsp({ checks: [{ id: 'csp', status: 'fail', evidence: out.evidence }] })
    expect(patch.policy).toBe(buildCsp(asPageSources(out.evidence.pageSources)!, { allowNonce: false }).policy)
    expect(adviseCsp({ checks: [] }).policy).toContain("form-action 'self'")
  })
})

describe('advice that fits the site', () => {
  const pageWith = (path: string, requests: ReturnType<typeof request>[], headers: Record<string, string | null> = {}) =>
    csp.run(
      makeArtifacts({
        mainResponse: { ...withHeaders({ 'content-security-policy': null, ...headers }), url: new URL(path, SITE).href },
        page: { finalUrl: new URL(path, SITE).href, requests: [request(new URL(path, SITE).href, 'document'), ...requests] },
      }),
    )

  test('a site that already sends Report-Only is told to compare its reports, not to try Report-Only', () => {
    const r = pageWith('/', [], { 'content-security-policy-report-only': "default-src 'self'; report-uri /csp" })
    const advice = csp.advise!(r, 'generic')!
    expect(advice).toContain('already sends Content-Security-Policy-Report-Only')
    expect(advice).not.toContain('Try it first')
    expect(csp.advise!(pageWith('/', []), 'generic')).toContain('Try it first')
  })

  test("an audit's computed connect-src holds the API hosts every page calls", async () => {
    const { buildAuditResult } = await import('../../../../shared/report/audit-report.ts')
    const home = pageWith('/', [request('https://cdn.example.net/app.js', 'script')])
    const account = pageWith('/account', [
      request('https://api.example.org/v1/me', 'fetch'),
      request('wss://live.example.org/socket', 'websocket'),
    ])
    const page = (path: string, r: typeof home) => ({
      url: new URL(path, SITE).href,
      finalUrl: new URL(path, SITE).href,
      depth: 0,
      httpStatus: 200,
      ok: true,
      loadMs: 1,
      checks: [{ id: 'csp', title: 'csp', category: 'security' as const, severity: 'high' as const, ...r }],
    })
    const audit = buildAuditResult(
      { auditId: 'aud_x', url: SITE, stoppedBy: 'done', pagesDiscovered: 2, finishedAt: '2026-11-29T00:00:00.000Z' },
      [page('/', home), page('/account', account)],
      [],
    )
    const finding = audit.findings.find((f) => f.checkId === 'csp')!
    expect(finding.pageCount).toBe(2)
    const connect = finding.advice.split('\n').find((l) => l.includes('connect-src')) ?? finding.advice
    expect(connect).toContain('https://api.example.org')
    expect(connect).toContain('wss://live.example.org')
    expect(finding.advice).toContain('https://cdn.example.net')
    // The page's own result is left as it was.
    expect(JSON.stringify(home.evidence)).not.toContain('api.example.org')
  })
})
