import { describe, expect, test } from 'bun:test'
import { hsts, parseHsts } from '../../../shared/checks/https/hsts.ts'
import { makeArtifacts, withHeaders } from './artifacts.ts'

const run = (header: string | null) => hsts.run(makeArtifacts({ mainResponse: withHeaders({ 'strict-transport-security': header }) }))

describe('hsts', () => {
  test('passes max-age of two years', () => {
    const r = run('max-age=63072000; includeSubDomains; preload')
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ maxAge: 63072000, includeSubDomains: true, preload: true })
  })

  test('reports includeSubDomains and preload as absent without failing', () => {
    const r = run('max-age=31536000')
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ includeSubDomains: false, preload: false })
    expect(r.evidence.preloadNote).toBeUndefined()
  })

  test('notes a preload directive the preload list would refuse, without failing', () => {
    const r = run('max-age=15552000; preload')
    expect(r.status).toBe('pass')
    expect(String(r.evidence.preloadNote)).toContain('includeSubDomains')
  })

  test('passes exactly 180 days', () => {
    expect(run('max-age=15552000').status).toBe('pass')
  })

  test('warns when max-age is under 180 days', () => {
    expect(run('max-age=86400').status).toBe('warn')
  })

  test('fails when the header is missing on https', () => {
    expect(run(null).status).toBe('fail')
  })

  test('fails max-age=0, which removes HSTS', () => {
    expect(run('max-age=0').status).toBe('fail')
  })

  test('fails a header without max-age or with a non-numeric one', () => {
    expect(run('includeSubDomains').status).toBe('fail')
    expect(run('max-age=forever').status).toBe('fail')
  })

  test('fails a repeated directive as malformed', () => {
    expect(parseHsts('max-age=1; max-age=2').error).toContain('twice')
  })

  test('accepts a quoted max-age and case-insensitive names', () => {
    expect(parseHsts('Max-Age="31536000"; INCLUDESUBDOMAINS')).toMatchObject({ maxAge: 31536000, includeSubDomains: true, error: null })
  })

  test('warns when the header is repeated: a single line holding a comma is ignored by browsers', () => {
    const r = run('max-age=63072000, max-age=63072000')
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('medium')
    expect(String(r.evidence.note)).toContain('comma')
  })

  test('still fails a repeated header whose first value turns HSTS off', () => {
    expect(run('max-age=0, max-age=63072000').status).toBe('fail')
  })

  test('is skipped for a site whose final URL is http, and says why', () => {
    const r = hsts.run(
      makeArtifacts({
        target: { url: 'http://example.com/', finalUrl: 'http://example.com/', scheme: 'http' },
        mainResponse: { url: 'http://example.com/' },
      }),
    )
    expect(r.status).toBe('skipped')
    expect(String(r.evidence.reason)).toContain('http')
  })
})
