// Answers to the page's credentialed API calls that a shared cache (a CDN, a proxy) may store and hand to
// the next visitor (RFC 9111 §3.5, §5.2.2): judged from the headers the page already got.

import { type ApiCall, type CheckOutcome, defineCheck } from '../types.ts'
import { headerValue } from '../util/http.ts'

const MAX_LISTED = 5

/** How a shared cache may treat an answer: explicitly allowed to store it, possibly stored, or not. */
export function sharedCacheability(call: ApiCall): 'allowed' | 'possible' | 'no' {
  const cc = (headerValue(call.headers, 'cache-control') ?? '').toLowerCase()
  if (/\b(?:no-store|private)\b/.test(cc)) return 'no'
  const sMaxAge = /\bs-maxage\s*=\s*"?(\d+)/.exec(cc)
  if (/\bpublic\b/.test(cc) || (sMaxAge && Number(sMaxAge[1]) > 0)) return 'allowed'
  const maxAge = /\bmax-age\s*=\s*"?(\d+)/.exec(cc)
  // Authorization: a shared cache must not store the answer without public, s-maxage or must-revalidate.
  if (call.authorization) return 'no'
  return maxAge && Number(maxAge[1]) > 0 ? 'possible' : 'no'
}

export const apiCacheAuthenticated = defineCheck({
  id: 'api-cache-authenticated',
  category: 'security',
  title: 'Answers to signed-in API calls are kept out of shared caches',
  failTitle: 'Answers to signed-in API calls may be stored by shared caches',
  description:
    "Reads the Cache-Control and Expires headers of the answers the page's own fetch/XHR calls got when they carried a Cookie " +
    'or an Authorization header (no request of ours).',
  why:
    'A CDN or proxy that stores an answer made for one signed-in user serves it to the next visitor who asks for the same URL: ' +
    "another person's account data, tokens or CSRF values.",
  confirmation:
    'Fails (medium) when a 2xx answer to a credentialed call says "public" or "s-maxage" above 0 without "private" or ' +
    '"no-store": every shared cache may store it. Warns (low) when such an answer to a call with cookies has max-age above 0 ' +
    'and neither "private" nor "no-store": shared caches configured to cache it will. Not findings: ' +
    'answers to anonymous calls, "private" or "no-store", and calls with an Authorization header without "public" or ' +
    's-maxage (shared caches must not store those). Evidence: up to 5 URLs with their Cache-Control.',
  severity: 'medium',
  fix: {
    generic:
      'Send "Cache-Control: private, no-store" on every answer that depends on who is signed in (and "Vary: Cookie" ' +
      'if a cache must see it at all).',
    express: "In the API router: router.use((req, res, next) => { res.set('Cache-Control', 'private, no-store'); next() })",
    nextjs:
      "In route handlers for signed-in data: return NextResponse.json(data, { headers: { 'Cache-Control': 'private, no-store' } }), and export const dynamic = 'force-dynamic'.",
    vercel:
      "Set 'Cache-Control: private, no-store' in the function's answer; never s-maxage or public on user data (Vercel's CDN honours them).",
    netlify: "Return 'Cache-Control': 'private, no-store' from the Function, and no Netlify-CDN-Cache-Control on user data.",
    nginx:
      'In the API location: add_header Cache-Control "private, no-store" always; and proxy_no_cache $http_authorization $cookie_session;',
    cloudflare:
      'Add a Cache Rule bypassing the cache for /api/* when a session cookie or Authorization header is present, and send ' +
      '"Cache-Control: private, no-store" from the origin.',
  },
  requires: ['page'],
  run: ({ page }): CheckOutcome => {
    if (!page.api) return { status: 'skipped', evidence: {}, summary: "Not applicable: the page's API traffic was not recorded." }
    const calls = page.api.calls.filter((c) => c.credentialed && c.status >= 200 && c.status < 300)
    const judged = calls.map((c) => ({ c, how: sharedCacheability(c) })).filter((x) => x.how !== 'no')
    const evidence: Record<string, unknown> = { credentialedAnswers: calls.length }
    if (judged.length === 0) {
      return {
        status: 'pass',
        evidence,
        summary: `No cacheable signed-in answer (${calls.length}).`,
      }
    }
    judged.sort((a, b) => Number(b.how === 'allowed') - Number(a.how === 'allowed'))
    evidence.cacheable = judged
      .slice(0, MAX_LISTED)
      .map(({ c, how }) => ({ url: c.url, cacheControl: headerValue(c.headers, 'cache-control'), how }))
    const first = judged[0]!
    const summary = `${first.c.url} answers a credentialed call with Cache-Control "${headerValue(first.c.headers, 'cache-control') ?? ''}"${judged.length > 1 ? ` (and ${judged.length - 1} other answer(s))` : ''}.`
    return first.how === 'allowed' ? { status: 'fail', evidence, summary } : { status: 'warn', severity: 'low', evidence, summary }
  },
})
