// A short reason for each disagreement between the Observatory and us, read from both sides' evidence.
// Known causes are recognised by what they look like in the data; anything else gets both sides' own words,
// so a new kind of disagreement is never hidden behind a canned sentence.
import type { ObservatoryTest } from './observatory.ts'
import type { OurCheck } from './ours.ts'
import type { TestMapping, Verdict } from './mapping.ts'

/** The Origin the Observatory sends on its CORS preflight (its config's retriever.corsOrigin default). */
export const OBSERVATORY_CORS_ORIGIN = 'https://http-observatory.security.mozilla.org'

export interface Disagreement {
  site: string
  test: string
  theirs: string
  ours: string
  why: string
  /** A stable key for the kind of disagreement, used by the docs. */
  kind: string
}

const BROAD = new Set(['*', 'http:', 'https:', 'http://*', 'https://*'])
const hasNoRegistrableDomain = (host: string) => host === 'localhost' || /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[')

function firstSummary(m: TestMapping, checks: ReadonlyMap<string, OurCheck>): string {
  for (const id of m.checks) {
    const c = checks.get(id)
    if (c && c.status !== 'pass' && c.status !== 'info') return `${id}: ${c.summary}`
  }
  const c = checks.get(m.checks[0]!)
  return c ? `${c.id}: ${c.summary}` : 'no check'
}

export function explain(
  m: TestMapping,
  theirTest: ObservatoryTest | undefined,
  theirVerdict: Verdict,
  oursVerdict: Verdict,
  checks: ReadonlyMap<string, OurCheck>,
  siteHost: string,
): { why: string; kind: string } {
  const result = theirTest?.result ?? 'missing'
  const data = theirTest?.data

  if (oursVerdict === 'n/a') return { why: `our side has no verdict: ${firstSummary(m, checks)}`, kind: 'ours-missing' }
  if (theirVerdict === 'n/a') return { why: 'the Observatory returned no result for this test', kind: 'theirs-missing' }

  switch (m.test) {
    case 'cross-origin-resource-sharing': {
      const acao = typeof data === 'string' ? data : ''
      if (theirVerdict === 'pass' && acao === OBSERVATORY_CORS_ORIGIN) {
        return {
          why:
            `their own Origin came back in Access-Control-Allow-Origin with credentials, but 1.4.8 reads the Origin it sent from ` +
            `response.request.headers, which Node's ClientRequest does not have, so reflection is never "universal access"`,
          kind: 'cors-origin-never-read',
        }
      }
      if (theirVerdict === 'pass' && acao === 'null') {
        return {
          why: 'Access-Control-Allow-Origin: null with credentials: they call it restricted access; any site can send Origin: null from a sandboxed iframe',
          kind: 'cors-null-origin',
        }
      }
      break
    }
    case 'subresource-integrity':
      if (theirVerdict === 'pass' && oursVerdict === 'fail' && hasNoRegistrableDomain(siteHost)) {
        return {
          why: `their same-site test compares registrable domains (tldts), which ${siteHost} and IP addresses do not have (null === null), so scripts from another loopback host count as first-party; we treat such hosts as standing for themselves`,
          kind: 'sri-loopback-domain',
        }
      }
      break
    case 'x-frame-options': {
      if (theirVerdict === 'pass' && result === 'x-frame-options-allow-from-origin') {
        return {
          why: 'X-Frame-Options ALLOW-FROM: they pass it; browsers ignore ALLOW-FROM, so nothing stops framing',
          kind: 'xfo-allow-from',
        }
      }
      const csp = frameAncestorsOf(checks)
      if (theirVerdict === 'pass' && result === 'x-frame-options-implemented-via-csp' && csp.some((s) => BROAD.has(s))) {
        return {
          why: `any frame-ancestors passes for them, even "${csp.join(' ')}", which lets every site frame the page`,
          kind: 'xfo-broad-frame-ancestors',
        }
      }
      break
    }
    case 'x-content-type-options':
      if (theirVerdict === 'fail' && result === 'x-content-type-options-header-invalid' && oursVerdict === 'pass') {
        return {
          why: `the header is repeated ("${String(theirTest?.data ?? '')}"): they compare the joined value with "nosniff"; browsers read the first value (Fetch, "determine nosniff")`,
          kind: 'xcto-repeated',
        }
      }
      break
    case 'strict-transport-security':
      if (
        theirVerdict === 'fail' &&
        result === 'hsts-header-invalid' &&
        oursVerdict === 'pass' &&
        String(theirTest?.data ?? '').includes(',')
      ) {
        return {
          why: `the value holds a comma ("${String(theirTest?.data ?? '')}"): they reject any comma; we read the part before it as the first header. Chromium uses the first of several header lines but ignores a single line holding a comma (ground truth below); both sides see the lines already joined, so neither can tell the two apart`,
          kind: 'hsts-comma',
        }
      }
      break
    case 'content-security-policy':
      if (theirVerdict === 'fail' && result === 'csp-implemented-with-unsafe-inline' && checks.get('csp')?.status === 'warn') {
        const d = (data ?? {}) as Record<string, string[]>
        if (!d['object-src'] && !d['default-src']) {
          return {
            why:
              'neither object-src nor default-src is set: they count plugins as unrestricted and fail the policy; we judge scripts ' +
              "(restricted here) and warn about the missing object-src 'none'",
            kind: 'csp-object-src-missing',
          }
        }
      }
      break
    case 'cookies': {
      const httpOnly = checks.get('cookie-httponly')
      if (theirVerdict === 'pass' && httpOnly?.status === 'fail') {
        const names = (httpOnly.evidence.sessionWithoutHttpOnly as string[] | undefined) ?? []
        return {
          why: `session cookie names differ: they only treat names containing "login" or "sess" as session cookies; ours also matches ${names.join(', ')} (token/auth/sid/jwt...)`,
          kind: 'cookie-session-names',
        }
      }
      break
    }
    case 'cross-origin-resource-policy':
      if (theirVerdict === 'pass' && oursVerdict === 'fail') {
        return {
          why: `they lower-case the value before comparing; browsers match the exact tokens same-origin, same-site, cross-origin, so "${String(checks.get('cross-origin-isolation')?.evidence.crossOriginResourcePolicy ?? '')}" is ignored`,
          kind: 'corp-case',
        }
      }
      break
  }
  return { why: `theirs ${result}; ours ${firstSummary(m, checks)}`, kind: 'unexplained' }
}

/** frame-ancestors as frame-protection reported it (space-separated), for the frame-options explanation. */
function frameAncestorsOf(checks: ReadonlyMap<string, OurCheck>): string[] {
  const fa = checks.get('frame-protection')?.evidence.frameAncestors
  return typeof fa === 'string' ? fa.split(/\s+/).filter(Boolean) : []
}
