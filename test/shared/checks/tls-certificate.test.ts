import { describe, expect, test } from 'bun:test'
import { hostCovered, isCertificateError, tlsCertificate } from '../../../shared/checks/https/tls-certificate.ts'
import type { TlsArtifact } from '../../../shared/checks/types.ts'
import { makeArtifacts } from './artifacts.ts'

const run = (tls: Partial<TlsArtifact> | null) => tlsCertificate.run(makeArtifacts({ tls }))
const DAY = 86_400_000
/** A certificate of `lifetime` days with `left` days remaining (relative to a fixed scan time). */
const validity = (lifetime: number, left: number) => {
  const to = Date.UTC(2026, 11, 30)
  return { validFrom: new Date(to - lifetime * DAY).toISOString(), validTo: new Date(to).toISOString(), daysRemaining: left }
}

describe('tls-certificate', () => {
  test('passes a trusted certificate with issuer, expiry and days left in the evidence', () => {
    const r = run({})
    expect(r.status).toBe('pass')
    expect(r.evidence).toMatchObject({ issuer: "CN=R11, O=Let's Encrypt, C=US", validTo: '2026-12-30T00:00:00.000Z', daysRemaining: 60 })
  })

  test('fails an expired certificate and explains the verification error', () => {
    const r = run({ authorized: false, authorizationError: 'CERT_HAS_EXPIRED', ...validity(90, -3) })
    expect(r.status).toBe('fail')
    expect(r.evidence).toMatchObject({ authorizationError: 'CERT_HAS_EXPIRED', reason: 'the certificate has expired' })
  })

  test('fails a self-signed certificate', () => {
    const r = run({
      authorized: false,
      authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      selfSigned: true,
      issuer: 'CN=example.com',
      subject: 'CN=example.com',
    })
    expect(r.status).toBe('fail')
    expect(r.evidence.reason).toBe('the certificate is self-signed')
  })

  test('fails a hostname mismatch and shows the names the certificate covers', () => {
    const r = run({ authorized: false, authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID', altNames: ['other.example.net'] })
    expect(r.status).toBe('fail')
    expect(r.evidence).toMatchObject({ hostCovered: false, altNames: ['other.example.net'] })
  })

  test('fails a chain with a missing intermediate', () => {
    const r = run({ authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' })
    expect(r.status).toBe('fail')
    expect(String(r.evidence.reason)).toContain('intermediate')
  })

  test('passes a certificate the scanner was told to trust (pinned), even if self-signed', () => {
    const r = run({ authorized: true, selfSigned: true, issuer: 'CN=localhost', subject: 'CN=localhost', altNames: ['localhost'] })
    expect(r.status).toBe('pass')
  })

  test('fails an authorized certificate whose expiry has passed', () => {
    expect(run({ ...validity(90, -1) }).status).toBe('fail')
  })

  test('warns with high severity under 14 days', () => {
    const r = run(validity(90, 10))
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('high')
  })

  test('warns with medium severity under 30 days', () => {
    const r = run(validity(90, 20))
    expect(r.status).toBe('warn')
    expect(r.severity).toBe('medium')
  })

  test('passes at 30 days left', () => {
    expect(run(validity(90, 30)).status).toBe('pass')
  })

  test('does not warn about a short-lived certificate before its renewal point', () => {
    expect(run(validity(6, 4)).status).toBe('pass')
    expect(run(validity(45, 20)).status).toBe('pass')
  })

  test('warns about a short-lived certificate past a third of its lifetime', () => {
    const r = run(validity(6, 1))
    expect(r.status).toBe('warn')
    expect(r.evidence.lifetimeDays).toBe(6)
  })

  test('is skipped for an http site', () => {
    const r = tlsCertificate.run(
      makeArtifacts({ target: { url: 'http://example.com/', finalUrl: 'http://example.com/', scheme: 'http' }, tls: null }),
    )
    expect(r.status).toBe('skipped')
    expect(String(r.evidence.reason)).toContain('http')
  })

  test('is skipped with the error when the handshake failed for a non-certificate reason', () => {
    const r = run({ error: 'TLS handshake timed out' })
    expect(r.status).toBe('skipped')
    expect(r.evidence.error).toBe('TLS handshake timed out')
  })

  test('fails when the handshake error is about the certificate', () => {
    expect(run({ error: 'no certificate presented' }).status).toBe('fail')
  })

  test('does not blame the site certificate for a server alert asking for a client certificate', () => {
    expect(run({ error: 'error:10000410:SSL routines:OPENSSL_internal:TLSV13_ALERT_CERTIFICATE_REQUIRED' }).status).toBe('skipped')
    expect(isCertificateError('sslv3 alert bad certificate')).toBe(false)
  })
})

describe('hostCovered', () => {
  test('matches exact names and one wildcard label only', () => {
    expect(hostCovered('example.com', ['example.com'])).toBe(true)
    expect(hostCovered('www.example.com', ['*.example.com'])).toBe(true)
    expect(hostCovered('a.b.example.com', ['*.example.com'])).toBe(false)
    expect(hostCovered('example.com', ['*.example.com'])).toBe(false)
  })
})

describe('tls-certificate metadata', () => {
  test('documents why, how it is confirmed, and a fix for every platform', () => {
    for (const field of [tlsCertificate.title, tlsCertificate.description, tlsCertificate.why, tlsCertificate.confirmation])
      expect(field.length).toBeGreaterThan(10)
    for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
      expect(tlsCertificate.fix[platform]?.length ?? 0).toBeGreaterThan(10)
    }
  })
})
