// What the page reveals decides what is probed: same-site API paths of its traffic (JSON first, at most
// API_PROBE_LIMITS.corsPaths), GraphQL endpoints it used, API documents it links; never a write.
import { describe, expect, test } from 'bun:test'
import { INTROSPECTION_QUERY, revealedPlans, wellKnownPlans } from '../../../crawler/gather/api-probes.ts'
import { isGraphqlRequest } from '../../../crawler/gather/api-traffic.ts'
import { API_PROBE_BUDGET, API_PROBE_LIMITS } from '../../../shared/checks/probe-paths.ts'
import { apiCall, makeArtifacts, SITE } from '../../shared/checks/artifacts.ts'

const pageWith = (calls: ReturnType<typeof apiCall>[], html = '<p>') => ({
  ...makeArtifacts().page,
  html,
  api: { calls, unlisted: 0, websockets: [] },
})
const known = wellKnownPlans('https://example.com')
const sent = new Set(known.map((p) => p.url))

describe('API probe plans', () => {
  test('CORS on same-site API paths only, JSON answers first, a preflight for other methods, within the limit', () => {
    const calls = [
      apiCall('/page.html', '<html>', { headers: { 'content-type': 'text/html' } }),
      apiCall('https://api.example.com/v1/orders', [], { method: 'POST' }),
      apiCall('https://tracker.other.example/collect', {}),
      apiCall('/api/a', {}),
      apiCall('/api/a?page=2', {}),
      apiCall('/api/b', {}),
      apiCall('/api/c', {}),
    ]
    const plans = revealedPlans(pageWith(calls), SITE, sent).filter((p) => p.kind === 'cors')
    const paths = [...new Set(plans.map((p) => new URL(p.url).origin + new URL(p.url).pathname))]
    expect(paths).toHaveLength(API_PROBE_LIMITS.corsPaths)
    expect(paths).not.toContain('https://tracker.other.example/collect')
    expect(paths).not.toContain('https://example.com/page.html')
    const orders = plans.filter((p) => p.url.includes('/v1/orders'))
    expect(orders.map((p) => [p.method, p.origin])).toEqual([
      ['OPTIONS', 'https://appaudit-cors-probe.example'],
      ['OPTIONS', 'null'],
    ])
    expect(orders[0]!.headers).toMatchObject({ 'access-control-request-method': 'POST' })
  })

  test('GraphQL where the page sent it, sharing the limit with /graphql and /api/graphql; documents it links', () => {
    const calls = [
      apiCall('/gql', {}, { method: 'POST', graphql: true }),
      apiCall('/v2/gql', {}, { method: 'POST', graphql: true }),
      apiCall('/api/graphql', {}, { method: 'POST', graphql: true }),
    ]
    const html =
      '<footer><a href="/docs/openapi.yaml">API</a><a href="/swagger.json">again</a><a href="https://other.example/swagger.json">x</a></footer>'
    const plans = revealedPlans(pageWith(calls, html), SITE, sent)
    expect(plans.filter((p) => p.kind === 'graphql').map((p) => p.url)).toEqual(['https://example.com/gql'])
    expect(plans.filter((p) => p.kind === 'openapi').map((p) => [p.url, p.source])).toEqual([
      ['https://example.com/docs/openapi.yaml', 'link'],
    ])
  })

  test('every plan is a GET, an OPTIONS, or a POST of the introspection query; the most there can be fit the budget', () => {
    const calls = Array.from({ length: 20 }, (_, i) => apiCall(`/api/p${i}`, {}, { method: i % 2 ? 'DELETE' : 'GET', graphql: i < 5 }))
    const html = Array.from({ length: 9 }, (_, i) => `<a href="/d${i}/swagger.json">`).join('')
    const all = [...known, ...revealedPlans(pageWith(calls, html), SITE, sent)]
    expect(all.length).toBeLessThanOrEqual(API_PROBE_BUDGET)
    for (const p of all) {
      if (p.method === 'POST') expect([p.kind, p.body]).toEqual(['graphql', INTROSPECTION_QUERY])
      else expect(['GET', 'OPTIONS']).toContain(p.method)
    }
  })

  test('GraphQL requests are recognised by content type, JSON body or query string', () => {
    expect(isGraphqlRequest('application/json', '{"query":"query Q { me { id } }"}', 'https://x/api')).toBe(true)
    expect(isGraphqlRequest('application/graphql', '{ me { id } }', 'https://x/api')).toBe(true)
    expect(isGraphqlRequest(null, null, 'https://x/graphql?query=%7Bme%7Bid%7D%7D')).toBe(true)
    expect(isGraphqlRequest('application/json', '{"query":"shoes","page":2}', 'https://x/search')).toBe(false)
  })
})
