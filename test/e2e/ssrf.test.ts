// SSRF: with ALLOW_PRIVATE_TARGETS off (the production default) private targets are refused,
// directly and through redirects; with it on, the same targets are scanned.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { redirectSite, spaSite, type Site } from '../fixtures/sites.ts'

const sites: Site[] = []
afterAll(async () => {
  for (const s of sites) await s.stop()
})

async function scanCode(client: Client, url: string): Promise<string | null> {
  const r = await client.callTool({ name: 'scan_app', arguments: { url } }, undefined, { timeout: 60_000 })
  return r.isError ? payload(r).error.code : null
}

describe('with private targets not allowed', () => {
  let svc: TestService
  let client: Client
  let site: Site

  beforeAll(async () => {
    // 127.0.0.1 is trusted by name so a local server can play a public site; nothing else private is.
    svc = await startService('production', { ALLOW_PRIVATE_TARGETS: 'false', TRUSTED_TARGET_HOSTS: '127.0.0.1' })
    client = await connectClient(svc.mcpUrl, await svc.key())
    sites.push((site = await spaSite()))
  })
  afterAll(async () => {
    await client?.close()
    await svc?.stop()
  })

  const port = () => new URL(site.url).port

  test.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.2]/',
    'http://127.0.0.2/',
    'http://0x7f.2/',
    'http://2130706434/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
  ])('%s is refused with target_blocked', async (url) => {
    expect(await scanCode(client, url)).toBe('target_blocked')
  })

  test('a trusted host is scanned', async () => {
    expect(await scanCode(client, site.url)).toBeNull()
  })

  test('a redirect from an allowed target to the metadata address is refused', async () => {
    const r = await redirectSite('http://169.254.169.254/latest/meta-data/iam/')
    sites.push(r)
    expect(await scanCode(client, r.url)).toBe('target_blocked')
  })

  test('a redirect from an allowed target to another loopback address is refused', async () => {
    const r = await redirectSite(`http://127.0.0.2:${port()}/`)
    sites.push(r)
    expect(await scanCode(client, r.url)).toBe('target_blocked')
  })

  test('nothing refused at the door was queued or stored as a scan', async () => {
    const account = payload(await client.callTool({ name: 'get_account', arguments: {} }))
    // Only the trusted scan and the two redirect scans (refused by the worker's guard) were recorded.
    expect(account.usage.scans).toBe(3)
  })
})

describe('with private targets allowed', () => {
  test('the same loopback target is scanned', async () => {
    const svc = await startService('production', { ALLOW_PRIVATE_TARGETS: 'true' })
    const site = await spaSite()
    sites.push(site)
    try {
      const client = await connectClient(svc.mcpUrl, await svc.key())
      expect(await scanCode(client, site.url.replace('127.0.0.1', 'localhost'))).toBeNull()
      await client.close()
    } finally {
      await svc.stop()
    }
  })
})
