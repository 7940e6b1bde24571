// Probes of what the page revealed about its API: CORS on the same-site API paths its traffic used (a foreign
// Origin and "null"), GraphQL introspection where it sent GraphQL (and at /graphql, /api/graphql), and
// OpenAPI/Swagger documents it links to (and a few well-known paths), and under each API prefix the page used
// (/api, /rest) one path that cannot exist, for the error page it gets. Never a write: GET for what the page
// itself fetched with GET, OPTIONS (a preflight) for paths it used with another method, and one POST that
// carries only the introspection query. No redirect is followed; every request goes through the scan's
// egress proxy. Bounded by API_PROBE_BUDGET; the checks judge the answers by content.
import { API_ERROR_PROBE, API_PROBE_BUDGET, API_PROBE_LIMITS, GRAPHQL_PROBES, OPENAPI_PROBES } from '../../shared/checks/probe-paths.ts'
import type { ApiProbe, PageArtifact } from '../../shared/checks/types.ts'
import { registrableDomain } from '../../shared/checks/util/domains.ts'
import { startTags } from '../../shared/checks/util/html.ts'
import { BROWSER_USER_AGENT, fetchHop } from '../../shared/egress/http.ts'
import type { EgressProxy } from '../../shared/egress/proxy.ts'
import { mapLimit } from '../../shared/lib/async.ts'
import { CORS_PROBE_ORIGIN } from './cors-probe.ts'
import { GATHER_LIMITS } from './limits.ts'

/** One probe to send. */
export interface ApiProbePlan {
  kind: ApiProbe['kind']
  url: string
  method: ApiProbe['method']
  source: ApiProbe['source']
  origin?: string
  headers?: Record<string, string>
  body?: string
}

/** The smallest introspection query that names the schema's types and their fields (admin-like operations). */
export const INTROSPECTION_QUERY = JSON.stringify({
  query: 'query IntrospectionQuery { __schema { queryType { name } mutationType { name } types { name kind fields { name } } } }',
})

const BODY_LIMIT: Record<ApiProbe['kind'], number> = { cors: 1024, graphql: 256 * 1024, openapi: 512 * 1024, error: 64 * 1024 }
const DOC_LINK = /(?:swagger|openapi|api-docs)[^/]*$|\/(?:swagger|openapi|api-docs)\//i

function graphqlPlan(url: string, source: ApiProbe['source']): ApiProbePlan {
  return {
    kind: 'graphql',
    url,
    method: 'POST',
    source,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: INTROSPECTION_QUERY,
  }
}

/** Well-known API documents and GraphQL endpoints of the origin: sent while the page loads. */
export function wellKnownPlans(origin: string): ApiProbePlan[] {
  return [
    ...OPENAPI_PROBES.map((p): ApiProbePlan => ({ kind: 'openapi', url: origin + p, method: 'GET', source: 'well-known' })),
    ...GRAPHQL_PROBES.map((p) => graphqlPlan(origin + p, 'well-known')),
  ]
}

const parse = (u: string, base?: string): URL | null => {
  try {
    const url = new URL(u, base)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null
  } catch {
    return null
  }
}

/** What the page's traffic and links reveal, besides the well-known plans already sent (`sent`: their URLs). */
export function revealedPlans(page: PageArtifact, finalUrl: string, sent: ReadonlySet<string>): ApiProbePlan[] {
  const site = registrableDomain(new URL(finalUrl).hostname)
  const sameSite = (u: URL) => registrableDomain(u.hostname) === site
  const calls = (page.api?.calls ?? []).filter((c) => {
    const u = parse(c.url)
    return u !== null && sameSite(u)
  })
  // CORS: distinct paths, JSON answers first (the API), never the page URL itself (the main CORS probe has it).
  const byPath = new Map<string, (typeof calls)[number]>()
  const jsonFirst = [...calls].sort(
    (a, b) => Number(/json/i.test(b.headers['content-type'] ?? '')) - Number(/json/i.test(a.headers['content-type'] ?? '')),
  )
  for (const c of jsonFirst) {
    const u = new URL(c.url)
    const key = u.origin + u.pathname
    if (key !== new URL(finalUrl).origin + new URL(finalUrl).pathname && !byPath.has(key)) byPath.set(key, c)
  }
  const plans: ApiProbePlan[] = []
  for (const c of [...byPath.values()].slice(0, API_PROBE_LIMITS.corsPaths)) {
    const get = c.method === 'GET' || c.method === 'HEAD'
    for (const origin of [CORS_PROBE_ORIGIN, 'null']) {
      plans.push({
        kind: 'cors',
        url: c.url,
        method: get ? 'GET' : 'OPTIONS',
        source: 'traffic',
        origin,
        headers: get ? { origin } : { origin, 'access-control-request-method': c.method, 'access-control-request-headers': 'content-type' },
      })
    }
  }
  // GraphQL: the endpoints the page sent GraphQL to, within the limit shared with the well-known ones.
  let graphql = [...sent].filter((u) => GRAPHQL_PROBES.some((p) => u.endsWith(p))).length
  const graphqlSeen = new Set(sent)
  for (const c of calls) {
    if (!c.graphql || graphql >= API_PROBE_LIMITS.graphql) continue
    const u = new URL(c.url)
    const url = u.origin + u.pathname
    if (graphqlSeen.has(url)) continue
    graphqlSeen.add(url)
    graphql++
    plans.push(graphqlPlan(url, 'traffic'))
  }
  // OpenAPI: documents linked from the page.
  const links = new Set<string>()
  for (const t of startTags(page.html, ['a', 'link'])) {
    const u = t.attrs.href ? parse(t.attrs.href.trim(), finalUrl) : null
    if (!u || !sameSite(u) || !DOC_LINK.test(u.pathname)) continue
    u.hash = ''
    if (!sent.has(u.href)) links.add(u.href)
    if (links.size >= API_PROBE_LIMITS.openapiLinks) break
  }
  for (const url of links) plans.push({ kind: 'openapi', url, method: 'GET', source: 'link' })
  plans.push(...errorPlans(jsonFirst))
  return plans
}

/** A file's name at the end of a path (/assets/i18n/en.json): a static file, not an API call. */
const FILE_NAME = /\/[^/]*\.[A-Za-z0-9]{1,5}$/

/** One GET of a path that cannot exist under each API prefix the page's calls used (JSON answers first), within the limit. */
function errorPlans(calls: readonly { url: string }[]): ApiProbePlan[] {
  const prefixes = new Set<string>()
  for (const c of calls) {
    if (prefixes.size >= API_PROBE_LIMITS.errorPaths) break
    const u = new URL(c.url)
    const segments = u.pathname.split('/').filter(Boolean)
    if (segments.length < 2 || FILE_NAME.test(u.pathname)) continue
    prefixes.add(`${u.origin}/${segments[0]}/`)
  }
  return [...prefixes].map((p) => ({ kind: 'error', url: p + API_ERROR_PROBE, method: 'GET', source: 'traffic' }))
}

export async function sendApiProbe(plan: ApiProbePlan, proxy: EgressProxy, timeoutMs: number): Promise<ApiProbe> {
  const hop = await fetchHop(proxy, plan.url, {
    method: plan.method,
    userAgent: BROWSER_USER_AGENT,
    headers: { accept: 'application/json, */*;q=0.5', ...plan.headers },
    ...(plan.body !== undefined ? { body: plan.body } : {}),
    timeoutMs,
    bodyLimit: BODY_LIMIT[plan.kind],
    anyCertificate: true,
  })
  const base = { kind: plan.kind, url: plan.url, method: plan.method, source: plan.source, ...(plan.origin ? { origin: plan.origin } : {}) }
  if (!hop.ok)
    return { ...base, status: 0, headers: {}, contentType: '', body: '', bodyTruncated: false, error: `${hop.code}: ${hop.reason}` }
  const headers: Record<string, string> = {}
  hop.headers.forEach((v, k) => {
    if (k !== 'set-cookie') headers[k] = v
  })
  const keepBody = plan.kind !== 'cors' && !hop.readError
  return {
    ...base,
    status: hop.status,
    headers,
    contentType: headers['content-type'] ?? '',
    body: keepBody ? Buffer.from(hop.body).toString('utf8') : '',
    bodyTruncated: hop.truncated,
    error: null,
  }
}

export function sendApiProbes(plans: readonly ApiProbePlan[], proxy: EgressProxy, timeoutMs: number): Promise<ApiProbe[]> {
  return mapLimit(plans, GATHER_LIMITS.probeConcurrency, (p) => sendApiProbe(p, proxy, timeoutMs))
}

/** How many API probes of each kind were sent, against API_PROBE_BUDGET: what the report states. */
export function apiProbeCounts(probes: readonly ApiProbe[]) {
  const of = (kind: ApiProbe['kind']) => probes.filter((p) => p.kind === kind).length
  return {
    budget: API_PROBE_BUDGET,
    sent: probes.length,
    cors: of('cors'),
    graphql: of('graphql'),
    openapi: of('openapi'),
    errors: of('error'),
  }
}
