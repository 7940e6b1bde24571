// The API describing itself to anyone: GraphQL introspection at the endpoints the page sends GraphQL to (and
// /graphql, /api/graphql), and OpenAPI/Swagger documents the page links to (and a few well-known paths),
// each confirmed by content: an SPA's index.html at /swagger.json is not a document.

import type { ApiProbe, CheckOutcome } from '../types.ts'
import { defineCheck } from '../types.ts'
import { readApiDocument, readIntrospection } from '../util/api-docs.ts'

/** GraphQL endpoints that answered the introspection query with a schema. */
function openIntrospection(probes: readonly ApiProbe[]) {
  const sent = probes.filter((p) => p.kind === 'graphql')
  const open = sent
    .map((p) => ({ url: p.url, source: p.source, schema: p.status === 200 ? readIntrospection(p.body) : null }))
    .filter((x) => x.schema !== null)
  if (open.length === 0) return { sent: sent.length, evidence: null }
  const first = open[0]!
  return {
    sent: sent.length,
    evidence: { url: first.url, source: first.source, ...first.schema!, alsoAt: open.slice(1, 3).map((o) => o.url) },
  }
}

/** The OpenAPI/Swagger document naming the most internal operations (the same document at several paths is one). */
function publicDocument(probes: readonly ApiProbe[]) {
  const sent = probes.filter((p) => p.kind === 'openapi')
  const found = sent
    .filter((p) => p.status === 200)
    .map((p) => ({ url: p.url, source: p.source, doc: readApiDocument(p.body) }))
    .filter((x) => x.doc !== null)
  if (found.length === 0) return { sent: sent.length, evidence: null, internal: 0, linked: false }
  const worst = [...found].sort((a, b) => b.doc!.internalCount - a.doc!.internalCount)[0]!
  const d = worst.doc!
  return {
    sent: sent.length,
    internal: d.internalCount,
    // Linked from the page: published on purpose. Found only at a well-known path: documentation of an API
    // the site does not advertise.
    linked: found.some((f) => f.source === 'link'),
    evidence: {
      url: worst.url,
      source: worst.source,
      format: `${d.format} ${d.version}`,
      operations: d.operations,
      internalOperations: d.internalCount,
      internal: d.internal,
    },
  }
}

export const exposedApiDocs = defineCheck({
  id: 'exposed-api-docs',
  category: 'exposure',
  title: "The API's schema is not handed to anyone",
  failTitle: "The API's schema is open to anyone",
  description:
    'Sends the GraphQL introspection query (one POST) to the endpoints the page sent GraphQL to while it loaded and to ' +
    '/graphql and /api/graphql, and fetches the OpenAPI/Swagger documents the page links to and /swagger.json, /openapi.json, ' +
    '/v3/api-docs and /api-docs; reads what they describe.',
  why:
    'Introspection hands anyone the whole GraphQL schema, admin mutations included; an OpenAPI document listing admin, ' +
    'internal or debug operations tells anyone which endpoints to try first, with their parameters. Both are usually on by ' +
    'accident (GraphQL servers enable introspection by default; generators document every route).',
  confirmation:
    'Confirmed by content only: an introspection answer holds data.__schema with a types list; a document is JSON or YAML with ' +
    'an "openapi" or "swagger" version and a "paths" object (an index.html, a 404 page, an error saying introspection is ' +
    'disabled are not). Fails (medium) when introspection answers, or a document names operations whose path segment or tag ' +
    'says admin, internal, debug, private, management, actuator, staff, ops or backoffice. A document that names none is ' +
    'info when the page links to it (published on purpose), and warns (low) when it was found only at a well-known path ' +
    "(/api-docs, /swagger.json): the site does not advertise it, yet it maps the API's routes and parameters for anyone. " +
    'Evidence: the URL and where it was found (link, traffic or well-known path), counts of types, queries, mutations ' +
    'or operations, and up to 5 admin or internal names.',
  severity: 'medium',
  fix: {
    generic:
      'Disable GraphQL introspection in production (Apollo Server: introspection: false, the default when NODE_ENV=production; ' +
      'graphql-yoga: the disableIntrospection plugin; Hasura: off for the anonymous role). Serve API documents only to the ' +
      'people who need them (behind authentication or on an internal host), or generate the public one from public routes only.',
    express:
      "Apollo: new ApolloServer({ typeDefs, resolvers, introspection: process.env.NODE_ENV !== 'production' }). Docs: mount swagger-ui-express / the JSON only outside production or behind auth, and keep admin routes out of the spec's apis globs.",
    nextjs:
      "In app/api/graphql/route.ts: createYoga({ schema, plugins: process.env.NODE_ENV === 'production' ? [useDisableIntrospection()] : [] }). Do not ship a generated openapi.json in public/; serve it from a route handler that checks the session.",
    vercel:
      "Apollo on Vercel functions: introspection: process.env.VERCEL_ENV !== 'production'. Remove generated API documents from the deployed static files, or serve them from a function that checks the session.",
    netlify:
      "In the GraphQL Function: introspection: process.env.CONTEXT !== 'production'. Remove API documents from the publish directory, or serve them from a Function that checks the session.",
    nginx:
      'Fix the GraphQL server (nginx does not read request bodies). Refuse API documents to the public:\nlocation ~ ^/(api/v\\d+/)?(swagger|openapi)\\.(json|ya?ml)$ { allow 10.0.0.0/8; deny all; }',
    cloudflare:
      'Put API documents behind Cloudflare Access (Zero Trust > Access > Applications). For GraphQL, fix the server; a WAF ' +
      'custom rule on http.request.body.raw contains "__schema" helps meanwhile on plans with body inspection.',
  },
  requires: ['apiProbes'],
  run: ({ apiProbes }): CheckOutcome => {
    const gql = openIntrospection(apiProbes)
    const doc = publicDocument(apiProbes)
    const evidence: Record<string, unknown> = {
      probed: { graphql: gql.sent, openapi: doc.sent },
      ...(gql.evidence ? { graphql: gql.evidence } : {}),
      ...(doc.evidence ? { openapi: doc.evidence } : {}),
    }
    const parts: string[] = []
    if (gql.evidence) {
      const g = gql.evidence
      parts.push(
        `${g.url} answers introspection (${g.types} types, ${g.mutations} mutations${g.internal.length ? `, e.g. ${g.internal.slice(0, 2).join(', ')}` : ''})`,
      )
    }
    if (doc.evidence && doc.internal > 0) {
      const d = doc.evidence
      parts.push(`${d.url} lists ${d.internalOperations} admin or internal operation(s) (e.g. ${d.internal[0]})`)
    }
    if (parts.length) return { status: 'fail', evidence, summary: `${parts.join('; ')}.` }
    if (doc.evidence) {
      const ops = `${doc.evidence.operations} operation${doc.evidence.operations === 1 ? '' : 's'}, none admin or internal`
      if (doc.linked) return { status: 'info', severity: 'info', evidence, summary: `Public API document at ${doc.evidence.url}, ${ops}.` }
      return {
        status: 'warn',
        severity: 'low',
        evidence,
        summary: `API document at ${doc.evidence.url}, which the page does not link (${ops}): it maps the API for anyone who asks.`,
      }
    }
    return { status: 'pass', evidence, summary: 'No API schema.' }
  },
})
