// OpenAPI/Swagger documents served to anyone: the ones the page links to and a few well-known paths,
// confirmed by content (an SPA's index.html at /swagger.json is not one).

import { defineCheck } from '../types.ts'
import { readApiDocument } from '../util/api-docs.ts'

export const exposedApiDocs = defineCheck({
  id: 'exposed-api-docs',
  category: 'exposure',
  title: 'No API description names admin or internal operations',
  failTitle: 'A public API description names admin or internal operations',
  description:
    'Fetches the OpenAPI/Swagger documents the page links to and /swagger.json, /openapi.json, /v3/api-docs and /api-docs, ' +
    'and reads their operations.',
  why:
    'A public API description is often meant to be public; one that lists admin, internal or debug operations tells anyone ' +
    'which endpoints to try first, with their parameters, and is usually generated from the whole code base by accident.',
  confirmation:
    'A document counts only when its content is one: JSON or YAML with an "openapi" or "swagger" version and a "paths" object ' +
    "(an index.html, a 404 page or JSON of another shape is not). Fails (medium) when an operation's path segment or tag says " +
    'admin, internal, debug, private, management, actuator, staff, ops or backoffice; info when a document is public without ' +
    'them. Evidence: the URL, where it was found (link or well-known path), the number of operations and up to 5 internal ones.',
  severity: 'medium',
  fix: {
    generic:
      'Serve the API description only to the people who need it (behind authentication or on an internal host), or generate the ' +
      'public one from the public operations only, leaving admin and internal routes out.',
    express:
      "Mount swagger-ui-express / the JSON only outside production, or behind auth: if (process.env.NODE_ENV !== 'production') app.use('/api-docs', swaggerUi.serve, swaggerUi.setup(spec)). Exclude admin routes from the spec's apis globs.",
    nextjs: 'Do not ship the generated openapi.json in public/; serve it from a route handler that checks the session.',
    vercel:
      'Remove the generated document from the deployed static files (public/ or the build output), or serve it from a ' +
      'function that checks the session; keep admin routes out of the generated spec.',
    netlify:
      'Remove the document from the publish directory, or serve it from a Function that checks the session; keep admin routes ' +
      'out of the generated spec.',
    nginx: 'Refuse the documents to the public:\nlocation ~ ^/(api/vd+/)?(swagger|openapi).(json|ya?ml)$ { allow 10.0.0.0/8; deny all; }',
    cloudflare:
      'Put the API documents behind Cloudflare Access (Zero Trust > Access > Applications, path /api/*/swagger.json), or block ' +
      'them with a WAF custom rule for everyone outside your team.',
  },
  requires: ['apiProbes'],
  run: ({ apiProbes }) => {
    const sent = apiProbes.filter((p) => p.kind === 'openapi')
    const found = sent
      .filter((p) => p.status === 200)
      .map((p) => ({ url: p.url, source: p.source, doc: readApiDocument(p.body) }))
      .filter((x) => x.doc !== null)
    // The same document served at several paths is one.
    const seen = new Set<string>()
    const docs = found.filter((x) => {
      const key = `${x.doc!.operations}:${x.doc!.internal.join(',')}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
    if (docs.length === 0) {
      return { status: 'pass', evidence: { probed: sent.length }, summary: `No API description served at ${sent.length} path(s) tried.` }
    }
    const worst = [...docs].sort((a, b) => b.doc!.internalCount - a.doc!.internalCount)[0]!
    const d = worst.doc!
    const evidence = {
      probed: sent.length,
      url: worst.url,
      source: worst.source,
      format: `${d.format} ${d.version}`,
      operations: d.operations,
      internalOperations: d.internalCount,
      internal: d.internal,
      alsoAt: found
        .filter((x) => x.url !== worst.url)
        .slice(0, 3)
        .map((x) => x.url),
    }
    if (d.internalCount > 0) {
      return {
        status: 'fail',
        evidence,
        summary: `${worst.url} describes ${d.operations} operations to anyone, ${d.internalCount} of them admin or internal (e.g. ${d.internal[0]}).`,
      }
    }
    return {
      status: 'info',
      severity: 'info',
      evidence,
      summary: `${worst.url} describes ${d.operations} operations to anyone; none named admin or internal.`,
    }
  },
})
