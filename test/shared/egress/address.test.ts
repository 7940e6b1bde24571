import { describe, expect, test } from 'bun:test'
import { classifyAddress, parseIPv6 } from '../../../shared/egress/address.ts'
import { parseTargetUrl, resolveTarget, type EgressPolicy, type Resolver } from '../../../shared/egress/guard.ts'

const strict: EgressPolicy = { allowPrivate: false, trustedHosts: [] }
const open: EgressPolicy = { allowPrivate: true, trustedHosts: [] }
/** IP literals must be checked without DNS: any resolver call fails the test. */
const noDns: Resolver = async (host) => {
  throw new Error(`unexpected DNS lookup for ${host}`)
}

async function check(raw: string, policy: EgressPolicy) {
  const parsed = parseTargetUrl(raw)
  if (!parsed.ok) throw new Error(`${raw} did not parse: ${parsed.message}`)
  return resolveTarget(parsed.url.hostname, policy, noDns)
}

// [url, expected reason]: each is a way of writing a non-public address.
const BYPASSES: Array<[string, string]> = [
  ['http://127.0.0.1/', 'loopback'],
  ['http://2130706433/', 'loopback'], // decimal
  ['http://0177.0.0.1/', 'loopback'], // octal
  ['http://017700000001/', 'loopback'], // octal, one part
  ['http://0x7f000001/', 'loopback'], // hex
  ['http://0x7f.1/', 'loopback'], // hex, short form
  ['http://0x7f.0x0.0x0.0x1/', 'loopback'],
  ['http://127.1/', 'loopback'], // short form
  ['http://127.000.000.001/', 'loopback'],
  ['http://127.0.0.1./', 'loopback'], // trailing dot
  ['http://%31%32%37.0.0.1/', 'loopback'], // percent-encoded
  ['http://127.0.0.1:8080/admin', 'loopback'],
  ['https://127.255.255.254/', 'loopback'],
  ['http://[::1]/', 'loopback'],
  ['http://[0:0:0:0:0:0:0:1]/', 'loopback'],
  ['http://[0000::0001]/', 'loopback'],
  ['http://[::ffff:127.0.0.1]/', 'loopback'], // IPv4-mapped
  ['http://[::ffff:7f00:1]/', 'loopback'], // IPv4-mapped, hex form
  ['http://[::127.0.0.1]/', 'loopback'], // IPv4-compatible
  ['http://[::ffff:169.254.169.254]/', 'metadata'],
  ['http://[64:ff9b::a9fe:a9fe]/', 'metadata'], // NAT64 of 169.254.169.254
  ['http://[64:ff9b::127.0.0.1]/', 'loopback'],
  ['http://[2002:7f00:1::]/', 'loopback'], // 6to4 of 127.0.0.1
  ['http://[2002:a9fe:a9fe::1]/', 'metadata'],
  ['http://[::]/', 'unspecified'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://0/', 'unspecified'],
  ['http://10.0.0.1/', 'private'],
  ['http://172.16.0.1/', 'private'],
  ['http://172.31.255.255/', 'private'],
  ['http://192.168.1.1/', 'private'],
  ['http://100.64.0.1/', 'cgnat'],
  ['http://100.127.255.254/', 'cgnat'],
  ['http://169.254.169.254/latest/meta-data/', 'metadata'],
  ['http://169.254.1.1/', 'link-local'],
  ['http://0xa9fea9fe/', 'metadata'],
  ['http://[fe80::1]/', 'link-local'],
  ['http://[fc00::1]/', 'private'],
  ['http://[fd12:3456::1]/', 'private'],
  ['http://[fd00:ec2::254]/', 'metadata'],
  ['http://[ff02::1]/', 'multicast'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://239.255.255.250/', 'multicast'],
  ['http://240.0.0.1/', 'reserved'],
  ['http://255.255.255.255/', 'broadcast'],
  ['http://192.0.0.8/', 'reserved'],
  ['http://192.0.2.1/', 'documentation'],
  ['http://198.18.0.1/', 'reserved'],
  ['http://198.51.100.7/', 'documentation'],
  ['http://203.0.113.9/', 'documentation'],
  ['http://[2001:db8::1]/', 'documentation'],
  ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'reserved'], // Teredo
  // Other spellings of the same ranges.
  ['http://0177.1/', 'loopback'], // octal, short form
  ['http://127.0.1/', 'loopback'], // three parts
  ['http://012.0.0.1/', 'private'], // octal 10.0.0.1
  ['http://0x0a.0.0.1/', 'private'],
  ['http://3232235777/', 'private'], // decimal 192.168.1.1
  ['http://0xc0a80101/', 'private'], // hex 192.168.1.1
  ['http://2852039166/', 'metadata'], // decimal 169.254.169.254
  ['http://0251.0376.0251.0376/', 'metadata'], // octal
  ['http://0xA9.0xFE.0xA9.0xFE/', 'metadata'], // hex per part
  ['http://[0:0:0:0:0:ffff:127.0.0.1]/', 'loopback'], // IPv4-mapped, full form
  ['http://[::ffff:100.64.0.1]/', 'cgnat'], // IPv4-mapped CGNAT
  ['http://[::ffff:0:a9fe:a9fe]/', 'metadata'], // IPv4-translated
  ['http://[64:ff9b::10.0.0.1]/', 'private'], // NAT64 of a private address
  ['http://[64:ff9b:1::a9fe:a9fe]/', 'private'], // local-use NAT64 prefix (RFC 8215)
  // Odd ports change nothing: the address decides.
  ['http://127.0.0.1:6379/', 'loopback'],
  ['http://[::1]:5432/', 'loopback'],
  ['http://169.254.169.254:8080/latest/meta-data/', 'metadata'],
  ['https://10.0.0.1:8443/', 'private'],
  ['http://2130706433:22/', 'loopback'],
  ['http://0x7f.1:65535/', 'loopback'],
  ['http://0x7f000001:0/', 'loopback'],
  ['http://[::ffff:a9fe:a9fe]:1/', 'metadata'],
  ['http://127.0.0.1:/', 'loopback'], // empty port
]

const PUBLIC = [
  'http://8.8.8.8/',
  'https://1.1.1.1/',
  'http://[2606:4700:4700::1111]/',
  'http://[2001:4860:4860::8888]/',
  'http://0x08080808/', // 8.8.8.8 in hex
  'http://[::ffff:8.8.8.8]/',
  'http://[64:ff9b::808:808]/', // NAT64 of 8.8.8.8
  'http://172.32.0.1/', // just outside 172.16/12
  'http://100.128.0.1/', // just outside 100.64/10
  'http://11.0.0.1/',
]

describe('bypass corpus through parseTargetUrl + resolveTarget', () => {
  for (const [url, reason] of BYPASSES) {
    test(`refuses ${url} (${reason})`, async () => {
      const r = await check(url, strict)
      expect(r.ok).toBe(false)
      if (r.ok) return
      expect(r.code).toBe('target_blocked')
      if (r.code === 'target_blocked') expect(r.reason).toBe(reason)
    })
  }

  test('every bypass is allowed when private targets are allowed', async () => {
    for (const [url] of BYPASSES) {
      const r = await check(url, open)
      expect({ url, ok: r.ok }).toEqual({ url, ok: true })
    }
  })

  for (const url of PUBLIC) {
    test(`allows public ${url}`, async () => {
      const r = await check(url, strict)
      expect(r.ok).toBe(true)
    })
  }

  test('the checked address is the normalised literal', async () => {
    const r = await check('http://0x08080808/', strict)
    expect(r).toMatchObject({ ok: true, address: '8.8.8.8', family: 4 })
    const v6 = await check('http://[2606:4700:4700:0:0:0:0:1111]/', strict)
    expect(v6).toMatchObject({ ok: true, address: '2606:4700:4700::1111', family: 6 })
  })
})

describe('classifyAddress', () => {
  test('range edges', () => {
    expect(classifyAddress('9.255.255.255').blocked).toBe(false)
    expect(classifyAddress('10.255.255.255')).toEqual({ blocked: true, reason: 'private' })
    expect(classifyAddress('11.0.0.0').blocked).toBe(false)
    expect(classifyAddress('172.15.255.255').blocked).toBe(false)
    expect(classifyAddress('172.16.0.0').reason).toBe('private')
    expect(classifyAddress('100.63.255.255').blocked).toBe(false)
    expect(classifyAddress('100.64.0.0').reason).toBe('cgnat')
    expect(classifyAddress('198.17.255.255').blocked).toBe(false)
    expect(classifyAddress('198.19.255.255').reason).toBe('reserved')
    expect(classifyAddress('198.20.0.0').blocked).toBe(false)
    expect(classifyAddress('223.255.255.255').blocked).toBe(false)
    expect(classifyAddress('223.255.255.255').reason).toBeNull()
  })

  test('IPv6 forms', () => {
    expect(classifyAddress('::1').reason).toBe('loopback')
    expect(classifyAddress('[::1]').reason).toBe('loopback')
    expect(classifyAddress('::').reason).toBe('unspecified')
    expect(classifyAddress('fe80::1%eth0').reason).toBe('link-local')
    expect(classifyAddress('febf::1').reason).toBe('link-local')
    expect(classifyAddress('fc00::1').reason).toBe('private')
    expect(classifyAddress('fdff::1').reason).toBe('private')
    expect(classifyAddress('ff00::').reason).toBe('multicast')
    expect(classifyAddress('::ffff:10.1.2.3').reason).toBe('private')
    expect(classifyAddress('::ffff:a01:203').reason).toBe('private')
    expect(classifyAddress('::ffff:0:7f00:1').reason).toBe('loopback') // IPv4-translated
    expect(classifyAddress('::8.8.8.8').reason).toBe('reserved') // IPv4-compatible is never allowed
    expect(classifyAddress('2001::1').reason).toBe('reserved') // Teredo
    expect(classifyAddress('2001:db8:ffff::1').reason).toBe('documentation')
    expect(classifyAddress('100::1').reason).toBe('reserved') // discard-only, outside 2000::/3
    expect(classifyAddress('2a00:1450:4001:81b::200e').blocked).toBe(false)
  })

  test('non-canonical or malformed input is refused, never guessed', () => {
    for (const bad of [
      '',
      'localhost',
      '0x7f.1',
      '127.1',
      '2130706433',
      '0177.0.0.1',
      '127.0.0.01',
      '256.0.0.1',
      '1.2.3.4.5',
      '1::2::3',
      ':::',
      '1:2:3:4:5:6:7:8:9',
      '::ffff:1.2.3',
      'g::1',
      '12345::1',
      ' 8.8.8.8x',
    ]) {
      expect({ bad, ...classifyAddress(bad) }).toEqual({ bad, blocked: true, reason: 'invalid' })
    }
  })

  test('parseIPv6 expands forms', () => {
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(parseIPv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0])
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304])
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304])
    expect(parseIPv6('1:2:3:4:5:6:7::')).toEqual([1, 2, 3, 4, 5, 6, 7, 0])
    expect(parseIPv6('1:2:3:4:5:6:7:8::')).toBeNull()
  })
})
