// What a caller reads when its tool arguments are wrong: each argument named once, with what it got and what
// it takes, and the tool that reads an id of another kind; a target URL of another scheme, or without a host,
// with what to send. Pure functions over the real tools' input schemas.
import { describe, expect, test } from 'bun:test'
import { argumentProblems } from '../../../api/mcp/arg-errors.ts'
import { findTool } from '../../../api/mcp/tools/registry.ts'
import { findUnusableUrl, urlHint } from '../../../api/mcp/url-hints.ts'

const problems = (tool: string, args: unknown) => argumentProblems(findTool(tool)!.input, args)

describe('argumentProblems', () => {
  test('a missing argument is named once, as required, with what it takes', () => {
    const found = problems('scan_app', {})
    expect(found.map((p) => p.path)).toEqual(['/url'])
    expect(found[0]!.message).toStartWith('is required: a string')
    expect(found[0]!.message).toContain('e.g. https://example.com/')
  })

  test('a single value where a list is taken names the allowed values, what came, and the list to send', () => {
    const [p] = problems('get_findings', { scanId: 'scn_abc', status: 'fail' })
    expect(p!.path).toBe('/status')
    expect(p!.message).toContain('a list of: pass, fail, warn, info, skipped, error')
    expect(p!.message).toContain('got "fail" (a string)')
    expect(p!.message).toContain('send ["fail"]')
  })

  test('a value outside an enum lists the allowed values and what came', () => {
    const [p] = problems('export_report', { scanId: 'scn_abc', format: 'pdf' })
    expect(p).toEqual({ path: '/format', message: 'must be one of: sarif, junit, markdown, html; got "pdf" (a string)' })
  })

  test('an audit id given to get_scan points to get_audit; to get_findings, to its auditId argument', () => {
    expect(problems('get_scan', { scanId: 'aud_abc' })[0]!.message).toContain('"aud_abc" is an audit id: read it with get_audit (auditId)')
    expect(problems('get_audit', { auditId: 'scn_abc' })[0]!.message).toContain('read it with get_scan (scanId)')
    expect(problems('get_findings', { scanId: 'aud_abc' })[0]!.message).toContain('pass it as auditId')
  })

  test('an unknown argument lists the arguments the tool takes', () => {
    expect(problems('scan_app', { url: 'https://a.example/', bogus: 1 })).toEqual([
      { path: '/bogus', message: expect.stringContaining('the arguments are: url') },
    ])
    expect(problems('get_account', { surprise: true })[0]!.message).toContain('pass {}')
  })

  test('a number out of range says the range and what came', () => {
    expect(problems('audit_app', { url: 'https://a.example/', options: { maxPages: 0 } })).toEqual([
      { path: '/options/maxPages', message: expect.stringMatching(/^must be an integer from 1 to \d+; got 0 \(a number\)$/) },
    ])
  })

  test('reads no further than the errors it reports: a huge wrong argument costs a bounded number of them', () => {
    const urls = Array.from({ length: 5000 }, () => 42)
    expect(problems('start_directory_run', { urls }).length).toBeLessThanOrEqual(20)
  })
})

describe('urlHint', () => {
  test('another scheme gets the http(s) URL to send, http for a loopback host', () => {
    expect(urlHint('ftp://example.com/x')).toMatchObject({ suggestion: 'https://example.com/x' })
    expect(urlHint('ftp://example.com/x')!.message).toContain('uses ftp://')
    expect(urlHint('ws://localhost:3000/')).toMatchObject({ suggestion: 'http://localhost:3000/' })
    expect(urlHint('ftp://user:pw@example.com/')).toMatchObject({ suggestion: 'https://example.com/' })
  })

  test('a scheme without a host says to send the whole address', () => {
    for (const raw of ['http://', 'https://', 'http:///']) {
      const hint = urlHint(raw)
      expect(hint).toMatchObject({ suggestion: null })
      expect(hint!.message).toContain('has no host')
      expect(hint!.message).toEndWith('Nothing was started.')
    }
  })

  test('a usable URL, or one without a scheme (answered elsewhere), has no hint', () => {
    for (const raw of ['https://example.com/', 'http://127.0.0.1:3000/', 'example.com', 'localhost:3000']) expect(urlHint(raw)).toBeNull()
  })

  test('findUnusableUrl names the argument, in a list too', () => {
    expect(findUnusableUrl({ urls: ['https://a.example/', 'ftp://b.example/'] })).toMatchObject({
      path: '/urls/1',
      suggestion: 'https://b.example/',
      message: expect.stringMatching(/^urls\[1\]: "ftp:\/\/b.example\/" uses ftp:\/\//),
    })
    expect(findUnusableUrl({ url: 'https://a.example/' })).toBeNull()
  })
})
