// Sorts a report's failing findings into what configuration can fix: the headers to send (with the CSP
// computed from what the page loaded), the version disclosure, the http to https redirect and cookie
// attributes; everything else goes to "not fixed" with the reason configuration cannot fix it.
import { adviseCsp } from './csp-policy.ts'
import { COOKIE_CHECKS, type CookieCheck, type Header, isSafeHeaderValue, type NotFixed, type PatchSource, type Wanted } from './plan.ts'

const HEADER_CHECKS: Record<string, (src: PatchSource) => Header[] | string> = {
  csp: (src) => [{ key: 'Content-Security-Policy', value: adviseCsp(src).policy }],
  'frame-protection': () => [{ key: 'X-Frame-Options', value: 'DENY' }],
  hsts: (src) =>
    src.url.startsWith('https://')
      ? [{ key: 'Strict-Transport-Security', value: 'max-age=63072000; includeSubDomains' }]
      : 'The page was served over http: HSTS is only honoured on https responses, so enable https first.',
  'x-content-type-options': () => [{ key: 'X-Content-Type-Options', value: 'nosniff' }],
  'referrer-policy': () => [{ key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' }],
  'permissions-policy': () => [{ key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=(), browsing-topics=()' }],
}

/** Why a finding that is not a header, cookie, redirect or version matter is not fixed by configuration. */
function whyNot(checkId: string): string {
  if (checkId.startsWith('exposed-') || checkId === 'directory-listing' || checkId === 'debug-error-page')
    return 'A file or page the app should not serve: remove it from what is deployed (and rotate any secret it held); a config rule would only hide content that has already been public.'
  if (checkId === 'js-secrets')
    return 'A secret in shipped JavaScript: revoke it at its provider and move it server-side; no configuration unpublishes it.'
  if (checkId === 'mixed-content') return 'The page itself links http:// resources: change those URLs in the code.'
  if (checkId === 'vulnerable-js-library')
    return 'Upgrade the library in package.json (or the script tag); configuration cannot patch its code.'
  if (checkId === 'subresource-integrity')
    return 'Integrity hashes belong on the <script> tags in the markup, not in the hosting configuration.'
  if (checkId === 'cors-credentialed-reflection')
    return 'The application code reflects Origin with credentials: fix the CORS allowlist in the code.'
  if (checkId.startsWith('tls-'))
    return 'Certificates and TLS versions are set where TLS ends (the host or load balancer), not in the repository.'
  if (checkId.startsWith('seo-') || checkId.startsWith('perf-') || checkId === 'accessibility')
    return 'A change to the pages themselves (markup, assets), not to the hosting configuration.'
  return 'Not something response configuration can change.'
}

export function wanted(src: PatchSource, notFixed: NotFixed[], notes: string[]): Wanted {
  const w: Wanted = { headers: [], headerFixes: [], version: null, redirect: null, cookies: new Map() }
  const seen = new Set<string>()
  for (const f of src.findings) {
    if (f.status !== 'fail' && f.status !== 'warn') continue
    if (seen.has(f.checkId)) continue
    seen.add(f.checkId)
    const hf = HEADER_CHECKS[f.checkId]
    if (hf) {
      const got = hf(src)
      if (typeof got === 'string') {
        notFixed.push({ checkId: f.checkId, title: f.title, why: got })
        continue
      }
      const unsafe = got.filter((h) => !isSafeHeaderValue(h.value))
      if (unsafe.length) {
        notFixed.push({
          checkId: f.checkId,
          title: f.title,
          why: 'The computed header value holds characters a configuration file cannot carry safely.',
        })
        continue
      }
      w.headerFixes.push({ f, h: got })
      for (const h of got) if (!w.headers.some((x) => x.key === h.key)) w.headers.push(h)
      if (f.checkId === 'csp') notes.push(...adviseCsp(src).notes)
    } else if (f.checkId === 'version-disclosure') w.version = f
    else if (f.checkId === 'https-redirect') w.redirect = f
    else if ((COOKIE_CHECKS as readonly string[]).includes(f.checkId)) w.cookies.set(f.checkId as CookieCheck, f)
    else notFixed.push({ checkId: f.checkId, title: f.title, why: whyNot(f.checkId) })
  }
  return w
}
