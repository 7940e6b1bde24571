// The one Content-Security-Policy parser (CSP Level 3 "parse a serialized CSP") and the judgements the
// checks share. Directive names and keywords are case-insensitive; a repeated directive is ignored.

export type CspSource = 'header' | 'meta' | 'report-only'

export interface CspPolicy {
  source: CspSource
  raw: string
  /** Lower-cased directive name -> source expressions as written. First occurrence wins. */
  directives: Map<string, string[]>
}

/** Directives a <meta> policy may not carry (CSP3 §3.3). */
const META_IGNORED = new Set(['frame-ancestors', 'report-uri', 'report-to', 'sandbox'])

function parsePolicy(raw: string, source: CspSource): CspPolicy {
  const directives = new Map<string, string[]>()
  for (const part of raw.split(';')) {
    const tokens = part
      .trim()
      .split(/[\t\n\f\r ]+/)
      .filter(Boolean)
    const name = tokens[0]?.toLowerCase()
    if (!name || !/^[a-z0-9-]+$/.test(name) || directives.has(name)) continue
    if (source === 'meta' && META_IGNORED.has(name)) continue
    directives.set(name, tokens.slice(1))
  }
  return { source, raw, directives }
}

/** A header value may hold several policies separated by commas (repeated headers are joined with ", "). */
export function parseCspHeader(value: string, source: 'header' | 'report-only' = 'header'): CspPolicy[] {
  return value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((p) => parsePolicy(p, source))
    .filter((p) => p.directives.size > 0)
}

/** A <meta http-equiv="Content-Security-Policy"> content is exactly one policy. */
export function parseCspMeta(content: string): CspPolicy | null {
  const policy = parsePolicy(content.trim(), 'meta')
  return policy.directives.size > 0 ? policy : null
}

/** A fetch directive with the default-src fallback; null when neither is present. */
export function fetchDirective(policy: CspPolicy, name: string): string[] | null {
  return policy.directives.get(name) ?? policy.directives.get('default-src') ?? null
}

const lower = (tokens: string[]) => tokens.map((t) => t.toLowerCase())

/** `*`, a scheme-only source that admits every host (http:, https:, data:), or a host of `*`. */
export function isBroadSource(token: string): boolean {
  const t = token.toLowerCase()
  if (t === '*' || t === 'http:' || t === 'https:' || t === 'data:') return true
  return /^(?:[a-z][a-z0-9+.-]*:\/\/)?\*(?::(?:\*|\d+))?\/?$/.test(t)
}

const isNonceOrHash = (t: string) => /^'(?:nonce-|sha256-|sha384-|sha512-)/.test(t)

export interface ScriptJudgement {
  /** The directive that governs scripts in this policy, or null when scripts are unrestricted. */
  directive: 'script-src' | 'default-src' | null
  value: string[]
  problems: string[]
}

/**
 * Whether a policy restricts scripts. CSP3 rules applied: 'unsafe-inline' is ignored when a nonce or a hash
 * is present, and 'strict-dynamic' makes browsers ignore host and scheme allowlists.
 */
export function judgeScripts(policy: CspPolicy): ScriptJudgement {
  const own = policy.directives.get('script-src')
  const fallback = policy.directives.get('default-src')
  const value = own ?? fallback
  if (!value) {
    return { directive: null, value: [], problems: ['no script-src or default-src: scripts are not restricted'] }
  }
  const directive = own ? 'script-src' : 'default-src'
  const tokens = lower(value)
  const problems: string[] = []
  const nonceOrHash = tokens.some(isNonceOrHash)
  const strictDynamic = tokens.includes("'strict-dynamic'")
  if (tokens.includes("'unsafe-inline'") && !nonceOrHash) {
    problems.push(`${directive} allows 'unsafe-inline' without a nonce or hash`)
  }
  if (tokens.includes("'unsafe-eval'")) problems.push(`${directive} allows 'unsafe-eval'`)
  if (!strictDynamic) {
    const broad = value.filter(isBroadSource)
    if (broad.length > 0) problems.push(`${directive} allows scripts from any host: ${broad.join(' ')}`)
  }
  return { directive, value, problems }
}

/** object-src 'none' (or default-src 'none' without an object-src). */
export function blocksObjects(policy: CspPolicy): boolean {
  const value = fetchDirective(policy, 'object-src')
  return value !== null && value.length === 1 && value[0]!.toLowerCase() === "'none'"
}

/** base-uri present and not a wildcard (base-uri has no default-src fallback). */
export function restrictsBaseUri(policy: CspPolicy): boolean {
  const value = policy.directives.get('base-uri')
  return value !== undefined && value.length > 0 && !value.some(isBroadSource)
}

export interface FrameAncestorsJudgement {
  value: string[]
  /** True when the list lets any site frame the page. */
  open: boolean
}

/** frame-ancestors of an enforced header policy; null when no policy sets it. Meta policies cannot. */
export function judgeFrameAncestors(policies: CspPolicy[]): FrameAncestorsJudgement | null {
  const found = policies.filter((p) => p.source === 'header' && p.directives.has('frame-ancestors'))
  if (found.length === 0) return null
  // Every policy must allow the framing, so the strictest one decides.
  const judged = found.map((p) => {
    const value = p.directives.get('frame-ancestors')!
    return { value, open: value.some(isBroadSource) }
  })
  return judged.find((j) => !j.open) ?? judged[0]!
}

export function serialise(policy: CspPolicy): string {
  return policy.raw.length > 600 ? `${policy.raw.slice(0, 600)}…` : policy.raw
}
