// What the gatherer collects once per scan, and the shape of a check that judges it.
// Checks are pure: they read the artifacts they declare and do no I/O.

/** A plain-HTTP response, headers with lower-cased names. */
export interface HttpResponseArtifact {
  url: string
  status: number
  /** Lower-cased header name -> value; repeated headers joined with ", " (set-cookie kept apart). */
  headers: Record<string, string>
  setCookies: string[]
  contentType: string
  /** Body as text, cut at the gatherer's limit. */
  body: string
  bodyTruncated: boolean
}

export interface RedirectHop {
  url: string
  status: number
  location: string | null
}

/** Following redirects hop by hop from a start URL. */
export interface RedirectChain {
  startUrl: string
  hops: RedirectHop[]
  /** The URL of the first non-redirect answer, or null when the chain broke. */
  finalUrl: string | null
  /** Why the chain broke: unreachable, blocked, too many redirects. */
  error: string | null
}

export interface BrowserRequest {
  url: string
  method: string
  resourceType: string
  /** 0 when the request failed. */
  status: number
  failure: string | null
  /** Response headers, lower-cased. Empty when failed. */
  headers: Record<string, string>
  /** The frame document the request was made by. */
  initiatorUrl: string | null
}

export interface BrowserCookie {
  name: string
  value: string
  domain: string
  path: string
  secure: boolean
  httpOnly: boolean
  sameSite: 'Strict' | 'Lax' | 'None' | null
  expires: number
}

export interface PageArtifact {
  finalUrl: string
  status: number
  title: string
  /** Rendered DOM (document.documentElement.outerHTML), cut at the gatherer's limit. */
  html: string
  requests: BrowserRequest[]
  cookies: BrowserCookie[]
  consoleErrors: string[]
  /** Inline code in the rendered DOM, for a Content-Security-Policy computed from the page; absent when not read. */
  inline?: InlineCode
  /** The page's own API traffic (fetch, XHR, EventSource, WebSocket) while it loaded; absent when not recorded. */
  api?: ApiTraffic
}

/** One fetch/XHR the page made, with the answer it got (no request of ours). */
export interface ApiCall {
  url: string
  method: string
  resourceType: string
  /** Content-Type the page sent with its request body, or null. */
  requestContentType: string | null
  /** Whether the page sent credentials with it: a Cookie or an Authorization header. */
  credentialed: boolean
  /** Whether an Authorization header went with it (shared caches must not store such answers unless told to). */
  authorization: boolean
  /** Whether the request body was a GraphQL operation (a JSON "query" or application/graphql). */
  graphql: boolean
  /** 0 when the request failed. */
  status: number
  /** Response headers, lower-cased. */
  headers: Record<string, string>
  /** Response body as text, cut at the gatherer's limit; empty when not read (a stream, a cap reached). */
  body: string
  bodyTruncated: boolean
}

/** The page's API traffic: the map of the app's API as the page itself uses it. */
export interface ApiTraffic {
  calls: ApiCall[]
  /** fetch/XHR requests beyond the ones listed (the recorder keeps a bounded number). */
  unlisted: number
  /** WebSocket URLs the page opened. */
  websockets: string[]
  /**
   * Whether the visit was signed in (an authenticated audit). A scan never is: whatever cookie or token its
   * calls carry, the site handed it to an anonymous visitor.
   */
  signedIn?: boolean
}

/** One request of ours to an API path or document the page revealed (never a write: GET, OPTIONS or an introspection POST). */
export interface ApiProbe {
  /** error: a GET of a path that cannot exist under an API prefix the page used, for the error page it answers. */
  kind: 'cors' | 'graphql' | 'openapi' | 'error'
  url: string
  method: 'GET' | 'OPTIONS' | 'POST'
  /** For CORS probes: the Origin header sent (a foreign origin or "null"). */
  origin?: string
  /** 0 when the request failed. */
  status: number
  /** Response headers, lower-cased. */
  headers: Record<string, string>
  contentType: string
  /** Body as text, cut at the gatherer's limit (CORS probes keep none). */
  body: string
  bodyTruncated: boolean
  /** Where the URL came from: the page's traffic, a link in the page, or a well-known path. */
  source: 'traffic' | 'link' | 'well-known'
  error: string | null
}

/** One inline piece of code (a <script> or <style> block, or an attribute value), by its CSP hash. */
export interface InlineItem {
  /** base64 SHA-256 of the exact text, as CSP's 'sha256-...' sources take it. */
  sha256: string
  length: number
  /** The text, cut at 64 KB: to tell code the server sends as it is from code made per response. */
  text: string
}

/** What a Content-Security-Policy must allow inline for the page to keep working, bounded by the gatherer. */
export interface InlineCode {
  /** Executable inline <script> blocks (not JSON or template data blocks), at most GATHER_LIMITS.inlineItems. */
  scripts: Array<InlineItem & { nonce: boolean }>
  /** Executable inline scripts in all, beyond the ones listed too. */
  scriptCount: number
  /** Distinct values of inline event handler attributes (onclick=...), bounded. */
  handlers: InlineItem[]
  /** Elements with an inline event handler, and the attribute names seen (onclick, onload...). */
  handlerCount: number
  handlerNames: string[]
  /** <style> blocks, bounded. */
  styles: InlineItem[]
  styleCount: number
  /** Distinct style="" attribute values, bounded, and how many elements carry one. */
  styleAttributes: InlineItem[]
  styleAttributeCount: number
}

export interface ScriptArtifact {
  /** Script URL, or `${pageUrl}#inline-N` for inline scripts. */
  url: string
  inline: boolean
  body: string
}

export interface ProbeResult {
  path: string
  url: string
  /** 0 when the request failed. */ status: number
  contentType: string
  body: string
  error: string | null
  /** The first bytes of the answer as sent (base64, at most 512): what binary files are recognised by. */
  head?: string
  /** A redirect's Location header as sent (never followed): what an author-archive probe is read by. */
  location?: string
}

export interface TargetArtifact {
  /** The URL as the caller gave it, normalised. */
  url: string
  /** Where the plain-HTTP request chain ended. */
  finalUrl: string
  origin: string
  scheme: 'http' | 'https'
}

/** A GET of the final URL sent with an unrelated Origin, to see whether CORS reflects it. */
export interface CorsProbeArtifact {
  url: string
  /** The Origin header that was sent. */
  origin: string
  /** 0 when the request failed. */
  status: number
  /** Response headers, lower-cased. */
  headers: Record<string, string>
  error: string | null
}

/** The certificate and handshake of an https final URL, taken without verification so a bad one can be described. */
export interface TlsArtifact {
  host: string
  port: number
  /** Whether the chain verified against the trust store for this host name. */
  authorized: boolean
  /** The OpenSSL verification error when not authorized, e.g. CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT. */
  authorizationError: string | null
  /** Negotiated protocol, e.g. TLSv1.3. */
  protocol: string | null
  subject: string
  issuer: string
  altNames: string[]
  validFrom: string
  validTo: string
  /** Whole days from the scan to validTo (negative once expired), computed when gathered. */
  daysRemaining: number
  selfSigned: boolean
  /** Why the handshake could not be made at all. */
  error: string | null
}

export interface AccessibilityViolation {
  id: string
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null
  help: string
  helpUrl: string
  /** How many elements violate it. */
  nodes: number
  /** CSS selectors of the first few elements. */
  targets: string[]
}

/** axe-core results on the rendered page. */
export interface AccessibilityArtifact {
  engine: string
  violations: AccessibilityViolation[]
  passes: number
  incomplete: number
}

export interface ResourceTiming {
  url: string
  initiatorType: string
  /** Bytes over the network (0 when served from cache or cross-origin without Timing-Allow-Origin). */
  transferSize: number
  encodedBodySize: number
  decodedBodySize: number
  duration: number
}

/** What the browser measured while loading the page. */
export interface PerformanceArtifact {
  /** Milliseconds from navigation start. */
  navigation: {
    ttfb: number
    domContentLoaded: number
    load: number
    transferSize: number
    encodedBodySize: number
    decodedBodySize: number
  } | null
  resources: ResourceTiming[]
}

export interface Artifacts {
  target: TargetArtifact
  /** The final response of the plain-HTTP chain from target.url. */
  mainResponse: HttpResponseArtifact
  /** The chain from target.url. */
  redirectChain: RedirectChain
  /** The chain from the http:// form of the target's host, or null when it could not be built. */
  httpRedirect: RedirectChain | null
  /** The page as the browser loaded it, or null when the browser could not load it. */
  page: PageArtifact | null
  /** JavaScript the page loaded (external and inline), cut at the gatherer's limits. */
  scripts: ScriptArtifact[]
  /** Plain-HTTP GETs of the paths in PROBE_PATHS, keyed by path, including the baseline path. */
  probes: Record<string, ProbeResult>
  /** Source maps named by sourceMappingURL comments or SourceMap headers of same-origin scripts, fetched (bounded). */
  sourceMaps: ProbeResult[]
  /** The CORS probe, or null when it could not be made. */
  cors: CorsProbeArtifact | null
  /** Probes of what the page's traffic and links revealed (CORS on API paths, GraphQL, OpenAPI); null when not made. */
  apiProbes: ApiProbe[] | null
  /** The TLS handshake of an https final URL; null for http. */
  tls: TlsArtifact | null
  /** axe-core results; null when the page did not load or axe could not run. */
  accessibility: AccessibilityArtifact | null
  /** Browser timings and sizes; null when the page did not load. */
  performance: PerformanceArtifact | null
}

export type ArtifactName = keyof Artifacts

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info'
export type CheckStatus = 'pass' | 'fail' | 'warn' | 'info' | 'skipped' | 'error'
export type Category = 'security' | 'https' | 'cookies' | 'exposure' | 'secrets' | 'seo' | 'performance' | 'accessibility' | 'privacy'
/** The hosting platforms fixes are written for, in the order they are shown; `generic` stands for any other. */
export const PLATFORMS = [
  'vercel',
  'netlify',
  'nextjs',
  'express',
  'django',
  'rails',
  'nginx',
  'apache',
  'caddy',
  'iis',
  'cloudflare',
  'generic',
] as const
export type Platform = (typeof PLATFORMS)[number]

/** What kind of change a check's fix is: it decides where the change goes and how to verify it. */
export type FixKind =
  | 'headers'
  | 'https-redirect'
  | 'cookies'
  | 'mixed-content'
  | 'version'
  | 'served-file'
  | 'secrets'
  | 'dependencies'
  | 'other'

/** Where a check's fix applies, for fix briefs and patches. */
export interface FixTarget {
  kind: FixKind
  /** For header fixes: the response headers the fix must make appear. */
  headers?: string[]
  /** For a served file: the path the check probes, when the evidence names none. */
  path?: string
  /** Where the change goes on a platform, when that differs from where changes of its kind go. */
  where?: Partial<Record<Platform, string>>
}

export interface CheckOutcome {
  status: CheckStatus
  /** Specific proof: the header value, the URL, a redacted excerpt. */
  evidence: Record<string, unknown>
  /** One sentence on what was found, for this scan. */
  summary: string
  /** Overrides the check's default severity for this outcome (e.g. a critical secret vs a low one). */
  severity?: Severity
}

export interface CheckMeta {
  /** Stable kebab-case id; never reused for another meaning. */
  id: string
  category: Category
  /** What a passing check shows, e.g. "Session cookies are HttpOnly". */
  title: string
  /** What a failing or warning check shows: the problem, e.g. "Session cookies are not HttpOnly". */
  failTitle?: string
  /**
   * The problem as this result's evidence shows it, where failTitle alone would say more than is true (a site
   * whose cookies all carry Secure but travel over plain http); null for failTitle. Pure, and safe on evidence
   * of any shape: stored reports are read back with it.
   */
  failTitleOf?(evidence: Record<string, unknown>): string | null
  /** What the check looks at. */
  description: string
  /** Why it matters. */
  why: string
  /** How the finding is confirmed (and what is deliberately not a finding). */
  confirmation: string
  /** Severity of a failure unless the outcome overrides it. */
  severity: Severity
  /** How to fix, per hosting platform; `generic` always present. */
  fix: { generic: string } & Partial<Record<Exclude<Platform, 'generic'>, string>>
  /**
   * The fix computed from one result's evidence (e.g. a policy built from what the page loads), for a platform;
   * null to use `fix`. Pure, and safe on evidence of any shape (stored reports are read back with it).
   */
  advise?(result: { status: CheckStatus; evidence: Record<string, unknown> }, platform: Platform): string | null
  /** Where the fix applies; absent: a change of kind 'other'. */
  fixTarget?: FixTarget
}

/** What a check's run receives: its required artifacts, never null (the runner skips the check otherwise), and its optional ones, which may be. */
export type CheckInput<R extends ArtifactName, O extends ArtifactName> = { [P in R]: NonNullable<Artifacts[P]> } & {
  [P in O]: Artifacts[P]
}

export interface Check<Id extends string = string, R extends ArtifactName = ArtifactName, O extends ArtifactName = ArtifactName>
  extends CheckMeta {
  id: Id
  /** Artifacts the check needs: when one is null, the runner reports the check skipped without running it. */
  requires: readonly R[]
  /** Artifacts read when present: unlike `requires`, a null one does not skip the check (e.g. `page`). */
  optional?: readonly O[]
  // Method syntax on purpose: a check of narrower artifacts still counts as a Check (the runner passes each check exactly what it declares).
  run(artifacts: CheckInput<R, O>): CheckOutcome
}

export function defineCheck<const Id extends string, const R extends ArtifactName, const O extends ArtifactName = never>(
  check: Check<Id, R, O>,
): Check<Id, R, O> {
  return check
}
