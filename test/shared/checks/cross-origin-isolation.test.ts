import { describe, expect, test } from 'bun:test'
import { crossOriginIsolation } from '../../../shared/checks/security/cross-origin-isolation.ts'
import { makeArtifacts, withHeaders } from './artifacts.ts'

const run = (headers: Record<string, string | null>, url?: string) =>
  crossOriginIsolation.run(makeArtifacts({ mainResponse: { ...withHeaders(headers), ...(url ? { url } : {}) } }))

describe('cross-origin-isolation', () => {
  test('passes with COOP same-origin and reports the other values', () => {
    const r = run({ 'cross-origin-opener-policy': 'same-origin' })
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({
      crossOriginOpenerPolicy: 'same-origin',
      crossOriginEmbedderPolicy: null,
      crossOriginIsolated: false,
    })
  })

  test('reports the page as cross-origin isolated with COOP same-origin and COEP require-corp', () => {
    const r = run({ 'cross-origin-opener-policy': 'same-origin; report-to="coop"', 'cross-origin-embedder-policy': 'require-corp' })
    expect(r.status).toBe('pass')
    expect(r.evidence.crossOriginIsolated).toBe(true)
    expect(r.summary).toContain('cross-origin isolated')
  })

  test('is information, never a finding, when no header is set', () => {
    const r = run({})
    expect(r.status).toBe('info')
    expect(r.summary).toContain('not set')
  })

  test('is information for same-origin-allow-popups and lists CORP', () => {
    const r = run({ 'cross-origin-opener-policy': 'same-origin-allow-popups', 'cross-origin-resource-policy': 'same-site' })
    expect(r.status).toBe('info')
    expect(r.evidence.crossOriginResourcePolicy).toBe('same-site')
  })

  test('reports an unrecognised value (the tokens are case-sensitive) without failing', () => {
    const r = run({ 'cross-origin-opener-policy': 'Same-Origin' })
    expect(r.status).toBe('info')
    expect(r.evidence.unrecognised).toEqual(['Cross-Origin-Opener-Policy "Same-Origin"'])
  })

  test('does not pass COOP on an http page, where browsers ignore it', () => {
    const r = run({ 'cross-origin-opener-policy': 'same-origin' }, 'http://example.com/')
    expect(r.status).toBe('info')
    expect(String(r.evidence.note)).toContain('secure context')
  })

  test('never returns fail or warn', () => {
    for (const coop of [null, 'unsafe-none', 'bogus', 'same-origin']) {
      expect(['pass', 'info']).toContain(run({ 'cross-origin-opener-policy': coop }).status)
    }
  })
})

describe('cross-origin-isolation metadata', () => {
  test('documents why, how it is confirmed, and a fix for every platform', () => {
    for (const field of [
      crossOriginIsolation.title,
      crossOriginIsolation.description,
      crossOriginIsolation.why,
      crossOriginIsolation.confirmation,
    ])
      expect(field.length).toBeGreaterThan(10)
    for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
      expect(crossOriginIsolation.fix[platform]?.length ?? 0).toBeGreaterThan(10)
    }
  })
})
