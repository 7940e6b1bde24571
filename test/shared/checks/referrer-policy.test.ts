import { describe, expect, test } from 'bun:test'
import { referrerPolicy } from '../../../shared/checks/security/referrer-policy.ts'
import { makeArtifacts, SPA_HTML, withHeaders } from './artifacts.ts'

const run = (header: string | null, html = SPA_HTML) =>
  referrerPolicy.run(makeArtifacts({ mainResponse: withHeaders({ 'referrer-policy': header }), page: { html } }))

describe('referrer-policy', () => {
  test('passes the private policies', () => {
    for (const p of ['no-referrer', 'same-origin', 'strict-origin', 'strict-origin-when-cross-origin']) {
      expect(run(p).status).toBe('pass')
    }
  })

  test('warns for policies that still leak URLs or origins', () => {
    expect(run('no-referrer-when-downgrade').status).toBe('warn')
    expect(run('origin-when-cross-origin').status).toBe('warn')
  })

  test('fails unsafe-url', () => {
    expect(run('unsafe-url').status).toBe('fail')
  })

  test('warns when missing, since browsers default to strict-origin-when-cross-origin', () => {
    expect(run(null).status).toBe('warn')
  })

  test('uses the last valid token of a comma list, as browsers do', () => {
    expect(run('unsafe-url, strict-origin-when-cross-origin').status).toBe('pass')
    expect(run('no-referrer, unsafe-url, made-up').status).toBe('fail')
  })

  test('a <meta name="referrer"> overrides the header', () => {
    const r = run('unsafe-url', '<html><head><meta name="referrer" content="no-referrer"></head></html>')
    expect(r.status).toBe('pass')
    expect(r.evidence.source).toBe('meta')
  })

  test('maps the legacy meta value "always" to unsafe-url', () => {
    expect(run(null, '<meta name="referrer" content="always">').status).toBe('fail')
  })
})
