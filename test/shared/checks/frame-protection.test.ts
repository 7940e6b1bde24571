import { describe, expect, test } from 'bun:test'
import { frameProtection } from '../../../shared/checks/security/frame-protection.ts'
import { makeArtifacts, withHeaders } from './artifacts.ts'

const run = (csp: string | null, xfo: string | null) =>
  frameProtection.run(makeArtifacts({ mainResponse: withHeaders({ 'content-security-policy': csp, 'x-frame-options': xfo }) }))

describe('frame-protection', () => {
  test("passes frame-ancestors 'none'", () => {
    expect(run("frame-ancestors 'none'", null).status).toBe('pass')
  })

  test('passes X-Frame-Options DENY or SAMEORIGIN in any case', () => {
    expect(run(null, 'DENY').status).toBe('pass')
    expect(run(null, 'sameorigin').status).toBe('pass')
  })

  test('fails when neither is set', () => {
    expect(run(null, null).status).toBe('fail')
  })

  test('fails ALLOW-FROM as obsolete', () => {
    const r = run(null, 'ALLOW-FROM https://partner.example')
    expect(r.status).toBe('fail')
    expect(String(r.evidence.note)).toContain('obsolete')
  })

  test('frame-ancestors wins over X-Frame-Options when both are set', () => {
    expect(run('frame-ancestors *', 'DENY').status).toBe('fail')
    expect(run("frame-ancestors 'self' https://partner.example", 'ALLOW-FROM https://x').status).toBe('pass')
  })

  test('ignores frame-ancestors in a report-only policy', () => {
    const r = frameProtection.run(
      makeArtifacts({
        mainResponse: withHeaders({
          'content-security-policy': null,
          'x-frame-options': null,
          'content-security-policy-report-only': "frame-ancestors 'none'",
        }),
      }),
    )
    expect(r.status).toBe('fail')
  })
})
