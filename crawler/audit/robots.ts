// robots.txt as RFC 9309 reads it:
//   - groups start with one or more user-agent lines; rules of every group whose product token matches
//     ours (case-insensitive) are merged; only when none matches are the `*` groups used; no group: allow.
//   - the most specific (longest) matching rule wins; on a tie Allow wins; `*` matches any run of
//     characters and a trailing `$` anchors the end; an empty Disallow means nothing.
//   - /robots.txt itself is always allowed.
//   - Sitemap lines are global (any place in the file); Crawl-delay is not in the RFC but is read per
//     group, as the big crawlers do.
// Fetch outcomes (RFC 9309 2.3.1): 2xx parse; 4xx "unavailable" = allow all; 5xx or unreachable =
// "unreachable" = disallow all.

export interface RobotsRule {
  allow: boolean
  pattern: string
}

export interface Robots {
  /** Whether `pathAndQuery` (URL.pathname + URL.search) may be crawled. */
  isAllowed(pathAndQuery: string): boolean
  /** Crawl-delay of the chosen group in milliseconds, or null. */
  crawlDelayMs: number | null
  /** Absolute sitemap URLs named by Sitemap lines, as written. */
  sitemaps: string[]
}

/** RFC 9309 2.5: crawlers must parse at least 500 KiB; more is ignored. */
export const ROBOTS_MAX_BYTES = 512 * 1024

interface Group {
  agents: string[]
  rules: RobotsRule[]
  crawlDelayS: number | null
}

/** Percent-encodes what a URL path would encode (non-ASCII, spaces) and upper-cases escapes, so patterns compare like paths. */
function normalisePattern(p: string): string {
  let out = ''
  for (const ch of p) {
    const code = ch.codePointAt(0)!
    if (code > 0x7e || code <= 0x20) out += encodeURIComponent(ch)
    else out += ch
  }
  return out.replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase())
}

export function parseRobots(text: string): { groups: Group[]; sitemaps: string[] } {
  const groups: Group[] = []
  const sitemaps: string[] = []
  let current: Group | null = null
  // A user-agent line right after rules starts a new group; consecutive user-agent lines share one.
  let lastWasAgent = false
  for (const raw of text.slice(0, ROBOTS_MAX_BYTES).split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '').trim()
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line)
    if (!m) continue
    const key = m[1]!.toLowerCase()
    const value = m[2]!.trim()
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [], crawlDelayS: null }
        groups.push(current)
      }
      current.agents.push(value.toLowerCase())
      lastWasAgent = true
      continue
    }
    if (key === 'sitemap') {
      if (value) sitemaps.push(value)
      continue
    }
    lastWasAgent = false
    if (!current) continue // rules before any user-agent line belong to no group
    if (key === 'allow' || key === 'disallow') {
      if (value === '') continue // "Disallow:" with no path disallows nothing
      current.rules.push({ allow: key === 'allow', pattern: normalisePattern(value) })
    } else if (key === 'crawl-delay') {
      const n = Number(value)
      if (Number.isFinite(n) && n >= 0) current.crawlDelayS = n
    }
  }
  return { groups, sitemaps }
}

/** A pattern (with `*` and a trailing `$`) as a regular expression anchored at the start of the path. */
function compilePattern(pattern: string): RegExp {
  const anchored = pattern.endsWith('$')
  const body = anchored ? pattern.slice(0, -1) : pattern
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${source}${anchored ? '$' : ''}`)
}

export const patternMatches = (pattern: string, path: string): boolean => compilePattern(pattern).test(path)

/** The groups that apply to `token` (our product token, e.g. "AppAudit"): RFC 9309 2.2.1. */
function groupsFor(groups: Group[], token: string): Group[] {
  const t = token.toLowerCase()
  const ours = groups.filter((g) => g.agents.some((a) => a === t))
  if (ours.length > 0) return ours
  return groups.filter((g) => g.agents.includes('*'))
}

export function robotsFor(text: string, token: string): Robots {
  const parsed = parseRobots(text)
  const groups = groupsFor(parsed.groups, token)
  const rules = groups.flatMap((g) => g.rules).map((r) => ({ ...r, re: compilePattern(r.pattern) }))
  const delays = groups.map((g) => g.crawlDelayS).filter((d): d is number => d !== null)
  return {
    sitemaps: parsed.sitemaps,
    crawlDelayMs: delays.length ? Math.round(Math.max(...delays) * 1000) : null,
    isAllowed(pathAndQuery) {
      const path = normalisePattern(pathAndQuery || '/')
      if (path === '/robots.txt') return true
      let best: RobotsRule | null = null
      for (const r of rules) {
        if (!r.re.test(path)) continue
        if (!best || r.pattern.length > best.pattern.length || (r.pattern.length === best.pattern.length && r.allow && !best.allow))
          best = r
      }
      return best ? best.allow : true
    },
  }
}

/** robots.txt that could not be fetched: 4xx allows everything, 5xx or no answer disallows everything. */
export function robotsForStatus(status: number | null): Robots {
  const allowAll = status !== null && status >= 400 && status < 500
  return { sitemaps: [], crawlDelayMs: null, isAllowed: (p) => allowAll || p === '/robots.txt' }
}
