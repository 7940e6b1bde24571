import { describe, expect, test } from 'bun:test'
import {
  MAX_URL_LENGTH,
  canonicalHost,
  parseTargetUrl,
  policyFromConfig,
  resolveTarget,
  type EgressPolicy,
  type Resolver,
} from '../../../shared/egress/guard.ts'
import { loadConfig } from '../../../shared/config.ts'

const strict: EgressPolicy = { allowPrivate: false, trustedHosts: [] }

/** A fake DNS: a fixed table, ENOTFOUND otherwise, and a count of lookups. */
function fakeDns(table: Record<string, string[]>) {
  const calls: string[] = []
  const resolver: Resolver = async (host) => {
    calls.push(host)
    const found = table[host]
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))
  }
  return { resolver, calls }
}

const dns = fakeDns({
  'evil.test': ['127.0.0.1'],
  'meta.test': ['169.254.169.254'],
  'v6evil.test': ['::ffff:7f00:1'],
  'mixed.test': ['93.184.215.14', '10.0.0.5'],
  'mixed-rev.test': ['10.0.0.5', '93.184.215.14'],
  'good.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'staging.test': ['10.1.2.3'],
  'garbage.test': ['not-an-ip'],
})

describe('resolveTarget', () => {
  test('a name resolving to loopback is refused', async () => {
    expect(await resolveTarget('evil.test', strict, dns.resolver)).toEqual({
      ok: false,
      code: 'target_blocked',
      reason: 'loopback',
      address: '127.0.0.1',
    })
    expect(await resolveTarget('meta.test', strict, dns.resolver)).toMatchObject({ ok: false, reason: 'metadata' })
    expect(await resolveTarget('v6evil.test', strict, dns.resolver)).toMatchObject({ ok: false, reason: 'loopback' })
  })

  test('one private address among public ones refuses the whole name, in any order', async () => {
    for (const host of ['mixed.test', 'mixed-rev.test']) {
      expect(await resolveTarget(host, strict, dns.resolver)).toEqual({
        ok: false,
        code: 'target_blocked',
        reason: 'private',
        address: '10.0.0.5',
      })
    }
  })

  test('a public name returns the first address and all checked ones; resolved once', async () => {
    const before = dns.calls.length
    const r = await resolveTarget('GOOD.test.', strict, dns.resolver)
    expect(r).toEqual({
      ok: true,
      address: '93.184.215.14',
      family: 4,
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    })
    expect(dns.calls.slice(before)).toEqual(['good.test'])
  })

  test('trustedHosts exempts a host name, and a listed IP', async () => {
    const p: EgressPolicy = { allowPrivate: false, trustedHosts: ['Staging.Test', '127.0.0.1'] }
    expect(await resolveTarget('staging.test', p, dns.resolver)).toMatchObject({ ok: true, address: '10.1.2.3' })
    expect(await resolveTarget('127.0.0.1', p, dns.resolver)).toMatchObject({ ok: true, address: '127.0.0.1' })
    expect(await resolveTarget('127.0.0.2', p, dns.resolver)).toMatchObject({ ok: false, code: 'target_blocked' })
    expect(await resolveTarget('meta.test', p, dns.resolver)).toMatchObject({ ok: false, reason: 'metadata' })
    expect(await resolveTarget('[::1]', { allowPrivate: false, trustedHosts: ['0:0::1'] }, dns.resolver)).toMatchObject({
      ok: true,
      address: '::1',
      family: 6,
    })
  })

  test('allowPrivate allows everything', async () => {
    const p: EgressPolicy = { allowPrivate: true, trustedHosts: [] }
    expect(await resolveTarget('evil.test', p, dns.resolver)).toMatchObject({ ok: true, address: '127.0.0.1' })
    expect(await resolveTarget('mixed.test', p, dns.resolver)).toMatchObject({ ok: true, address: '93.184.215.14' })
    expect(await resolveTarget('169.254.169.254', p, dns.resolver)).toMatchObject({ ok: true })
  })

  test('IP literals, bracketed IPv6 included, are not resolved', async () => {
    const before = dns.calls.length
    expect(await resolveTarget('[::1]', strict, dns.resolver)).toMatchObject({ ok: false, reason: 'loopback', address: '::1' })
    expect(await resolveTarget('::1', strict, dns.resolver)).toMatchObject({ ok: false, reason: 'loopback' })
    expect(await resolveTarget('8.8.8.8', strict, dns.resolver)).toMatchObject({ ok: true, address: '8.8.8.8' })
    expect(await resolveTarget('0x7f.1', strict, dns.resolver)).toMatchObject({ ok: false, reason: 'loopback' })
    expect(dns.calls.length).toBe(before)
  })

  test('DNS failure, garbage answers and invalid hosts', async () => {
    expect(await resolveTarget('nx.test', strict, dns.resolver)).toEqual({
      ok: false,
      code: 'target_unreachable',
      reason: 'dns: ENOTFOUND',
    })
    expect(await resolveTarget('empty.test', strict, async () => [])).toMatchObject({ code: 'target_unreachable' })
    expect(await resolveTarget('garbage.test', strict, dns.resolver)).toMatchObject({ code: 'target_blocked', reason: 'invalid' })
    for (const h of ['', 'a b', 'evil.test@127.0.0.1', 'x/y', 'a.test:80', '256.256.256.256']) {
      expect({ h, r: await resolveTarget(h, strict, dns.resolver) }).toMatchObject({ h, r: { ok: false, code: 'target_unreachable' } })
    }
  })

  test('the default resolver resolves localhost and it is refused', async () => {
    const r = await resolveTarget('localhost', strict)
    expect(r).toMatchObject({ ok: false, code: 'target_blocked', reason: 'loopback' })
  })
})

describe('parseTargetUrl', () => {
  test('accepts http and https', () => {
    const r = parseTargetUrl('  https://Example.COM:8443/a?b=c#d ')
    expect(r.ok).toBe(true)
    if (r.ok) expect(r.url.hostname).toBe('example.com')
  })

  test('refuses other schemes', () => {
    for (const raw of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'javascript:alert(1)',
      'data:text/html,hi',
      'gopher://127.0.0.1:6379/_INFO',
      'ws://example.com/',
      'chrome://settings',
      'about:blank',
    ]) {
      expect({ raw, r: parseTargetUrl(raw) }).toMatchObject({ raw, r: { ok: false, code: 'invalid_url' } })
    }
  })

  test('refuses credentials, relative and empty input', () => {
    for (const raw of [
      'http://user:pass@example.com/',
      'http://user@example.com/',
      'http://:pass@example.com/',
      'https://example.com@127.0.0.1/',
      '/relative',
      'example.com',
      '',
      '   ',
      'http://',
      'http://[::1/',
    ]) {
      expect({ raw, r: parseTargetUrl(raw) }).toMatchObject({ raw, r: { ok: false, code: 'invalid_url' } })
    }
    // An '@' with nothing before it is not a credential.
    expect(parseTargetUrl('http://@example.com/').ok).toBe(true)
  })

  test('refuses URLs over the length limit', () => {
    const base = 'https://example.com/'
    expect(parseTargetUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length)).ok).toBe(true)
    const r = parseTargetUrl(base + 'a'.repeat(MAX_URL_LENGTH))
    expect(r).toMatchObject({ ok: false, code: 'invalid_url' })
  })

  test('canonicalHost', () => {
    expect(canonicalHost('[::FFFF:127.0.0.1]')).toBe('::ffff:7f00:1')
    expect(canonicalHost('Example.COM.')).toBe('example.com')
    expect(canonicalHost('017700000001')).toBe('127.0.0.1')
    expect(canonicalHost('a@b')).toBeNull()
  })
})

test('policyFromConfig', () => {
  const c = loadConfig({ ALLOW_PRIVATE_TARGETS: 'true', TRUSTED_TARGET_HOSTS: 'Staging.example.com, 10.0.0.1' })
  expect(policyFromConfig(c)).toEqual({ allowPrivate: true, trustedHosts: ['staging.example.com', '10.0.0.1'] })
  expect(policyFromConfig(loadConfig({}))).toEqual({ allowPrivate: false, trustedHosts: [] })
})
