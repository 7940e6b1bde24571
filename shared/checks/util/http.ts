// Header and URL helpers shared by the checks. Header names in artifacts are already lower-cased.

/** The header's value, trimmed, or null when absent. */
export function headerValue(headers: Record<string, string>, name: string): string | null {
  const value = headers[name.toLowerCase()]
  return value === undefined ? null : value.trim()
}

/** Splits a comma-joined header value (repeated headers are joined with ", ") into trimmed, non-empty items. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}

export function parseUrl(url: string | null | undefined, base?: string): URL | null {
  if (!url) return null
  try {
    return new URL(url, base)
  } catch {
    return null
  }
}

/** Lower-cased host name without port, or null for an unparsable URL. */
export function hostOf(url: string | null | undefined): string | null {
  const parsed = parseUrl(url)
  return parsed ? parsed.hostname.toLowerCase() : null
}

export function isHttpsUrl(url: string | null | undefined): boolean {
  return parseUrl(url)?.protocol === 'https:'
}

/** Same host, or the www/apex variant of it (example.com and www.example.com). */
export function sameSiteVariant(a: string, b: string): boolean {
  const strip = (h: string) => h.toLowerCase().replace(/^www\./, '')
  return strip(a) === strip(b)
}

/**
 * Whether a cookie domain covers a host: the host itself or a parent domain of it.
 * Public suffixes never reach here: browsers refuse cookies set for them.
 */
export function domainCovers(cookieDomain: string, host: string): boolean {
  const d = cookieDomain.toLowerCase().replace(/^\./, '')
  const h = host.toLowerCase()
  return d.length > 0 && (h === d || h.endsWith(`.${d}`))
}

/** Loopback hosts browsers treat as potentially trustworthy over plain http. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '')
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1'
}

/** Cuts a string for evidence so one odd header cannot bloat a report. */
export function clip(value: string, max = 300): string {
  return value.length > max ? `${value.slice(0, max)}…` : value
}
