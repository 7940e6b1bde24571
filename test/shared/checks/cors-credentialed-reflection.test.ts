import { describe, expect, test } from 'bun:test'
import { corsCredentialedReflection } from '../../../shared/checks/security/cors-credentialed-reflection.ts'
import { makeArtifacts } from './artifacts.ts'
import { runCheck } from '../../../shared/checks/runner.ts'

const PROBE_ORIGIN = 'https://appaudit-cors-probe.example'
const run = (headers: Record<string, string>, extra: { status?: number; error?: string | null } = {}) =>
  corsCredentialedReflection.run(makeArtifacts({ cors: { headers: { 'content-type': 'text/html', ...headers }, ...extra } }))

describe('cors-credentialed-reflection', () => {
  test('passes when the answer carries no CORS headers', () => {
    const r = run({})
    expect(r.status).toBe('pass')
    expect(r.evidence.accessControlAllowOrigin).toBeNull()
  })

  test('fails critically when the unrelated origin is reflected with credentials', () => {
    const r = run({ 'access-control-allow-origin': PROBE_ORIGIN, 'access-control-allow-credentials': 'true' })
    expect(r.status).toBe('fail')
    expect(r.severity).toBeUndefined() // the check's own severity: critical
    expect(corsCredentialedReflection.severity).toBe('critical')
    expect(r.evidence).toMatchObject({
      probeOrigin: PROBE_ORIGIN,
      accessControlAllowOrigin: PROBE_ORIGIN,
      accessControlAllowCredentials: 'true',
    })
  })

  test('warns, not fails, when the probe origin is reflected without credentials', () => {
    const r = run({ 'access-control-allow-origin': PROBE_ORIGIN })
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('medium')
  })

  test('passes "*" with credentials, which browsers refuse to combine, and says so', () => {
    const r = run({ 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true' })
    expect(r.status).toBe('pass')
    expect(String(r.evidence.note)).toContain('refuse')
  })

  test('passes a bare "*"', () => {
    expect(run({ 'access-control-allow-origin': '*' }).status).toBe('pass')
  })

  test('fails "null" with credentials, which sandboxed iframes of any site can send', () => {
    const r = run({ 'access-control-allow-origin': 'null', 'access-control-allow-credentials': 'true' })
    expect(r.status).toBe('fail')
    expect(r.summary).toContain('sandboxed')
  })

  test('warns with low severity for "null" without credentials', () => {
    const r = run({ 'access-control-allow-origin': 'null' })
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('low')
  })

  test('passes a fixed allow-listed origin that is not the probe origin, even with credentials', () => {
    const r = run({ 'access-control-allow-origin': 'https://app.example.com', 'access-control-allow-credentials': 'true' })
    expect(r.status).toBe('pass')
  })

  test('does not count credentials unless the value is exactly "true", as browsers do', () => {
    const r = run({ 'access-control-allow-origin': PROBE_ORIGIN, 'access-control-allow-credentials': 'True' })
    expect(r.status).toBe('warn')
    expect(String(r.evidence.credentialsNote)).toContain('exactly')
  })

  test('warns when the probe origin appears in a duplicated header, which browsers reject for now', () => {
    const r = run({ 'access-control-allow-origin': `${PROBE_ORIGIN}, https://app.example.com`, 'access-control-allow-credentials': 'true' })
    expect(r.status).toBe('warn')
    expect(String(r.evidence.note)).toContain('several values')
  })

  test('judges the headers of an error status too: a 404 with reflection still leaks', () => {
    const r = run({ 'access-control-allow-origin': PROBE_ORIGIN, 'access-control-allow-credentials': 'true' }, { status: 404 })
    expect(r.status).toBe('fail')
    expect(r.evidence.status).toBe(404)
  })

  test('is skipped with the error when the probe failed', () => {
    const r = run({}, { status: 0, error: 'target_unreachable: timed out' })
    expect(r.status).toBe('skipped')
    expect(r.evidence.error).toBe('target_unreachable: timed out')
  })

  test('is skipped when no probe was made', () => {
    expect(runCheck(corsCredentialedReflection, makeArtifacts({ cors: null })).status).toBe('skipped')
  })
})

describe('cors-credentialed-reflection metadata', () => {
  test('documents why, how it is confirmed, and a fix for every platform', () => {
    for (const field of [
      corsCredentialedReflection.title,
      corsCredentialedReflection.description,
      corsCredentialedReflection.why,
      corsCredentialedReflection.confirmation,
    ])
      expect(field.length).toBeGreaterThan(10)
    for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
      expect(corsCredentialedReflection.fix[platform]?.length ?? 0).toBeGreaterThan(10)
    }
  })
})
