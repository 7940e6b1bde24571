// First- and third-party decisions by registrable domain (eTLD+1, from the Public Suffix List with its
// private section, as browsers use it for cookies and "site"). cdn.example.com is first-party to
// www.example.com; another-app.vercel.app is a different site from my-app.vercel.app.

import { getDomain } from 'tldts'
import type { Artifacts } from '../types.ts'
import { siteHosts } from './cookies.ts'
import { parseUrl } from './http.ts'

const cache = new Map<string, string>()
const CACHE_LIMIT = 5_000

/**
 * The registrable domain of a host name, lower-cased. Hosts without one (IP addresses, localhost,
 * a bare public suffix) stand for themselves.
 */
export function registrableDomain(host: string): string {
  const h = host
    .toLowerCase()
    .replace(/^\.+|\.+$/g, '')
    .replace(/^\[|\]$/g, '')
  const hit = cache.get(h)
  if (hit !== undefined) return hit
  const domain = getDomain(h, { allowPrivateDomains: true }) ?? h
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(h, domain)
  return domain
}

/** The registrable domain of a URL's host, or null for an unparsable URL or one without a host (data:, blob:). */
export function registrableDomainOfUrl(url: string): string | null {
  const parsed = parseUrl(url)
  if (
    !parsed?.hostname ||
    (parsed.protocol !== 'http:' && parsed.protocol !== 'https:' && parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
  ) {
    return null
  }
  return registrableDomain(parsed.hostname)
}

/** The registrable domains that count as "the site": those of the target, where its chains ended and where the browser ended. */
export function siteDomains(artifacts: Pick<Artifacts, 'target' | 'mainResponse' | 'page'>): Set<string> {
  return new Set(siteHosts(artifacts).map(registrableDomain))
}

/** Whether a URL belongs to the site. URLs without a network host (data:, blob:, about:) count as first-party. */
export function isFirstPartyUrl(url: string, site: ReadonlySet<string>): boolean {
  const domain = registrableDomainOfUrl(url)
  return domain === null || site.has(domain)
}
