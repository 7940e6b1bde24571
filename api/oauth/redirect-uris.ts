// Redirect URIs: what may be registered, and when one sent to /oauth/authorize matches a registered one.
// Rules enforced:
//   - absolute URI, no fragment (RFC 6749 3.1.2), at most 2000 characters;
//   - no user name or password (https://trusted.example@evil.example/ shows a host that is not the one
//     the browser goes to);
//   - https for any host; http only for loopback hosts (RFC 8252 7.3, RFC 9700 4.1.1);
//   - otherwise only private-use schemes of native apps: reverse-domain ones (com.example.app:/, RFC 8252
//     7.1) and a short list of MCP clients' own (cursor://, vscode://); anything else is refused, so no
//     scheme that a browser or the system hands to a handler (javascript:, ms-msdt:, search-ms:, jar:...)
//     can be registered;
//   - matching is exact string comparison, except that a loopback http URI matches on any port (RFC 8252
//     7.3: native apps listen on an ephemeral port).

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])
/**
 * Private-use schemes of MCP clients in wide use that are not in reverse-domain form. RFC 8252 7.1 asks for
 * reverse-domain schemes, but these clients register cursor://, vscode://... and would not work otherwise.
 */
const KNOWN_APP_SCHEMES = new Set(['cursor:', 'vscode:', 'vscode-insiders:', 'vscodium:', 'windsurf:'])

/** A private-use scheme in reverse-domain form (RFC 8252 7.1): com.example.app, at least two labels. */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+:$/

export const isLoopbackHttp = (u: URL) => u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)

/** Null when the URI may be registered, else the reason. */
export function redirectUriProblem(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000)
    return 'each redirect URI must be a non-empty string of at most 2000 characters'
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return `${raw} is not an absolute URI`
  }
  if (raw.includes('#')) return `${raw} must not contain a fragment`
  if (u.username || u.password) return `${raw} must not carry a user name or password`
  if (u.protocol === 'https:') return u.hostname ? null : `${raw} has no host`
  if (u.protocol === 'http:')
    return isLoopbackHttp(u) ? null : `${raw}: http is allowed only on loopback (127.0.0.1, [::1], localhost); use https`
  if (!KNOWN_APP_SCHEMES.has(u.protocol) && !REVERSE_DOMAIN_SCHEME.test(u.protocol)) {
    return `${raw}: a redirect URI is https, http on loopback, or a native app's private-use scheme in reverse-domain form (com.example.app:/callback)`
  }
  if (raw.length <= u.protocol.length + 1 || /^[a-z][a-z0-9+.-]*:\/*$/.test(raw)) return `${raw} names no destination in the app`
  return null
}

/** The registered URI the requested one matches, or null. */
export function matchRedirectUri(registered: string[], requested: string): string | null {
  if (registered.includes(requested)) return requested
  let r: URL
  try {
    r = new URL(requested)
  } catch {
    return null
  }
  if (!isLoopbackHttp(r) || requested.includes('#')) return null
  for (const candidate of registered) {
    let c: URL
    try {
      c = new URL(candidate)
    } catch {
      continue
    }
    if (
      isLoopbackHttp(c) &&
      c.hostname === r.hostname &&
      c.pathname === r.pathname &&
      c.search === r.search &&
      c.username === r.username &&
      c.password === r.password
    ) {
      return candidate
    }
  }
  return null
}

/** What the consent page shows as the destination: the host, or the app scheme for native apps. */
export function redirectDisplay(uri: string): string {
  const u = new URL(uri)
  if (u.protocol === 'http:' || u.protocol === 'https:') return u.host
  return `${u.protocol}// (an application on this computer)`
}
