// How each of the Observatory's ten tests maps onto our checks, and how both sides' answers become one
// pass/fail verdict per test so they can be compared.
//
// Theirs: a test passes when its `result` is in `theirPass` below, which is the list its own source
// (@mdn/mdn-http-observatory 1.4.8, src/analyzer/tests/*.js) sets `pass = true` for; any other result fails.
// Their `pass` boolean is checked against that list on every run, so a drift in the package shows up.
// Ours: each mapping's `ours` function reads our check results (status, and for a few warns the evidence
// that says which case the warn is) and says pass, fail, or n/a (a check missing or crashed).
import type { OurCheck } from './ours.ts'

export type Verdict = 'pass' | 'fail' | 'n/a'

export interface OursVerdict {
  verdict: Verdict
  /** What our result was, briefly: "csp warn", "hsts skipped (http only)". */
  basis: string
}

export interface TestMapping {
  /** The Observatory test name (key of its `tests`). */
  test: string
  /** Our check ids the verdict reads. */
  checks: string[]
  /** Their result strings that pass; every other result fails. */
  theirPass: string[]
  /** Their result strings that fail (for the record and the docs; a result in neither list is flagged). */
  theirFail: string[]
  /** How our results become a verdict, in words (printed and documented). */
  rule: string
  ours(checks: ReadonlyMap<string, OurCheck>): OursVerdict
}

const str = (v: unknown) => (typeof v === 'string' ? v : null)
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

function need(checks: ReadonlyMap<string, OurCheck>, id: string): OurCheck | OursVerdict {
  const c = checks.get(id)
  if (!c) return { verdict: 'n/a', basis: `${id} missing from the report` }
  if (c.status === 'error') return { verdict: 'n/a', basis: `${id} crashed: ${c.summary}` }
  return c
}
const isVerdict = (x: OurCheck | OursVerdict): x is OursVerdict => 'verdict' in x

/** The common case: pass and info pass, fail fails, and warn and skipped go where the mapping says. */
function byStatus(id: string, warn: Verdict, skipped: Verdict) {
  return (checks: ReadonlyMap<string, OurCheck>): OursVerdict => {
    const c = need(checks, id)
    if (isVerdict(c)) return c
    const basis = `${id} ${c.status}`
    if (c.status === 'pass' || c.status === 'info') return { verdict: 'pass', basis }
    if (c.status === 'fail') return { verdict: 'fail', basis }
    if (c.status === 'warn') return { verdict: warn, basis }
    if (c.status === 'skipped') return { verdict: skipped, basis }
    return { verdict: 'n/a', basis: `${id} has unknown status ${c.status}` }
  }
}

export const MAPPINGS: TestMapping[] = [
  {
    test: 'content-security-policy',
    checks: ['csp'],
    theirPass: [
      'csp-implemented-with-no-unsafe',
      'csp-implemented-with-no-unsafe-default-src-none',
      'csp-implemented-with-unsafe-inline-in-style-src-only',
      'csp-implemented-with-insecure-scheme-in-passive-content-only',
      'csp-implemented-but-duplicate-directives',
    ],
    theirFail: [
      'csp-implemented-with-unsafe-inline',
      'csp-implemented-with-unsafe-eval',
      'csp-implemented-with-insecure-scheme',
      'csp-header-invalid',
      'csp-not-implemented',
      'csp-not-implemented-but-reporting-enabled',
    ],
    rule: "csp pass or warn = pass (a warn means scripts are restricted and only object-src 'none' or base-uri is missing); csp fail = fail",
    ours: byStatus('csp', 'pass', 'n/a'),
  },
  {
    test: 'cookies',
    checks: ['cookie-secure', 'cookie-httponly', 'cookie-samesite'],
    theirPass: ['cookies-not-found', 'cookies-secure-with-httponly-sessions-and-samesite', 'cookies-secure-with-httponly-sessions'],
    theirFail: [
      'cookies-without-secure-flag-but-protected-by-hsts',
      'cookies-session-without-secure-flag-but-protected-by-hsts',
      'cookies-without-secure-flag',
      'cookies-samesite-flag-invalid',
      'cookies-anticsrf-without-samesite-flag',
      'cookies-session-without-httponly-flag',
      'cookies-session-without-secure-flag',
    ],
    rule:
      'fail when cookie-secure fails or warns (a cookie without Secure, or any cookie on an http site), cookie-httponly fails, ' +
      'cookie-samesite fails, or cookie-samesite warns about an invalid SameSite value; pass otherwise (a missing SameSite alone ' +
      'passes, as theirs does)',
    ours(checks) {
      const secure = need(checks, 'cookie-secure')
      const httpOnly = need(checks, 'cookie-httponly')
      const sameSite = need(checks, 'cookie-samesite')
      for (const c of [secure, httpOnly, sameSite]) if (isVerdict(c)) return c
      const [s, h, ss] = [secure, httpOnly, sameSite] as OurCheck[]
      const basis = `cookie-secure ${s!.status}, cookie-httponly ${h!.status}, cookie-samesite ${ss!.status}`
      const invalidSameSite = list(ss!.evidence.invalidSameSite).length > 0
      const fails =
        s!.status === 'fail' ||
        s!.status === 'warn' ||
        h!.status === 'fail' ||
        ss!.status === 'fail' ||
        (ss!.status === 'warn' && invalidSameSite)
      return { verdict: fails ? 'fail' : 'pass', basis }
    },
  },
  {
    test: 'cross-origin-resource-sharing',
    checks: ['cors-credentialed-reflection'],
    theirPass: [
      'cross-origin-resource-sharing-not-implemented',
      'cross-origin-resource-sharing-implemented-with-public-access',
      'cross-origin-resource-sharing-implemented-with-restricted-access',
    ],
    theirFail: ['cross-origin-resource-sharing-implemented-with-universal-access'],
    rule:
      'cors-credentialed-reflection fail (an unrelated or "null" origin allowed with credentials) = fail; pass or warn (reflection ' +
      'without credentials, which they call restricted access) = pass',
    ours: byStatus('cors-credentialed-reflection', 'pass', 'n/a'),
  },
  {
    test: 'redirection',
    checks: ['https-redirect'],
    theirPass: ['redirection-to-https', 'redirection-not-needed-no-http', 'redirection-all-redirects-preloaded'],
    theirFail: [
      'redirection-missing',
      'redirection-not-to-https',
      'redirection-not-to-https-on-initial-redirection',
      'redirection-off-host-from-http',
      'redirection-invalid-cert',
    ],
    rule:
      'https-redirect pass = pass; skipped (the http form does not answer) = pass, as their "not needed, no http"; warn (first hop ' +
      'off-host or to http, or ends on another host) and fail = fail',
    ours: byStatus('https-redirect', 'fail', 'pass'),
  },
  {
    test: 'referrer-policy',
    checks: ['referrer-policy'],
    theirPass: ['referrer-policy-private', 'referrer-policy-not-implemented'],
    theirFail: ['referrer-policy-unsafe', 'referrer-policy-header-invalid'],
    rule:
      'referrer-policy pass = pass; warn with no header and no meta at all = pass (their "not implemented"); warn for a leaky policy or' +
      ' for a header with no valid token = fail; fail (unsafe-url) = fail',
    ours(checks) {
      const c = need(checks, 'referrer-policy')
      if (isVerdict(c)) return c
      if (c.status === 'warn') {
        const policy = str(c.evidence.policy)
        const header = str(c.evidence.header)
        const meta = list(c.evidence.meta)
        if (policy) return { verdict: 'fail', basis: `referrer-policy warn (${policy})` }
        if (header || meta.length > 0) return { verdict: 'fail', basis: 'referrer-policy warn (no valid token)' }
        return { verdict: 'pass', basis: 'referrer-policy warn (not set)' }
      }
      return byStatus('referrer-policy', 'fail', 'n/a')(checks)
    },
  },
  {
    test: 'strict-transport-security',
    checks: ['hsts', 'https-redirect'],
    theirPass: ['hsts-implemented-max-age-at-least-six-months', 'hsts-preloaded'],
    theirFail: [
      'hsts-implemented-max-age-less-than-six-months',
      'hsts-not-implemented',
      'hsts-header-invalid',
      'hsts-not-implemented-no-https',
      'hsts-invalid-cert',
    ],
    rule:
      'hsts pass = pass; warn (max-age under 180 days) and fail = fail; skipped because the final page is http = fail (no https, so no ' +
      'HSTS: our report charges that to https-redirect, which fails)',
    ours(checks) {
      const c = need(checks, 'hsts')
      if (isVerdict(c)) return c
      if (c.status === 'skipped') {
        const redirect = checks.get('https-redirect')
        return { verdict: 'fail', basis: `hsts skipped (http only; https-redirect ${redirect?.status ?? 'missing'})` }
      }
      return byStatus('hsts', 'fail', 'n/a')(checks)
    },
  },
  {
    test: 'subresource-integrity',
    checks: ['subresource-integrity'],
    theirPass: [
      'sri-implemented-and-all-scripts-loaded-securely',
      'sri-implemented-and-external-scripts-loaded-securely',
      'sri-not-implemented-response-not-html',
      'sri-not-implemented-but-all-scripts-loaded-from-secure-origin',
      'sri-not-implemented-but-no-scripts-loaded',
    ],
    theirFail: [
      'sri-implemented-but-external-scripts-not-loaded-securely',
      'sri-not-implemented-and-external-scripts-not-loaded-securely',
      'sri-not-implemented-but-external-scripts-loaded-securely',
      'html-not-parseable',
    ],
    rule:
      'subresource-integrity pass = pass; skipped (no page) = pass, as their "no scripts loaded"; warn (a third-party script without a ' +
      'valid integrity hash) and fail (one over http) = fail',
    ours: byStatus('subresource-integrity', 'fail', 'pass'),
  },
  {
    test: 'x-content-type-options',
    checks: ['x-content-type-options'],
    theirPass: ['x-content-type-options-nosniff'],
    theirFail: ['x-content-type-options-not-implemented', 'x-content-type-options-header-invalid'],
    rule: 'x-content-type-options pass = pass, fail = fail',
    ours: byStatus('x-content-type-options', 'fail', 'n/a'),
  },
  {
    test: 'x-frame-options',
    checks: ['frame-protection'],
    theirPass: ['x-frame-options-sameorigin-or-deny', 'x-frame-options-allow-from-origin', 'x-frame-options-implemented-via-csp'],
    theirFail: ['x-frame-options-not-implemented', 'x-frame-options-header-invalid'],
    rule: 'frame-protection pass = pass; fail (and warn, which it does not use) = fail',
    ours: byStatus('frame-protection', 'fail', 'n/a'),
  },
  {
    test: 'cross-origin-resource-policy',
    checks: ['cross-origin-isolation'],
    theirPass: [
      'corp-not-implemented',
      'corp-implemented-with-same-origin',
      'corp-implemented-with-same-site',
      'corp-implemented-with-cross-origin',
    ],
    theirFail: ['corp-header-invalid'],
    rule:
      'cross-origin-isolation is information only; it passes unless its evidence lists the Cross-Origin-Resource-Policy value as ' +
      'unrecognised by browsers, which = fail (their "header invalid")',
    ours(checks) {
      const c = need(checks, 'cross-origin-isolation')
      if (isVerdict(c)) return c
      const corp = str(c.evidence.crossOriginResourcePolicy)
      const unrecognised = list(c.evidence.unrecognised).some((u) => typeof u === 'string' && u.startsWith('Cross-Origin-Resource-Policy'))
      if (unrecognised) return { verdict: 'fail', basis: `cross-origin-isolation ${c.status} (CORP "${corp}" unrecognised)` }
      return { verdict: 'pass', basis: `cross-origin-isolation ${c.status} (CORP ${corp ?? 'not set'})` }
    },
  },
]

export interface TheirVerdict {
  verdict: Verdict
  result: string
  /** Set when their own `pass` boolean disagrees with the result lists above. */
  anomaly?: string
}

export function theirVerdict(m: TestMapping, test: { result: string | null; pass: boolean | null } | undefined): TheirVerdict {
  if (!test || test.result === null) return { verdict: 'n/a', result: 'missing' }
  const inPass = m.theirPass.includes(test.result)
  const inFail = m.theirFail.includes(test.result)
  const verdict: Verdict = inPass ? 'pass' : 'fail'
  let anomaly: string | undefined
  if (!inPass && !inFail) anomaly = `result ${test.result} is in neither list`
  else if (Boolean(test.pass) !== inPass) anomaly = `their pass=${test.pass} for ${test.result}, the lists say ${verdict}`
  return { verdict, result: test.result, ...(anomaly ? { anomaly } : {}) }
}
