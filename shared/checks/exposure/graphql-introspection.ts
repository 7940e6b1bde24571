// GraphQL introspection answered to anyone, at the endpoints the page sends GraphQL to and at /graphql,
// /api/graphql: one POST of the introspection query each (crawler/gather/api-probes.ts).

import { defineCheck } from '../types.ts'
import { readIntrospection } from '../util/api-docs.ts'

export const graphqlIntrospection = defineCheck({
  id: 'graphql-introspection',
  category: 'exposure',
  title: 'GraphQL introspection is off for anonymous callers',
  failTitle: 'GraphQL introspection is open to anyone',
  description:
    'Sends the GraphQL introspection query (one POST, nothing else) to the endpoints the page sent GraphQL to while it loaded, ' +
    'and to /graphql and /api/graphql, and reads whether the answer describes the schema.',
  why:
    'Introspection hands anyone the whole schema: every query, mutation and field, including admin operations the interface ' +
    'never shows. It is the map an attacker would otherwise have to guess, and GraphQL servers enable it by default.',
  confirmation:
    'Fails (medium) only when an answer holds data.__schema with a types list: an index.html, a 404 or an error saying ' +
    'introspection is disabled is not a finding. Evidence: the endpoint, how many types, queries and mutations, and up to 5 ' +
    'query or mutation names that say admin, internal or debug. Skipped when no probe could be made.',
  severity: 'medium',
  fix: {
    generic:
      'Disable introspection in production (Apollo Server: introspection: false, the default when NODE_ENV=production; ' +
      'graphql-yoga: the disableIntrospection plugin; Hasura: disable it for the anonymous role), and protect admin ' +
      'mutations with authorization rather than obscurity.',
    vercel: "Apollo on Vercel functions: new ApolloServer({ schema, introspection: process.env.VERCEL_ENV !== 'production' }).",
    netlify:
      "In the GraphQL Function: new ApolloServer({ schema, introspection: process.env.CONTEXT !== 'production' }), or the " +
      'graphql-yoga disableIntrospection plugin.',
    nextjs:
      "In app/api/graphql/route.ts: createYoga({ schema, plugins: process.env.NODE_ENV === 'production' ? [useDisableIntrospection()] : [] }) (@graphql-yoga/plugin-disable-introspection), or Apollo's introspection: false.",
    nginx:
      'Fix the GraphQL server. Meanwhile, refuse introspection bodies at the proxy (request bodies are not inspected by nginx ' +
      'alone; use the server option or a WAF).',
    cloudflare:
      'Fix the GraphQL server. Meanwhile, a WAF custom rule can block requests to /graphql whose body contains "__schema" ' +
      '(http.request.body.raw contains "__schema"), on plans with body inspection.',
    express:
      "With Apollo Server: new ApolloServer({ typeDefs, resolvers, introspection: process.env.NODE_ENV !== 'production' }); with graphql-http, add a validation rule such as NoSchemaIntrospectionCustomRule from graphql.",
  },
  requires: ['apiProbes'],
  run: ({ apiProbes }) => {
    const sent = apiProbes.filter((p) => p.kind === 'graphql')
    const answered = sent.filter((p) => p.status !== 0)
    if (answered.length === 0) {
      return { status: 'skipped', evidence: { probed: sent.length }, summary: 'Not applicable: no GraphQL endpoint could be asked.' }
    }
    const open = answered
      .map((p) => ({ url: p.url, source: p.source, schema: p.status === 200 ? readIntrospection(p.body) : null }))
      .filter((x) => x.schema !== null)
    if (open.length === 0) {
      return {
        status: 'pass',
        evidence: { probed: sent.length },
        summary: `No introspection answer from ${sent.length} GraphQL endpoint(s) asked.`,
      }
    }
    const first = open[0]!
    const s = first.schema!
    return {
      status: 'fail',
      evidence: { probed: sent.length, url: first.url, source: first.source, ...s, alsoAt: open.slice(1, 4).map((o) => o.url) },
      summary:
        `${first.url} answers the introspection query to anyone: ${s.types} types, ${s.queries} queries, ${s.mutations} mutations` +
        `${s.internal.length ? ` (e.g. ${s.internal.slice(0, 2).join(', ')})` : ''}.`,
    }
  },
})
