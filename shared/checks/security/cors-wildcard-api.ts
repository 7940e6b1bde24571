// API answers that every website may read (Access-Control-Allow-Origin: *): the page's own API traffic and the
// API probes' answers. Browsers never share a "*" answer to a request with cookies, so this is only ever what an
// anonymous caller gets; it matters where the data is not public (an intranet, an IP allow-list, a VPN).

import { type ApiCall, type ApiProbe, type CheckOutcome, defineCheck } from '../types.ts'
import { registrableDomain } from '../util/domains.ts'
import { headerValue, hostOf } from '../util/http.ts'

const MAX_LISTED = 5
const API_TYPE = /json|graphql|problem/i

interface ApiAnswer {
  url: string
  source: 'page' | 'probe'
  wildcard: boolean
  /** Access-Control-Allow-Credentials: true next to "*" (browsers refuse the combination). */
  credentialsHeader: boolean
  /** The page sent the call with a Cookie or Authorization header. */
  credentialedCall: boolean
}

function answerOf(url: string, headers: Record<string, string>, source: ApiAnswer['source'], credentialedCall: boolean): ApiAnswer {
  return {
    url,
    source,
    wildcard: headerValue(headers, 'access-control-allow-origin')?.trim() === '*',
    credentialsHeader: headerValue(headers, 'access-control-allow-credentials') === 'true',
    credentialedCall,
  }
}

/** Same-site successful JSON answers: the page's own calls first, then the API probes', one per path. */
export function apiAnswers(finalUrl: string, calls: readonly ApiCall[], probes: readonly ApiProbe[]): ApiAnswer[] {
  const site = registrableDomain(hostOf(finalUrl) ?? '')
  const sameSite = (u: string) => {
    const host = hostOf(u)
    return host !== null && registrableDomain(host) === site
  }
  const ok = (status: number, headers: Record<string, string>) =>
    status >= 200 && status < 300 && API_TYPE.test(headerValue(headers, 'content-type') ?? '')
  const out = new Map<string, ApiAnswer>()
  const add = (a: ApiAnswer) => {
    const u = new URL(a.url)
    const key = u.origin + u.pathname
    const known = out.get(key)
    if (!known || (a.wildcard && !known.wildcard)) out.set(key, a)
  }
  for (const c of calls) if (sameSite(c.url) && ok(c.status, c.headers)) add(answerOf(c.url, c.headers, 'page', c.credentialed))
  for (const p of probes) if (sameSite(p.url) && ok(p.status, p.headers)) add(answerOf(p.url, p.headers, 'probe', false))
  return [...out.values()]
}

export const corsWildcardApi = defineCheck({
  id: 'cors-wildcard-api',
  category: 'security',
  title: 'API answers are not shared with every website',
  failTitle: 'API answers are shared with every website (Access-Control-Allow-Origin: *)',
  description:
    "Reads Access-Control-Allow-Origin on the successful JSON answers the page's own same-site API calls got while it loaded, " +
    'and on those of the API probes (the CORS probes of those paths, GraphQL endpoints, API documents).',
  why:
    '"Access-Control-Allow-Origin: *" lets every website read the answer from its visitors\u2019 browsers. That is right for public ' +
    'data. Browsers never send cookies with such a request, so a signed-in visitor\u2019s data is not shared, but whatever the ' +
    'server answers an anonymous caller because of where the request comes from (an office network, a VPN, an IP allow-list, a ' +
    'service on localhost) is handed to any site that visitor opens.',
  confirmation:
    'Warns (low) when at least one same-site 2xx answer with a JSON, GraphQL or problem+json content type carries exactly "*". ' +
    'Not findings: "*" on HTML pages, images or scripts, answers of other sites (third-party APIs), error answers, a fixed or ' +
    'reflected origin (cors-credentialed-reflection judges reflection). Skipped when the page made no same-site API call with ' +
    'such an answer and no API probe got one. Evidence: how many API answers were read and allow every origin, and up to 5 of ' +
    'them with where they came from and whether the page called them with credentials.',
  severity: 'low',
  fix: {
    generic:
      'Keep "Access-Control-Allow-Origin: *" for data that is public. For everything else, answer only your own front-ends: ' +
      'compare the Origin with a fixed allow-list, echo it with "Vary: Origin", or send no CORS headers when the API is only ' +
      'called from the same origin.',
    express:
      "cors() with no options sends * on every answer. Allow your front-end only:\napp.use('/api', cors({ origin: ['https://app.example.com'] }))\nand keep cors() on the public routes alone.",
    nextjs:
      'Remove "Access-Control-Allow-Origin: *" from next.config.js headers() or middleware for private routes; same-origin ' +
      'fetches need no CORS headers. Set it only on the route handlers that serve public data.',
    vercel:
      'In vercel.json, scope the header to public paths: { "source": "/api/public/(.*)", "headers": [{ "key": ' +
      '"Access-Control-Allow-Origin", "value": "*" }] }, not "/(.*)".',
    netlify:
      'In public/_headers (or netlify.toml [[headers]]), set "Access-Control-Allow-Origin: *" only under the public paths, not ' +
      'under /*.',
    django:
      'django-cors-headers: replace CORS_ALLOW_ALL_ORIGINS = True with CORS_ALLOWED_ORIGINS = ["https://app.example.com"], or ' +
      'CORS_URLS_REGEX = r"^/api/public/.*$" for public data only.',
    rails:
      "rack-cors: in config/initializers/cors.rb, origins 'https://app.example.com' instead of origins '*', or resource '/api/public/*' only.",
    nginx:
      'Send the header only where the data is public:\nlocation /api/public/ {\n  add_header Access-Control-Allow-Origin * always;\n}\nand ' +
      'remove add_header Access-Control-Allow-Origin * from the server block.',
    apache:
      'Scope it to public paths:\n<Location "/api/public/">\n  Header always set Access-Control-Allow-Origin "*"\n</Location>\n' +
      'and remove Header set Access-Control-Allow-Origin "*" from the vhost or .htaccess.',
    caddy:
      'Set the header only on public paths:\n@public path /api/public/*\nheader @public Access-Control-Allow-Origin *\nand drop it from ' +
      'the site-wide header directive.',
    iis:
      'Remove <add name="Access-Control-Allow-Origin" value="*" /> from <customHeaders> in the site\u2019s web.config; add it in a ' +
      '<location path="api/public"> element only.',
    cloudflare:
      'If a Transform Rule or Worker adds "Access-Control-Allow-Origin: *", scope it to the public paths (Rules > Transform ' +
      'Rules > Modify Response Header, with a path filter), and fix the origin server the same way.',
  },
  requires: ['target'],
  optional: ['page', 'apiProbes'],
  run: ({ target, page, apiProbes }): CheckOutcome => {
    const answers = apiAnswers(target.finalUrl, page?.api?.calls ?? [], apiProbes ?? [])
    if (answers.length === 0)
      return {
        status: 'skipped',
        evidence: { apiAnswers: 0 },
        summary: 'Not applicable: no same-site API answer (JSON) from the page or the API probes.',
      }
    const wildcard = answers.filter((a) => a.wildcard)
    const evidence: Record<string, unknown> = { apiAnswers: answers.length, wildcard: wildcard.length }
    if (wildcard.length === 0) return { status: 'pass', evidence, summary: `None of ${answers.length} API answer(s) allows every origin.` }
    evidence.answers = wildcard.slice(0, MAX_LISTED).map(({ wildcard: _, credentialsHeader, ...a }) => ({
      ...a,
      ...(credentialsHeader ? { credentialsHeader: 'ignored by browsers next to *' } : {}),
    }))
    const first = wildcard[0]!
    return {
      status: 'warn',
      severity: 'low',
      evidence,
      summary:
        `${wildcard.length} of ${answers.length} API answer(s), e.g. ${first.url}, let any website read them ` +
        '(Access-Control-Allow-Origin: *): fine for public data, not for data meant only for your own front-end or for ' +
        'callers on a trusted network.',
    }
  },
})
