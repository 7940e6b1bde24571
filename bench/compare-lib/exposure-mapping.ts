// Which of the Observatory's tests and Lighthouse's audits count for which of our checks, when
// bench/exposure-compare.ts asks how many of a fixture's planted problems each tool finds.
//
// A tool's finding counts for a planted problem (a check id in the fixture's mustFail or mustWarn) only
// through a row below: the tool's test or audit failed (for the Observatory, with one of the listed results;
// for Lighthouse, with a row whose label matches), and the row names the planted check. Findings no row
// names are still printed, and simply count for nothing. The rows are deliberately generous where a tool's
// finding covers ours only in part (Lighthouse's is-on-https for both https-redirect and mixed-content).
import type { LighthouseFinding } from './lighthouse.ts'
import type { ObservatoryTest } from './observatory.ts'

export interface Credit {
  /** Their test (Observatory) or audit (Lighthouse) id; "*" with `category` for any audit of that category. */
  id: string
  /** Observatory: only these results count (absent: any failing result). */
  results?: string[]
  /** Lighthouse: only when one of the audit's row labels matches (absent: any failing audit). */
  labels?: RegExp
  /** Lighthouse: with id "*", any failing audit of this category. */
  category?: string
  /** Our check ids this finding counts for. */
  checks: string[]
  why: string
}

const COOKIE_NOT_SECURE = [
  'cookies-without-secure-flag-but-protected-by-hsts',
  'cookies-session-without-secure-flag-but-protected-by-hsts',
  'cookies-without-secure-flag',
  'cookies-session-without-secure-flag',
]

/**
 * The Observatory (@mdn/mdn-http-observatory 1.4.8): its ten tests, all on response headers, cookies and the
 * page's script tags. It fetches nothing else, so no exposure check has a counterpart. Its cookies test
 * reports the worst problem only, so it counts for one cookie check at most.
 */
export const OBSERVATORY_CREDITS: Credit[] = [
  { id: 'content-security-policy', checks: ['csp'], why: 'no CSP, or one that allows unsafe-inline, unsafe-eval or http: scripts' },
  { id: 'cookies', results: COOKIE_NOT_SECURE, checks: ['cookie-secure'], why: 'a cookie without Secure' },
  {
    id: 'cookies',
    results: ['cookies-session-without-httponly-flag'],
    checks: ['cookie-httponly'],
    why: 'a session cookie without HttpOnly',
  },
  {
    id: 'cookies',
    results: ['cookies-samesite-flag-invalid', 'cookies-anticsrf-without-samesite-flag'],
    checks: ['cookie-samesite'],
    why: 'an invalid SameSite, or an anti-CSRF cookie without one',
  },
  {
    id: 'cross-origin-resource-sharing',
    checks: ['cors-credentialed-reflection'],
    why: 'any origin allowed (their universal access)',
  },
  { id: 'redirection', checks: ['https-redirect'], why: 'http not redirected to https, or not first to the same host' },
  { id: 'redirection', results: ['redirection-invalid-cert'], checks: ['tls-certificate'], why: 'the https form has a bad certificate' },
  { id: 'referrer-policy', checks: ['referrer-policy'], why: 'an unsafe or invalid Referrer-Policy' },
  { id: 'strict-transport-security', checks: ['hsts'], why: 'no HSTS, or a max-age under six months' },
  {
    id: 'strict-transport-security',
    results: ['hsts-invalid-cert'],
    checks: ['tls-certificate'],
    why: 'the https form has a bad certificate',
  },
  { id: 'subresource-integrity', checks: ['subresource-integrity'], why: 'a third-party script without an integrity hash' },
  {
    id: 'subresource-integrity',
    results: ['sri-implemented-but-external-scripts-not-loaded-securely', 'sri-not-implemented-and-external-scripts-not-loaded-securely'],
    checks: ['mixed-content'],
    why: 'a script loaded over http',
  },
  { id: 'x-content-type-options', checks: ['x-content-type-options'], why: 'no nosniff' },
  { id: 'x-frame-options', checks: ['frame-protection'], why: 'neither X-Frame-Options nor frame-ancestors' },
  { id: 'cross-origin-resource-policy', checks: ['cross-origin-isolation'], why: 'an invalid Cross-Origin-Resource-Policy' },
]

/** Lighthouse's runtime errors that say something about the site rather than about the run. */
export const LIGHTHOUSE_RUNTIME_FINDINGS: Record<string, string> = {
  INSECURE_DOCUMENT_REQUEST: 'the page is refused for its certificate',
}

/**
 * Lighthouse 13 (accessibility, best-practices and SEO categories, plus viewport-insight). It loads the page
 * only: no audit requests /.env, /.git or any other path, so no exposure check has a counterpart. Its
 * no-vulnerable-libraries audit was removed in Lighthouse 10 (js-libraries lists libraries and always
 * passes), so vulnerable-js-library has none either; valid-source-maps asks for more source maps, the
 * opposite of exposed-source-maps. The trust & safety audits (csp-xss, has-hsts, origin-isolation,
 * clickjacking-mitigation, trusted-types-xss) are informative: they count as found when a row is High.
 * On a loopback host Lighthouse treats http as secure (is-on-https, redirects-http), so the bench gives it
 * the http sites under another host name mapped to 127.0.0.1.
 */
export const LIGHTHOUSE_CREDITS: Credit[] = [
  { id: 'is-on-https', checks: ['https-redirect', 'mixed-content'], why: 'the page or a subresource over http' },
  { id: 'redirects-http', checks: ['https-redirect'], why: 'http not redirected to https' },
  { id: 'csp-xss', labels: /^High:/, checks: ['csp'], why: 'no CSP, or one that does not stop XSS' },
  { id: 'has-hsts', labels: /^High:/, checks: ['hsts'], why: 'no HSTS, or a weak one' },
  { id: 'clickjacking-mitigation', labels: /^High:/, checks: ['frame-protection'], why: 'neither X-Frame-Options nor frame-ancestors' },
  { id: 'origin-isolation', labels: /^High:/, checks: ['cross-origin-isolation'], why: 'no COOP' },
  { id: 'inspector-issues', labels: /^Mixed content$/, checks: ['mixed-content'], why: "Chromium's mixed content issue" },
  { id: 'inspector-issues', labels: /^Cookie$/, checks: ['cookie-samesite'], why: "Chromium's cookie issue (SameSite)" },
  { id: 'inspector-issues', labels: /^Content security policy$/, checks: ['csp'], why: "Chromium's CSP issue" },
  { id: 'third-party-cookies', checks: ['third-party-cookies'], why: 'third-party cookies set' },
  { id: 'document-title', checks: ['seo-title'], why: 'no <title>' },
  { id: 'meta-description', checks: ['seo-meta-description'], why: 'no meta description' },
  { id: 'is-crawlable', checks: ['seo-indexable'], why: 'noindex' },
  { id: 'canonical', checks: ['seo-canonical'], why: 'an invalid or foreign canonical' },
  { id: 'html-has-lang', checks: ['seo-lang'], why: 'no lang on <html>' },
  { id: 'html-lang-valid', checks: ['seo-lang'], why: 'an invalid lang' },
  { id: 'viewport-insight', checks: ['seo-viewport'], why: 'no mobile viewport' },
  { id: '*', category: 'accessibility', checks: ['accessibility'], why: 'any failing accessibility audit (axe-core, as ours)' },
  { id: 'total-byte-weight', checks: ['perf-page-weight'], why: 'a heavy page' },
  { id: 'cache-insight', checks: ['perf-caching'], why: 'static files without a long cache lifetime' },
  { id: 'document-latency-insight', checks: ['perf-compression', 'perf-timing'], why: 'a slow or uncompressed document' },
  { id: 'server-response-time', checks: ['perf-timing'], why: 'a slow first byte' },
  {
    id: 'runtime-error:INSECURE_DOCUMENT_REQUEST',
    checks: ['tls-certificate'],
    why: 'Lighthouse refuses the page for its certificate',
  },
]

/** Lighthouse's line between passed and not: audits scored 0.9 or more show as passed in its report. */
export const LIGHTHOUSE_PASS_SCORE = 0.9

/** A tool's test or audit that failed, with the checks it counts for (empty: it counts for none). */
export interface ToolFinding {
  id: string
  /** Their result (Observatory) or the rows in a few words (Lighthouse). */
  detail: string
  checks: string[]
}

/** The Observatory's failing tests (their own pass = false) and what each counts for. */
export function observatoryFindings(tests: Record<string, ObservatoryTest>): ToolFinding[] {
  const out: ToolFinding[] = []
  for (const [id, t] of Object.entries(tests)) {
    if (t.pass !== false) continue
    const result = t.result ?? 'no result'
    const checks = OBSERVATORY_CREDITS.filter((c) => c.id === id && (!c.results || c.results.includes(result))).flatMap((c) => c.checks)
    out.push({ id, detail: result, checks: [...new Set(checks)] })
  }
  return out
}

/**
 * Lighthouse's findings: scored audits under LIGHTHOUSE_PASS_SCORE, informative audits with a High row (its
 * trust & safety audits), and a runtime error that is about the site. Other informative rows are left out.
 */
export function lighthouseFindings(findings: LighthouseFinding[], runtimeError: string | null): ToolFinding[] {
  const out: ToolFinding[] = []
  for (const f of findings) {
    const scored = f.mode !== 'informative'
    if (scored ? (f.score ?? 1) >= LIGHTHOUSE_PASS_SCORE : !f.labels.some((l) => /^High:/.test(l))) continue
    const checks = LIGHTHOUSE_CREDITS.filter(
      (c) =>
        (c.id === f.id && (!c.labels || f.labels.some((l) => c.labels!.test(l)))) ||
        (c.id === '*' && c.category !== undefined && f.categories.includes(c.category)),
    ).flatMap((c) => c.checks)
    out.push({ id: f.id, detail: f.labels.slice(0, 3).join('; '), checks: [...new Set(checks)] })
  }
  if (runtimeError && LIGHTHOUSE_RUNTIME_FINDINGS[runtimeError]) {
    const id = `runtime-error:${runtimeError}`
    out.push({
      id,
      detail: LIGHTHOUSE_RUNTIME_FINDINGS[runtimeError]!,
      checks: LIGHTHOUSE_CREDITS.filter((c) => c.id === id).flatMap((c) => c.checks),
    })
  }
  return out
}
