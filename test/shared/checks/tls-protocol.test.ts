import { describe, expect, test } from 'bun:test'
import { tlsProtocol } from '../../../shared/checks/https/tls-protocol.ts'
import type { TlsArtifact } from '../../../shared/checks/types.ts'
import { makeArtifacts } from './artifacts.ts'

const run = (tls: Partial<TlsArtifact> | null) => tlsProtocol.run(makeArtifacts({ tls }))

describe('tls-protocol', () => {
  test('passes TLS 1.3', () => {
    const r = run({ protocol: 'TLSv1.3' })
    expect(r.status).toBe('pass')
    expect(r.evidence.protocol).toBe('TLSv1.3')
  })

  test('passes TLS 1.2 with a note about TLS 1.3', () => {
    const r = run({ protocol: 'TLSv1.2' })
    expect(r.status).toBe('pass')
    expect(String(r.evidence.note)).toContain('TLS 1.3')
  })

  test('fails TLS 1.0 and TLS 1.1', () => {
    expect(run({ protocol: 'TLSv1' }).status).toBe('fail')
    expect(run({ protocol: 'TLSv1.1' }).status).toBe('fail')
  })

  test('fails SSLv3 as critical', () => {
    const r = run({ protocol: 'SSLv3' })
    expect(r.status).toBe('fail')
    expect(r.severity).toBe('critical')
  })

  test('fails when the server refused every protocol the probe offered (TLS 1.2 and 1.3)', () => {
    const r = run({ protocol: null, error: 'error:1000042e:SSL routines:OPENSSL_internal:TLSV1_ALERT_PROTOCOL_VERSION' })
    expect(r.status).toBe('fail')
  })

  test('is skipped, with the error, when the handshake failed for another reason', () => {
    const r = run({ protocol: null, error: 'proxy refused: HTTP/1.1 403 Forbidden' })
    expect(r.status).toBe('skipped')
    expect(r.evidence.error).toBe('proxy refused: HTTP/1.1 403 Forbidden')
  })

  test('is skipped for an http site', () => {
    const r = tlsProtocol.run(
      makeArtifacts({ target: { url: 'http://example.com/', finalUrl: 'http://example.com/', scheme: 'http' }, tls: null }),
    )
    expect(r.status).toBe('skipped')
  })

  test('is skipped when the protocol was not reported', () => {
    expect(run({ protocol: null }).status).toBe('skipped')
  })

  test('judges the protocol, not the certificate: an untrusted certificate on TLS 1.3 still passes here', () => {
    expect(run({ authorized: false, authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT', protocol: 'TLSv1.3' }).status).toBe('pass')
  })
})

describe('tls-protocol metadata', () => {
  test('documents why, how it is confirmed, and a fix for every platform', () => {
    for (const field of [tlsProtocol.title, tlsProtocol.description, tlsProtocol.why, tlsProtocol.confirmation])
      expect(field.length).toBeGreaterThan(10)
    for (const platform of ['generic', 'vercel', 'netlify', 'nextjs', 'nginx', 'cloudflare'] as const) {
      expect(tlsProtocol.fix[platform]?.length ?? 0).toBeGreaterThan(10)
    }
  })
})
