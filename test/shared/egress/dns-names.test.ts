// Host names whose DNS answers are private: answered over the wire by a real (local) DNS server, read
// with node's resolver, and refused by the guard and by the proxy, whatever the port. A target only
// "looks public" when TRUSTED_TARGET_HOSTS names it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Resolver as DnsResolver } from 'node:dns/promises'
import { resolveTarget, type EgressPolicy, type Resolver } from '../../../shared/egress/guard.ts'
import { BLOCKED_HEADER, startEgressProxy } from '../../../shared/egress/proxy.ts'
import { startDnsServer, type DnsServer } from '../../harness/dns-server.ts'

let dns: DnsServer
let resolver: Resolver
let target: ReturnType<typeof Bun.serve>
let hits = 0

const strict: EgressPolicy = { allowPrivate: false, trustedHosts: [] }

beforeAll(async () => {
  dns = await startDnsServer()
  const r = new DnsResolver({ timeout: 1_000, tries: 1 })
  r.setServers([dns.address])
  // Both families, as the system resolver would give them.
  resolver = async (host) => {
    const [v4, v6] = await Promise.all([r.resolve4(host).catch(() => [] as string[]), r.resolve6(host).catch(() => [] as string[])])
    if (!v4.length && !v6.length) throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' })
    return [...v4.map((address) => ({ address, family: 4 as const })), ...v6.map((address) => ({ address, family: 6 as const }))]
  }
  target = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => (hits++, new Response('private data')) })
  dns.setAddresses('loopback.test', ['127.0.0.1'])
  dns.setAddresses('loopback-v6.test', ['::1'])
  dns.setAddresses('mapped.test', ['::ffff:169.254.169.254'])
  dns.setAddresses('nat64.test', ['64:ff9b::a9fe:a9fe'])
  dns.setAddresses('metadata.test', ['169.254.169.254'])
  dns.setAddresses('mixed.test', ['93.184.215.14', '10.0.0.7'])
  dns.setAddresses('mixed-family.test', ['93.184.215.14', 'fd00::7'])
  dns.setAddresses('public.test', ['93.184.215.14'])
  dns.setAddresses('staging.test', ['127.0.0.1'])
})
afterAll(async () => {
  await dns?.stop()
  target?.stop(true)
})

describe('names that resolve to private addresses', () => {
  test.each([
    ['loopback.test', 'loopback'],
    ['loopback-v6.test', 'loopback'],
    ['mapped.test', 'metadata'],
    ['nat64.test', 'metadata'],
    ['metadata.test', 'metadata'],
    ['mixed.test', 'private'],
    ['mixed-family.test', 'private'],
    ['LoopBack.Test.', 'loopback'],
  ])('%s is refused as %s', async (host, reason) => {
    const r = await resolveTarget(host, strict, resolver)
    expect(r).toMatchObject({ ok: false, code: 'target_blocked', reason })
  })

  test('a public answer is allowed, and a trusted name may resolve to loopback', async () => {
    expect(await resolveTarget('public.test', strict, resolver)).toMatchObject({ ok: true, address: '93.184.215.14' })
    expect(await resolveTarget('staging.test', strict, resolver)).toMatchObject({ ok: false, reason: 'loopback' })
    expect(await resolveTarget('staging.test', { allowPrivate: false, trustedHosts: ['staging.test'] }, resolver)).toMatchObject({
      ok: true,
      address: '127.0.0.1',
    })
    // Trusting one name does not trust another that points at the same address.
    expect(await resolveTarget('loopback.test', { allowPrivate: false, trustedHosts: ['staging.test'] }, resolver)).toMatchObject({
      ok: false,
    })
  })
})

describe('the proxy refuses such names on any port and never connects', () => {
  test.each(['loopback.test', 'loopback-v6.test', 'mapped.test', 'metadata.test'])('http://%s:<odd ports>/', async (host) => {
    const proxy = await startEgressProxy(strict, { resolver })
    try {
      for (const port of [target.port, 22, 6379, 65535]) {
        const res = await fetch(`http://${host}:${port}/`, {
          proxy: proxy.url,
          redirect: 'manual',
          signal: AbortSignal.timeout(5_000),
        } as RequestInit)
        expect(res.status).toBe(403)
        expect(res.headers.get(BLOCKED_HEADER)).toBeTruthy()
        await res.body?.cancel()
      }
      expect(proxy.blocked.map((b) => b.host.toLowerCase())).toEqual(Array(4).fill(host))
      expect(hits).toBe(0)
    } finally {
      await proxy.stop()
    }
  })

  test('a trusted name reaches its loopback address through the proxy', async () => {
    const proxy = await startEgressProxy({ allowPrivate: false, trustedHosts: ['staging.test'] }, { resolver })
    try {
      const res = await fetch(`http://staging.test:${target.port}/`, {
        proxy: proxy.url,
        signal: AbortSignal.timeout(5_000),
      } as RequestInit)
      expect(await res.text()).toBe('private data')
      expect(hits).toBe(1)
    } finally {
      await proxy.stop()
      hits = 0
    }
  })
})
