// Audits under the production egress rule (ALLOW_PRIVATE_TARGETS off). 127.0.0.1 is trusted by name so
// a local server can play a public site; every other private address stays blocked, also when a page of
// the site redirects to one during the crawl.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectClient, payload } from '../harness/client.ts'
import { startService, type TestService } from '../harness/service.ts'
import { until } from '../harness/wait.ts'

let svc: TestService
let client: Client
let site: ReturnType<typeof Bun.serve>
let inner: ReturnType<typeof Bun.serve>
let innerHits = 0

beforeAll(async () => {
  svc = await startService('production', { ALLOW_PRIVATE_TARGETS: 'false', TRUSTED_TARGET_HOSTS: '127.0.0.1' })
  client = await connectClient(svc.mcpUrl, await svc.key('scale'))
  // Something that must never be reached: on 127.0.0.2, which is not trusted.
  inner = Bun.serve({
    hostname: '127.0.0.2',
    port: 0,
    fetch: () => (innerHits++, new Response('<title>internal</title>', { headers: { 'content-type': 'text/html' } })),
  })
  const page = (body: string) =>
    new Response(`<!doctype html><html lang="en"><head><title>Site</title></head><body>${body}</body></html>`, {
      headers: { 'content-type': 'text/html' },
    })
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/') return page('<a href="/about">About</a> <a href="/metadata">Meta</a> <a href="/internal">Internal</a>')
      if (path === '/about') return page('<a href="/">Home</a>')
      if (path === '/metadata')
        return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } })
      if (path === '/internal') return new Response(null, { status: 302, headers: { location: `http://127.0.0.2:${inner.port}/` } })
      if (path === '/start-to-metadata')
        return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } })
      return new Response('not found', { status: 404 })
    },
  })
}, 60_000)
afterAll(async () => {
  await client?.close()
  await svc?.stop()
  site?.stop(true)
  inner?.stop(true)
})

const finished = (auditId: string) =>
  until(
    async () => {
      const a = payload(await client.callTool({ name: 'get_audit', arguments: { auditId } }))
      return a.status !== 'queued' && a.status !== 'running' && a
    },
    90_000,
    `audit ${auditId}`,
    { everyMs: 200 },
  )

describe('audit_app with private targets not allowed', () => {
  test.each(['http://169.254.169.254/', 'http://[::ffff:127.0.0.2]/', 'http://0x7f.2/', 'http://10.0.0.1:8443/'])(
    '%s is refused at once with target_blocked and not charged',
    async (url) => {
      const r = await client.callTool({ name: 'audit_app', arguments: { url } })
      expect(r.isError).toBe(true)
      expect(payload(r).error.code).toBe('target_blocked')
      const [n] = await svc.running.services.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE url = ${new URL(url).href}`
      expect(n!.n).toBe(0)
    },
  )

  test('a start URL that redirects to the metadata address fails the audit with target_blocked', async () => {
    const { auditId } = payload(
      await client.callTool({ name: 'audit_app', arguments: { url: `http://127.0.0.1:${site.port}/start-to-metadata` } }),
    )
    const a = await finished(auditId)
    expect(a.status).toBe('failed')
    expect(a.error.code).toBe('target_blocked')
    // The start page could not be loaded, so no page was audited: refunded at once, and the reason says so.
    expect(a.progress.refunded).toBe(true)
    expect(a.error.message).toMatch(/refunded/)
  }, 120_000)

  test('pages that redirect to blocked addresses fail on their own; the rest of the site is audited', async () => {
    const { auditId } = payload(await client.callTool({ name: 'audit_app', arguments: { url: `http://127.0.0.1:${site.port}/` } }))
    const a = await finished(auditId)
    expect(a.status).toBe('completed')
    // get_audit answers with a summary: the pages come from its pages section (a handful here, one page of it).
    const pages = payload(await client.callTool({ name: 'get_audit', arguments: { auditId, section: 'pages', limit: 100 } }))
    expect(pages.nextCursor).toBeNull()
    const byPath = Object.fromEntries(pages.items.map((p: { url: string }) => [new URL(p.url).pathname, p]))
    expect(byPath['/'].ok).toBe(true)
    expect(byPath['/about'].ok).toBe(true)
    for (const path of ['/metadata', '/internal']) {
      expect(byPath[path].ok).toBe(false)
      expect(byPath[path].httpStatus === null || byPath[path].httpStatus >= 400).toBe(true)
    }
    expect(innerHits).toBe(0)
  }, 120_000)
})
