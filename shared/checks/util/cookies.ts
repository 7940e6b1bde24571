// The one cookie reader: Set-Cookie headers from the plain-HTTP response and cookies the browser stored,
// merged into one first-party list. Cookie values are never kept, so they cannot leak into evidence.

import type { Artifacts, BrowserCookie } from '../types.ts'
import { domainCovers, hostOf } from './http.ts'

export type SameSite = 'Strict' | 'Lax' | 'None'

export interface CookieRecord {
  name: string
  /** Lower-cased, without a leading dot. For a host-only cookie, the host that set it. */
  domain: string
  hostOnly: boolean
  secure: boolean
  httpOnly: boolean
  /** A valid SameSite value, or null when absent or invalid (browsers then treat it as unspecified). */
  sameSite: SameSite | null
  /** The SameSite attribute as written, when present. */
  sameSiteRaw: string | null
  source: 'set-cookie' | 'browser'
}

const SAME_SITE: Record<string, SameSite> = { strict: 'Strict', lax: 'Lax', none: 'None' }
/** Expiry dates before this are deletions (servers clear cookies with Expires=Thu, 01 Jan 1970 ...). */
const DELETION_BEFORE = Date.UTC(2001, 0, 1)

/** Parses one Set-Cookie header (RFC 6265 §5.2). Returns null for a nameless cookie or a deletion. */
export function parseSetCookie(header: string, requestHost: string): CookieRecord | null {
  const [pair = '', ...attributes] = header.split(';')
  const eq = pair.indexOf('=')
  if (eq <= 0) return null
  const name = pair.slice(0, eq).trim()
  if (!name) return null
  const record: CookieRecord = {
    name,
    domain: requestHost.toLowerCase(),
    hostOnly: true,
    secure: false,
    httpOnly: false,
    sameSite: null,
    sameSiteRaw: null,
    source: 'set-cookie',
  }
  let deletion = false
  for (const attribute of attributes) {
    const i = attribute.indexOf('=')
    const key = (i === -1 ? attribute : attribute.slice(0, i)).trim().toLowerCase()
    const value = i === -1 ? '' : attribute.slice(i + 1).trim()
    switch (key) {
      case 'secure':
        record.secure = true
        break
      case 'httponly':
        record.httpOnly = true
        break
      case 'domain': {
        const domain = value.replace(/^\./, '').toLowerCase()
        if (domain) {
          record.domain = domain
          record.hostOnly = false
        }
        break
      }
      case 'samesite':
        record.sameSiteRaw = value
        record.sameSite = SAME_SITE[value.toLowerCase()] ?? null
        break
      case 'max-age':
        if (/^-?\d+$/.test(value) && Number(value) <= 0) deletion = true
        break
      case 'expires': {
        const at = Date.parse(value)
        if (Number.isFinite(at) && at < DELETION_BEFORE) deletion = true
        break
      }
    }
  }
  return deletion ? null : record
}

function fromBrowser(cookie: BrowserCookie): CookieRecord {
  return {
    name: cookie.name,
    domain: cookie.domain.replace(/^\./, '').toLowerCase(),
    hostOnly: !cookie.domain.startsWith('.'),
    secure: cookie.secure,
    httpOnly: cookie.httpOnly,
    sameSite: cookie.sameSite,
    sameSiteRaw: cookie.sameSite,
    source: 'browser',
  }
}

/** The hosts the scan saw as "the site": the target, where its chains ended, where the browser ended. */
export function siteHosts(artifacts: Pick<Artifacts, 'target' | 'mainResponse' | 'page'>): string[] {
  const urls = [artifacts.target.url, artifacts.target.finalUrl, artifacts.mainResponse.url, artifacts.page?.finalUrl]
  return [...new Set(urls.map(hostOf).filter((h): h is string => h !== null))]
}

/**
 * First-party cookies: set by the main response, or stored by the browser for the site's host or a parent
 * domain of it. Third-party cookies (ads, embeds) are left out. Set-Cookie wins over the browser's copy
 * because it shows the attributes as the server wrote them.
 */
export function firstPartyCookies(artifacts: Pick<Artifacts, 'target' | 'mainResponse' | 'page'>): CookieRecord[] {
  const hosts = siteHosts(artifacts)
  const responseHost = hostOf(artifacts.mainResponse.url) ?? hosts[0] ?? ''
  const byKey = new Map<string, CookieRecord>()
  const add = (c: CookieRecord | null) => {
    if (!c || !hosts.some((h) => domainCovers(c.domain, h))) return
    const key = `${c.name}\u0000${c.domain}`
    if (!byKey.has(key)) byKey.set(key, c)
  }
  for (const header of artifacts.mainResponse.setCookies) add(parseSetCookie(header, responseHost))
  for (const cookie of artifacts.page?.cookies ?? []) add(fromBrowser(cookie))
  return [...byKey.values()]
}

/** Cookies that vendors' scripts set from JavaScript: their names look like sessions but cannot be HttpOnly. */
const VENDOR_COOKIE =
  /^(?:__stripe_|intercom-|_hj|ajs_|_ga|_gid|amp_|ai_session$|ai_user$|_dd_s$|crisp-client|ph_|mp_|_pk_|__hs|hubspotutk$|_fbp$|_clck$|_clsk$)/i

/** Analytics and widget vendors' cookies, which their scripts set; the site's own attributes do not apply. */
export function isVendorCookieName(name: string): boolean {
  return VENDOR_COOKIE.test(name)
}

/**
 * Whether a cookie name looks like it carries a session or credential: "session" or "sessid" anywhere in it
 * (PHPSESSID, JSESSIONID, laravel_session), or sess, sid, auth, token, jwt, remember as a word (camelCase
 * and separators split words: connect.sid, authToken). CSRF tokens are meant to be read by JavaScript, and
 * analytics vendors' cookies are set by JavaScript: neither counts.
 */
export function isSessionCookieName(name: string): boolean {
  if (isVendorCookieName(name)) return false
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()
  if (/csrf|xsrf/.test(words)) return false
  if (/session|sessid/.test(words)) return true
  if (/(?:^|[^a-z])(?:sess|sid|auth|token|jwt|remember)(?:[^a-z]|$)/.test(words)) return true
  return /(?:^|[^a-z])(?:access|refresh|id)token|logged_in|wordpress_sec_/.test(words)
}
