// The gatherer's plain-HTTP side against a real Express app shaped like OWASP Juice Shop (serve-index listings,
// prom-client's /metrics, errorhandler's stack on an unknown /rest or /api path, cors() on every answer) and its
// careful twin: the probes and API probes as a scan sends them, the page's API traffic as the browser records
// it (the same GETs, made here with fetch), and the checks' judgements. No browser. Counts requests, not time.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { revealedPlans, sendApiProbes, wellKnownPlans } from '../../../crawler/gather/api-probes.ts'
import { corsProbe } from '../../../crawler/gather/cors-probe.ts'
import { directoryLinks, probe } from '../../../crawler/gather/probes.ts'
import { debugErrorPage } from '../../../shared/checks/exposure/debug-error-page.ts'
import { directoryListing } from '../../../shared/checks/exposure/directory-listing.ts'
import { serverInfoPage } from '../../../shared/checks/exposure/server-info-page.ts'
import { API_ERROR_PROBE, API_PROBE_LIMITS, PROBE_PATHS } from '../../../shared/checks/probe-paths.ts'
import { corsCredentialedReflection } from '../../../shared/checks/security/cors-credentialed-reflection.ts'
import { corsWildcardApi } from '../../../shared/checks/security/cors-wildcard-api.ts'
import type { ApiCall, ProbeResult } from '../../../shared/checks/types.ts'
import { startEgressProxy, type EgressProxy } from '../../../shared/egress/proxy.ts'
import { mapLimit } from '../../../shared/lib/async.ts'
import { startNodeShop } from '../../fixtures/sites/lib/node-shop.ts'
import { apiCall, makeArtifacts } from '../../shared/checks/artifacts.ts'

const TIMEOUT = 15_000
/** What the shop's page fetches while it loads (main.js). */
const PAGE_CALLS = ['/rest/admin/application-version', '/rest/languages', '/api/Quantitys/', '/assets/i18n/en.json']

let proxy: EgressProxy
beforeAll(async () => {
  proxy = await startEgressProxy({ allowPrivate: true, trustedHosts: [] })
})
afterAll(async () => {
  await proxy?.stop()
})

/** An answer the page got, as the recorder keeps it. */
async function recorded(url: string): Promise<ApiCall> {
  const res = await fetch(url, { headers: { accept: 'application/json, text/plain, */*' } })
  return apiCall(url, await res.text(), { status: res.status, headers: Object.fromEntries(res.headers) })
}

/** One scan's plain-HTTP gathering of the shop, with `calls` as the page's traffic; the server's request counts. */
async function scanShop(careless: boolean, calls: readonly string[] = PAGE_CALLS) {
  const shop = await startNodeShop(careless)
  try {
    const origin = shop.origins.http!
    const html = await (await fetch(shop.url)).text()
    const probeList = await mapLimit(PROBE_PATHS, 8, async (p) => [p, await probe(origin, p, proxy, TIMEOUT)] as const)
    const probes: Record<string, ProbeResult> = Object.fromEntries(probeList)
    const page = {
      ...makeArtifacts().page,
      finalUrl: shop.url,
      html,
      api: { calls: await Promise.all(calls.map((p) => recorded(origin + p))), unlisted: 0, websockets: [] },
    }
    const folders = directoryLinks(page, shop.url, PROBE_PATHS)
    for (const f of folders) probes[f] = await probe(origin, f, proxy, TIMEOUT)
    const known = wellKnownPlans(origin)
    const plans = [...known, ...revealedPlans(page, shop.url, new Set(known.map((p) => p.url)))]
    const apiProbes = await sendApiProbes(plans, proxy, TIMEOUT)
    const cors = await corsProbe(shop.url, proxy, TIMEOUT)
    const target = { url: shop.url, finalUrl: shop.url, origin, scheme: 'http' as const }
    const mainResponse = { ...makeArtifacts().mainResponse, url: shop.url, body: html }
    const artifacts = makeArtifacts({ target, mainResponse, page, probes, apiProbes, cors })
    return { artifacts, folders, plans, requests: new Map(shop.requests) }
  } finally {
    await shop.stop()
  }
}

const underApi = (requests: Map<string, number>) =>
  [...requests.entries()].filter(([p]) => p.includes(API_ERROR_PROBE)).reduce((n, [, c]) => n + c, 0)

describe('a Juice Shop-shaped Express app', () => {
  test('careless: listings (high, keys, backups, logs named), /metrics, the stack of /rest/<nonsense>, * on API answers', async () => {
    const { artifacts, folders, plans, requests } = await scanShop(true)
    // The footer links /ftp/legal.md (its folder is probed already) and a file in /ftp/quarantine/.
    expect(folders).toEqual(['/ftp/quarantine/'])

    const listing = directoryListing.run(artifacts)
    expect(listing.status).toBe('fail')
    expect(listing.severity).toBe('high')
    const listings = listing.evidence.listings as Array<{ url: string; server: string; names: string[]; sensitive?: object }>
    const byPath = Object.fromEntries(listings.map((l) => [new URL(l.url).pathname, l]))
    expect(Object.keys(byPath).sort()).toEqual(['/encryptionkeys', '/ftp', '/ftp/quarantine/', '/support/logs'])
    expect(byPath['/ftp']!.server).toBe('Node serve-index')
    expect(byPath['/ftp']!.sensitive).toEqual({
      keys: ['incident-support.kdbx'],
      backups: ['coupons_2013.md.bak', 'package-lock.json.bak', 'package.json.bak'],
    })
    expect(byPath['/ftp']!.names).toContain('quarantine/')
    expect(byPath['/ftp']!.names).toContain('acquisitions.md')
    expect(byPath['/encryptionkeys']!.sensitive).toEqual({ keys: ['jwt.pub', 'premium.key'] })
    expect(byPath['/support/logs']!.sensitive).toEqual({ logs: ['access.log.2026-11-29'] })
    expect(byPath['/ftp/quarantine/']!.sensitive).toBeUndefined()

    const info = serverInfoPage.run(artifacts)
    expect(info.status).toBe('fail')
    expect(info.severity).toBe('medium')
    expect(info.evidence.pages).toMatchObject([
      {
        software: 'Prometheus',
        page: 'metrics exposition',
        details: { format: 'Prometheus text', families: 5, versions: { node: 'v20.19.2' } },
      },
    ])

    // One GET under each of the two API prefixes the page used; /assets/i18n/en.json is a file, not an API.
    const errorPlans = plans.filter((p) => p.kind === 'error')
    expect(errorPlans.map((p) => new URL(p.url).pathname).sort()).toEqual([`/api/${API_ERROR_PROBE}`, `/rest/${API_ERROR_PROBE}`])
    expect(underApi(requests)).toBe(2)
    const debug = debugErrorPage.run(artifacts)
    expect(debug.status).toBe('fail')
    const pages = debug.evidence.pages as Array<{ framework: string; url: string; status: number; alsoAt: string[]; excerpt: string }>
    expect(pages).toHaveLength(1)
    expect(pages[0]!).toMatchObject({ framework: 'Node.js', status: 500 })
    expect([pages[0]!.url, ...pages[0]!.alsoAt].map((u) => new URL(u).pathname).sort()).toEqual([
      `/api/${API_ERROR_PROBE}`,
      `/rest/${API_ERROR_PROBE}`,
    ])
    expect(pages[0]!.excerpt).toContain('node_modules/express/lib/router')

    const wildcard = corsWildcardApi.run(artifacts)
    expect(wildcard).toMatchObject({ status: 'warn', severity: 'low' })
    expect(wildcard.evidence.apiAnswers).toBeGreaterThanOrEqual(PAGE_CALLS.length)
    expect((wildcard.evidence.answers as Array<{ url: string; source: string }>)[0]).toMatchObject({ source: 'page' })
    expect(wildcard.summary).toContain('fine for public data')
    // "*" is not reflection: the credentialed-reflection check stays as it was.
    expect(corsCredentialedReflection.run(artifacts).status).toBe('pass')
  })

  test('careful: 403, 404 and the SPA page at those paths, JSON errors without a stack, a fixed origin: all pass', async () => {
    const { artifacts, requests } = await scanShop(false)
    expect(directoryListing.run(artifacts).status).toBe('pass')
    expect(serverInfoPage.run(artifacts).status).toBe('pass')
    expect(underApi(requests)).toBe(2)
    expect(debugErrorPage.run(artifacts).status).toBe('pass')
    const wildcard = corsWildcardApi.run(artifacts)
    expect(wildcard.status).toBe('pass')
    expect(wildcard.evidence).toMatchObject({ wildcard: 0 })
    expect(corsCredentialedReflection.run(artifacts).status).toBe('pass')
  })

  test('a page that calls no API: no error or CORS probe is sent, and nothing under /rest or /api is asked', async () => {
    const { artifacts, plans, requests } = await scanShop(true, [])
    expect(plans.filter((p) => p.kind === 'error' || p.kind === 'cors')).toEqual([])
    expect(underApi(requests)).toBe(0)
    // The well-known GraphQL endpoint /api/graphql is asked on every scan; nothing else under /rest or /api.
    expect([...requests.keys()].filter((p) => p.startsWith('/rest') || (p.startsWith('/api/') && p !== '/api/graphql'))).toEqual([])
    // Only files: a static file's folder is no API prefix either.
    const files = await scanShop(true, ['/assets/i18n/en.json'])
    expect(files.plans.filter((p) => p.kind === 'error')).toEqual([])
    expect(underApi(files.requests)).toBe(0)
    expect(debugErrorPage.run(artifacts).status).toBe('pass')
    expect(API_PROBE_LIMITS.errorPaths).toBe(2)
  })
})
