// The report view's reading of tool results (api/mcp/app/model.ts): which payload it takes, and how it
// treats each tool's shapes, errors and fields of the wrong type.
import { describe, expect, test } from 'bun:test'
import { evidenceText, modelOf, payloadOf } from '../../api/mcp/app/model.ts'

const text = (v: unknown) => ({ content: [{ type: 'text', text: JSON.stringify(v) }] })

const report = {
  id: 'scn_1',
  url: 'http://a.test/',
  finalUrl: 'http://a.test/home',
  score: 62,
  grade: 'C-',
  checksVersion: '7',
  summary: { pass: 3, fail: 2, warn: 1, info: 0, skipped: 0, error: 0 },
  checks: [
    { id: 'csp', title: 'No CSP', severity: 'high', status: 'fail', summary: 's1', evidence: { header: null }, advice: 'Send one' },
    { id: 'hsts', title: 'No HSTS', severity: 'medium', status: 'fail', summary: 's2', evidence: { header: 'x' }, advice: 'Add it' },
    { id: 'seo-title', title: 'Long title', severity: 'low', status: 'warn', summary: 's3', evidence: { title: '<b>' }, advice: 'Shorten' },
    { id: 'lang', title: 'Lang', severity: 'low', status: 'pass', summary: 'ok', evidence: {}, advice: null },
  ],
  advice: [
    { checkId: 'hsts', title: 'No HSTS', severity: 'medium', status: 'fail', impact: 20, advice: 'Add it' },
    { checkId: 'csp', title: 'No CSP', severity: 'high', status: 'fail', impact: 10, advice: 'Send one' },
  ],
  timings: {},
  createdAt: '2026-01-01T00:00:00Z',
}

describe('the report view model', () => {
  test('prefers structuredContent, falls back to the JSON text, and ignores what is not JSON', () => {
    expect(payloadOf({ structuredContent: { a: 1 }, content: [{ type: 'text', text: '{"a":2}' }] }).payload).toEqual({ a: 1 })
    expect(payloadOf(text({ a: 2 })).payload).toEqual({ a: 2 })
    expect(payloadOf({ content: [{ type: 'text', text: 'not json' }] }).payload).toBeNull()
    expect(modelOf({ content: [{ type: 'text', text: '[1,2]' }] })).toBeNull()
  })

  test('a scan report: advice order first, then failing checks advice left out, each with evidence and fix', () => {
    const m = modelOf(text(report))!
    expect(m).toMatchObject({ kind: 'scan', state: 'completed', id: 'scn_1', score: 62, grade: 'C-', finalUrl: 'http://a.test/home' })
    expect(m.findings.map((f) => f.checkId)).toEqual(['hsts', 'csp', 'seo-title'])
    expect(m.findings[0]).toMatchObject({ impact: 20, fix: 'Add it', summary: 's2', evidence: { header: 'x' } })
    expect(m.findings[2]).toMatchObject({ impact: null, fix: 'Shorten', evidence: { title: '<b>' } })
  })

  test('get_scan: running without a report, completed with one', () => {
    expect(modelOf(text({ scanId: 'scn_2', url: 'http://a.test/', status: 'running' }))).toMatchObject({
      kind: 'scan',
      state: 'running',
      id: 'scn_2',
      score: null,
      findings: [],
    })
    expect(modelOf(text({ scanId: 'scn_2', url: 'http://a.test/', status: 'completed', report }))).toMatchObject({ score: 62, id: 'scn_2' })
  })

  test("get_audit's summary is marked incomplete; a findings section is whole; a tool error keeps its message", () => {
    const summary = modelOf(
      text({
        auditId: 'aud_1',
        url: 'http://a.test/',
        status: 'completed',
        progress: { pagesDiscovered: 3, pagesScanned: 3, pagesFailed: 0, currentUrl: null },
        result: {
          score: 70,
          grade: 'C',
          findingCounts: { total: 9 },
          topFindings: [
            { checkId: 'csp', title: 'No CSP', severity: 'high', status: 'fail', impact: 10, pageCount: 3, examplePages: ['a', 'b'] },
          ],
        },
      }),
    )!
    expect(summary).toMatchObject({ kind: 'audit', score: 70, findingsTotal: 9, findingsComplete: false })
    expect(summary.findings[0]).toMatchObject({ pageCount: 3, pages: ['a', 'b'], fix: '' })

    const section = modelOf(
      text({
        auditId: 'aud_1',
        url: 'u',
        status: 'completed',
        score: 70,
        grade: 'C',
        section: 'findings',
        total: 1,
        items: [{ checkId: 'csp', advice: 'fix', evidence: { a: 1 }, pages: ['a'] }],
      }),
    )!
    expect(section.findingsComplete).toBe(true)
    expect(section.findings[0]).toMatchObject({ fix: 'fix', evidence: { a: 1 }, pages: ['a'] })

    const error = modelOf({ ...text({ error: { code: 'not_found', message: 'No audit aud_9' } }), isError: true })!
    expect(error).toMatchObject({ state: 'error', message: 'No audit aud_9' })
  })

  test('fields of the wrong type are dropped, never passed on', () => {
    const m = modelOf(text({ ...report, score: '100', grade: { x: 1 }, advice: [{ checkId: 'csp', title: 5, impact: 'big' }] }))!
    expect(m.score).toBeNull()
    expect(m.grade).toBe('')
    expect(m.findings[0]).toMatchObject({ checkId: 'csp', title: 'No CSP', impact: null })
  })

  test('evidence values become capped text', () => {
    expect(evidenceText('<script>')).toBe('<script>')
    expect(evidenceText({ a: [1, 2] })).toBe('{"a":[1,2]}')
    expect(evidenceText('x'.repeat(2500))).toEndWith('… (500 more characters)')
  })
})
