import { describe, expect, test } from 'bun:test'
import { seoTitle } from '../../../shared/checks/seo/seo-title.ts'
import { makeArtifacts, request, SITE, SPA_HTML } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const page = (html: string, title = '') => makeArtifacts({ page: { html, title } })
const run = (html: string, title = '') => seoTitle.run(page(html, title))

describe('seo-title', () => {
  test('passes the SPA shell with a title', () => {
    const r = seoTitle.run(makeArtifacts())
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ title: 'App', length: 3, source: '<title>' })
    expect(SPA_HTML).toContain('<title>App</title>')
  })

  test('fails low when the title is missing or empty', () => {
    const missing = run('<html><head></head><body><div id="root"></div></body></html>')
    expect(missing.status).toBe('fail')
    expect(missing.summary).toContain('no <title>')
    expect(seoTitle.severity).toBe('low')
    expect(run('<html><head><title>  \n </title></head><body></body></html>').status).toBe('fail')
  })

  test('warns above 60 characters, counting decoded text', () => {
    const long = `Acme &amp; Co — ${'x'.repeat(50)}`
    const r = run(`<html><head><title>${long}</title></head><body></body></html>`)
    expect(r.status).toBe('warn')
    expect(r.evidence.length).toBe(62) // "Acme & Co — " is 12 characters once decoded
    expect(run(`<html><head><title>${'y'.repeat(60)}</title></head></html>`).status).toBe('pass')
  })

  test('a <title> inside an inline SVG in the body is not the document title', () => {
    const r = run('<html><head></head><body><svg><title>Close icon</title></svg></body></html>')
    expect(r.status).toBe('fail')
  })

  test('falls back to document.title when the DOM has no <title> element', () => {
    const r = run('<html><head></head><body></body></html>', 'Set by script')
    expect(r.status).toBe('pass')
    expect(r.evidence.source).toBe('document.title')
  })

  test('is skipped without a page and for a document that is not HTML', () => {
    expect(runCheck(seoTitle, makeArtifacts({ page: null })).status).toBe('skipped')
    const json = makeArtifacts({
      page: {
        html: '<html><head></head><body><pre>{}</pre></body></html>',
        requests: [request(SITE, 'document', { headers: { 'content-type': 'application/json' } })],
      },
    })
    expect(seoTitle.run(json).status).toBe('skipped')
  })
})
