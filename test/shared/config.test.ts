import { describe, expect, test } from 'bun:test'
import { ConfigError, describeConfig, loadConfig } from '../../shared/config.ts'

describe('config', () => {
  test('every field has a default and a line of doc; private targets are off by default', () => {
    const c = loadConfig({})
    expect(c.ALLOW_PRIVATE_TARGETS).toBe(false)
    expect(c.HOST).toBe('127.0.0.1')
    expect(c.baseUrl).toBe('http://localhost:8787')
    for (const f of describeConfig()) {
      expect(f.default).toBeDefined()
      expect(f.doc.length).toBeGreaterThan(10)
    }
  })

  test('converts strings from the environment', () => {
    const c = loadConfig({
      PORT: '9000',
      ALLOW_PRIVATE_TARGETS: 'true',
      BASE_URL: 'https://www.example.com/',
      TRUSTED_TARGET_HOSTS: ' A.example , b.example,',
    })
    expect(c.PORT).toBe(9000)
    expect(c.ALLOW_PRIVATE_TARGETS).toBe(true)
    expect(c.baseUrl).toBe('https://www.example.com')
    expect(c.trustedTargetHosts).toEqual(['a.example', 'b.example'])
  })

  test('start-up fails listing every bad field at once', () => {
    let err: unknown
    try {
      loadConfig({ PORT: 'eighty', WORKER_CONCURRENCY: '0', ROLE: 'everything', BASE_URL: 'ftp://x', ALLOW_PRIVATE_TARGETS: 'maybe' })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    const text = (err as ConfigError).problems.join('\n')
    for (const field of ['PORT', 'WORKER_CONCURRENCY', 'ROLE', 'BASE_URL', 'ALLOW_PRIVATE_TARGETS']) expect(text).toContain(field)
  })
})
