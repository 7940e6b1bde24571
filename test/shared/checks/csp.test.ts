import { describe, expect, test } from 'bun:test'
import { csp } from '../../../shared/checks/security/csp.ts'
import { parseCspHeader, parseCspMeta } from '../../../shared/checks/util/csp-parser.ts'
import { makeArtifacts, SPA_HTML, withHeaders } from './artifacts.ts'

const run = (header: string | null, extra: Record<string, string | null> = {}, html = SPA_HTML) =>
  csp.run(makeArtifacts({ mainResponse: withHeaders({ 'content-security-policy': header, ...extra }), page: { html } }))

describe('csp parser', () => {
  test('reads directive names case-insensitively and ignores a repeated directive', () => {
    const [policy] = parseCspHeader("Script-Src 'self'; SCRIPT-SRC *; object-src 'none'")
    expect(policy!.directives.get('script-src')).toEqual(["'self'"])
    expect(policy!.directives.get('object-src')).toEqual(["'none'"])
  })

  test('splits a comma-joined header into separate policies', () => {
    expect(parseCspHeader("default-src *, script-src 'self'")).toHaveLength(2)
  })

  test('drops frame-ancestors from a meta policy, which browsers ignore there', () => {
    expect(parseCspMeta("script-src 'self'; frame-ancestors 'none'")!.directives.has('frame-ancestors')).toBe(false)
  })
})

describe('csp check', () => {
  test('passes a strict policy that restricts scripts, objects and base-uri', () => {
    expect(run("default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'").status).toBe('pass')
  })

  test('fails when no policy is sent', () => {
    const r = run(null)
    expect(r.status).toBe('fail')
    expect(r.evidence.header).toBeNull()
  })

  test('fails a report-only policy alone and says it is report-only', () => {
    const r = run(null, { 'content-security-policy-report-only': "default-src 'self'" })
    expect(r.status).toBe('fail')
    expect(r.evidence.reportOnly).toBe("default-src 'self'")
    expect(String(r.evidence.note)).toContain('Report-Only')
  })

  test("fails script-src 'unsafe-inline' without a nonce or hash", () => {
    const r = run("script-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'")
    expect(r.status).toBe('fail')
    expect(r.evidence.problems).toEqual(["script-src allows 'unsafe-inline' without a nonce or hash"])
  })

  test("passes 'unsafe-inline' next to a nonce, which CSP3 browsers ignore", () => {
    expect(run("script-src 'nonce-r4nd0m' 'unsafe-inline'; object-src 'none'; base-uri 'none'").status).toBe('pass')
  })

  test("passes 'unsafe-inline' next to a hash", () => {
    expect(run("script-src 'sha256-abc=' 'unsafe-inline'; object-src 'none'; base-uri 'none'").status).toBe('pass')
  })

  test("passes the strict-dynamic pattern whose https: and 'unsafe-inline' are fallbacks for old browsers", () => {
    expect(run("script-src 'nonce-abc' 'strict-dynamic' https: 'unsafe-inline'; object-src 'none'; base-uri 'none'").status).toBe('pass')
  })

  test("fails 'unsafe-eval'", () => {
    expect(run("script-src 'self' 'unsafe-eval'; object-src 'none'; base-uri 'none'").status).toBe('fail')
  })

  test('fails wildcard, https: and data: script sources', () => {
    for (const source of ['*', 'https:', 'data:', 'http:', 'https://*']) {
      expect(run(`script-src 'self' ${source}; object-src 'none'; base-uri 'none'`).status).toBe('fail')
    }
  })

  test('falls back to default-src for scripts', () => {
    expect(run("default-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'").status).toBe('fail')
  })

  test('fails a policy that does not restrict scripts at all', () => {
    const r = run("frame-ancestors 'none'; upgrade-insecure-requests")
    expect(r.status).toBe('fail')
  })

  test('keywords are case-insensitive', () => {
    expect(run("script-src 'SELF' 'UNSAFE-EVAL'; object-src 'none'; base-uri 'none'").status).toBe('fail')
  })

  test('passes when one of several policies is strict, since all of them apply', () => {
    expect(run("default-src *, script-src 'self'; object-src 'none'; base-uri 'self'").status).toBe('pass')
  })

  test("warns when object-src 'none' and base-uri are missing", () => {
    const r = run("script-src 'self'")
    expect(r.status).toBe('warn')
    expect(r.evidence.missing).toEqual(["object-src 'none'", 'base-uri'])
  })

  test("accepts default-src 'none' in place of object-src 'none'", () => {
    expect(run("default-src 'none'; script-src 'self'; base-uri 'self'").status).toBe('pass')
  })

  test('reads a policy from <meta http-equiv> when the header is missing', () => {
    const html = `<html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self'; object-src 'none'; base-uri 'self'"></head></html>`
    const r = run(null, {}, html)
    expect(r.status).toBe('pass')
    expect(r.evidence.meta).toHaveLength(1)
  })

  test('decodes entities in a meta policy', () => {
    const html = `<meta http-equiv="content-security-policy" content="script-src &#39;self&#39; &#39;unsafe-eval&#39;">`
    const r = run(null, {}, html)
    expect(r.status).toBe('fail')
    expect(r.evidence.problems).toEqual(["script-src allows 'unsafe-eval'"])
  })

  test('reports frame-ancestors in the evidence without judging it', () => {
    const withFa = run("script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'")
    expect(withFa.evidence.frameAncestors).toBe("'none'")
    const withoutFa = run("script-src 'self'; object-src 'none'; base-uri 'self'")
    expect(withoutFa.status).toBe('pass')
    expect(withoutFa.evidence.frameAncestors).toBeNull()
    expect(String(withoutFa.evidence.frameAncestorsNote)).toContain('frame-protection')
  })

  test('does not take frame-ancestors from a meta policy, where browsers ignore it', () => {
    const html = `<meta http-equiv="Content-Security-Policy" content="script-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'">`
    expect(run(null, {}, html).evidence.frameAncestors).toBeNull()
  })

  test('fails a wildcard inherited from default-src when script-src is absent', () => {
    const r = run("default-src *; object-src 'none'; base-uri 'none'")
    expect(r.status).toBe('fail')
    expect(r.evidence.problems).toEqual(['default-src allows scripts from any host: *'])
  })

  test('still judges the header when the browser could not load the page', () => {
    const r = csp.run(makeArtifacts({ page: null }))
    expect(r.status).toBe('pass')
  })
})
