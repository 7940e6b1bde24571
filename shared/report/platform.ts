// Which hosting platform or framework serves a site, told from its response headers and page. Pure: the
// worker can record the few signals it needs, and fix briefs read them back (or, for reports recorded
// without them, read what the report's evidence still carries).

import type { Platform } from '../checks/types.ts'

export type { Platform } from '../checks/types.ts'

/** Headers that name a platform. Only these are kept, so what is stored says nothing else about the site. */
const FINGERPRINT_HEADERS = [
  'server',
  'x-powered-by',
  'x-vercel-id',
  'x-vercel-cache',
  'x-nf-request-id',
  'cf-ray',
  'cf-cache-status',
  'x-nextjs-cache',
  'x-nextjs-prerender',
  'x-nextjs-stale-time',
  'x-aspnet-version',
  'x-aspnetmvc-version',
  'x-runtime',
] as const

const MAX_VALUE = 200
const MAX_COOKIES = 20

/**
 * Default error pages that name the server or framework (the gatherer's 404 probe body is the usual source).
 * Each pattern is the framework's own default text, so a site's custom page never matches by accident.
 */
const PAGE_SIGNATURES: ReadonlyArray<{ id: string; platform: Exclude<Platform, 'generic'>; label: string; pattern: RegExp }> = [
  {
    id: 'apache-error-page',
    platform: 'apache',
    label: 'Apache error page',
    pattern:
      /<address>Apache(?:\/[\d.]+)?[^<]{0,120}Server at |The requested URL (?:\S{1,300} )?was not found on this server\.<\/p>\s*(?:<hr>|<\/body>)/i,
  },
  { id: 'nginx-error-page', platform: 'nginx', label: 'nginx error page', pattern: /<hr><center>nginx(?:\/[\d.]+)?<\/center>/i },
  {
    id: 'express-error-page',
    platform: 'express',
    label: 'Express "Cannot GET" page',
    pattern: /<pre>Cannot (?:GET|HEAD|POST) \/[^<]{0,300}<\/pre>/,
  },
  {
    id: 'django-error-page',
    platform: 'django',
    label: 'Django 404 page',
    pattern: /<h1>Not Found<\/h1><p>The requested resource was not found on this server\.<\/p>|Using the URLconf defined in <code>/,
  },
  {
    id: 'rails-error-page',
    platform: 'rails',
    label: 'Rails 404 page',
    pattern: /The page you were looking for doesn(?:'|’|&rsquo;|&#39;)t exist/,
  },
  {
    id: 'iis-error-page',
    platform: 'iis',
    label: 'IIS or ASP.NET error page',
    pattern: /HTTP Error 404\.\d+ - Not Found|404 - File or directory not found\.|Server Error in '\/[^']{0,100}' Application/,
  },
]

/** The little a detection needs, small enough to store beside a scan. */
export interface PlatformSignals {
  /** Fingerprint headers only, lower-cased names, values cut to 200 characters. */
  headers: Record<string, string>
  /** The page loads Next.js assets (/_next/static/) or carries __NEXT_DATA__. */
  nextAssets: boolean
  /** Names (never values) of the cookies the response set, at most 20; absent in signals stored before. */
  cookieNames?: string[]
  /** Ids of the default error pages seen (PAGE_SIGNATURES); absent in signals stored before. */
  pageSignatures?: string[]
}

export interface PlatformDetection {
  /** The platform whose fix to apply; generic when nothing was recognised. */
  platform: Platform
  /** The signals that named it, e.g. "x-vercel-id header", "server: Vercel". */
  detectedFrom: string[]
  /** Every other platform with a signal, e.g. cloudflare in front of a Vercel app. */
  alsoDetected: Platform[]
  /** What else the signals say about the stack without naming a platform of their own, e.g. "x-powered-by: PHP/8.2.12". */
  hints: string[]
}

const NEXT_ASSETS = /\/_next\/(?:static|image)\b|\b__NEXT_DATA__\b/
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/

/** Extra evidence beside the main response: its Set-Cookie headers and an error page (the 404 probe's body). */
export interface SignalExtras {
  setCookies?: readonly string[]
  errorPages?: readonly string[]
}

/** Keeps what detection reads from a response (headers with lower-cased names), its page HTML and the extras. */
export function platformSignals(headers: Record<string, string>, html = '', extras: SignalExtras = {}): PlatformSignals {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if ((FINGERPRINT_HEADERS as readonly string[]).includes(lower) && typeof value === 'string')
      kept[lower] = value.trim().slice(0, MAX_VALUE)
  }
  const signals: PlatformSignals = { headers: kept, nextAssets: NEXT_ASSETS.test(html) }
  const names = new Set<string>()
  for (const c of extras.setCookies ?? []) {
    const name = c.slice(0, Math.max(0, c.indexOf('='))).trim()
    if (COOKIE_NAME.test(name) && names.size < MAX_COOKIES) names.add(name)
  }
  if (names.size > 0) signals.cookieNames = [...names]
  const pages = [html, ...(extras.errorPages ?? [])].map((p) => p.slice(0, 64 * 1024))
  const seen = PAGE_SIGNATURES.filter((sig) => pages.some((p) => sig.pattern.test(p))).map((sig) => sig.id)
  if (seen.length > 0) signals.pageSignatures = seen
  return signals
}

/** Reads stored signals back, refusing anything of another shape. */
export function asPlatformSignals(value: unknown): PlatformSignals | null {
  if (!value || typeof value !== 'object') return null
  const v = value as { headers?: unknown; nextAssets?: unknown; cookieNames?: unknown; pageSignatures?: unknown }
  if (!v.headers || typeof v.headers !== 'object' || typeof v.nextAssets !== 'boolean') return null
  const headers = Object.fromEntries(Object.entries(v.headers).filter((e): e is [string, string] => typeof e[1] === 'string'))
  const signals: PlatformSignals = { headers, nextAssets: v.nextAssets }
  const strings = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string').slice(0, MAX_COOKIES) : null)
  const cookieNames = strings(v.cookieNames)
  if (cookieNames) signals.cookieNames = cookieNames
  const pageSignatures = strings(v.pageSignatures)
  if (pageSignatures) signals.pageSignatures = pageSignatures
  return signals
}

type Named = Exclude<Platform, 'generic'>
interface Found {
  /** Signals that name a platform on their own. */
  strong: Partial<Record<Named, string[]>>
  /** Signals that only hint at one (a cookie name others may use too, a generic app server): used when nothing strong is seen. */
  weak: Partial<Record<Named, string[]>>
  hints: string[]
}

function collect(signals: PlatformSignals): Found {
  const h = signals.headers
  const found: Found = { strong: {}, weak: {}, hints: [] }
  const add = (p: Named, why: string) => (found.strong[p] ??= []).push(why)
  const weak = (p: Named, why: string) => (found.weak[p] ??= []).push(why)
  const server = h.server ?? ''
  const poweredBy = h['x-powered-by'] ?? ''

  if (h['x-vercel-id'] !== undefined) add('vercel', 'x-vercel-id header')
  if (h['x-vercel-cache'] !== undefined) add('vercel', 'x-vercel-cache header')
  if (/\bvercel\b/i.test(server)) add('vercel', `server: ${server}`)

  if (h['x-nf-request-id'] !== undefined) add('netlify', 'x-nf-request-id header')
  if (/\bnetlify\b/i.test(server)) add('netlify', `server: ${server}`)

  if (/\bnext\.?js\b/i.test(poweredBy)) add('nextjs', `x-powered-by: ${poweredBy}`)
  for (const name of ['x-nextjs-cache', 'x-nextjs-prerender', 'x-nextjs-stale-time']) {
    if (h[name] !== undefined) add('nextjs', `${name} header`)
  }
  if (signals.nextAssets) add('nextjs', '/_next/ assets in the page')

  if (h['cf-ray'] !== undefined) add('cloudflare', 'cf-ray header')
  if (h['cf-cache-status'] !== undefined) add('cloudflare', 'cf-cache-status header')
  if (/^cloudflare\b/i.test(server)) add('cloudflare', `server: ${server}`)

  if (/^(?:nginx|openresty)\b/i.test(server)) add('nginx', `server: ${server}`)
  if (/^apache\b/i.test(server)) add('apache', `server: ${server}`)
  // LiteSpeed reads Apache's .htaccess, mod_headers and mod_rewrite directives as they are.
  if (/^litespeed\b/i.test(server)) add('apache', `server: ${server} (reads Apache .htaccess)`)
  if (/^caddy\b/i.test(server)) add('caddy', `server: ${server}`)
  if (/^microsoft-iis\b/i.test(server)) add('iis', `server: ${server}`)

  if (/^express\b/i.test(poweredBy)) add('express', `x-powered-by: ${poweredBy}`)
  if (/^asp\.net\b/i.test(poweredBy)) add('iis', `x-powered-by: ${poweredBy}`)
  if (h['x-aspnet-version'] !== undefined) add('iis', `x-aspnet-version: ${h['x-aspnet-version']}`)
  if (h['x-aspnetmvc-version'] !== undefined) add('iis', `x-aspnetmvc-version: ${h['x-aspnetmvc-version']}`)
  if (/\bphusion[ _]passenger\b|^passenger\b/i.test(poweredBy) || /\bphusion[ _]passenger\b/i.test(server))
    weak('rails', `${poweredBy ? `x-powered-by: ${poweredBy}` : `server: ${server}`} (Passenger, usually Rails)`)
  if (h['x-runtime'] !== undefined) weak('rails', 'x-runtime header (Rack)')
  if (/^(?:WSGIServer|gunicorn)\b/i.test(server)) weak('django', `server: ${server} (a Python app server)`)
  if (/\bphp\b/i.test(poweredBy)) found.hints.push(`x-powered-by: ${poweredBy}`)

  for (const name of signals.cookieNames ?? []) {
    if (name === 'connect.sid') add('express', 'connect.sid cookie (express-session)')
    else if (name === 'csrftoken') add('django', 'csrftoken cookie')
    else if (name === 'sessionid') weak('django', 'sessionid cookie')
    else if (name === '_session_id' || /^_[a-z0-9_]+_session$/i.test(name)) add('rails', `${name} cookie`)
    else if (name === 'ASP.NET_SessionId' || name === '.ASPXAUTH') add('iis', `${name} cookie`)
    else if (/^\.AspNetCore\./.test(name)) weak('iis', `${name} cookie (ASP.NET Core)`)
    else if (name === 'PHPSESSID') found.hints.push('PHPSESSID cookie (PHP sessions)')
  }
  for (const id of signals.pageSignatures ?? []) {
    const sig = PAGE_SIGNATURES.find((s) => s.id === id)
    if (sig) add(sig.platform, sig.label)
  }
  return found
}

/**
 * Chooses the platform whose config a coding agent should change:
 * 1. A framework the server itself names (Next.js by x-powered-by or x-nextjs-*, Express, Django, Rails): its
 *    own settings apply wherever it runs, behind any proxy.
 * 2. Vercel, then Netlify: their config files live in the repository and work whatever the framework.
 * 3. The origin's web server: nginx, Apache, Caddy, IIS, even behind a CDN.
 * 4. Cloudflare: a dashboard setting, for sites where nothing behind it shows.
 * 5. Next.js seen only from /_next/ assets: possibly a static export, where next.config.js headers do nothing.
 * 6. Only hints (a sessionid cookie, an X-Runtime header, a Python app server), in the same order.
 */
export function detectFromSignals(signals: PlatformSignals): PlatformDetection {
  const found = collect(signals)
  const nextFromServer = (found.strong.nextjs ?? []).some((why) => why !== '/_next/ assets in the page')
  const frameworks: Named[] = ['express', 'django', 'rails']
  const servers: Named[] = ['nginx', 'apache', 'caddy', 'iis']
  const order: Named[] = nextFromServer
    ? ['nextjs', ...frameworks, 'vercel', 'netlify', ...servers, 'cloudflare']
    : [...frameworks, 'vercel', 'netlify', ...servers, 'cloudflare', 'nextjs']
  const strong = order.find((p) => found.strong[p])
  const weak = strong ? undefined : order.find((p) => found.weak[p])
  const platform: Platform = strong ?? weak ?? 'generic'
  const signalsOf = (p: Named) => [...(found.strong[p] ?? []), ...(found.weak[p] ?? [])]
  return {
    platform,
    detectedFrom: platform === 'generic' ? [] : signalsOf(platform),
    alsoDetected: order.filter((p) => p !== platform && (found.strong[p] || found.weak[p])),
    hints: found.hints,
  }
}

/** Detects the platform from a response's headers (lower-cased names), its page HTML and the extras. */
export function detectPlatform(headers: Record<string, string>, html = '', extras: SignalExtras = {}): PlatformDetection {
  return detectFromSignals(platformSignals(headers, html, extras))
}

interface ReportLike {
  checks?: ReadonlyArray<{ id: string; evidence?: Record<string, unknown> }>
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)

/** URL-like strings anywhere in a piece of evidence (script URLs, resource URLs), bounded in depth and count. */
function urlsIn(value: unknown, out: string[], depth = 0): void {
  if (out.length >= 500 || depth > 4) return
  if (typeof value === 'string') {
    if (/^(?:https?:\/\/|\/)/i.test(value)) out.push(value.slice(0, 500))
  } else if (Array.isArray(value)) {
    for (const v of value) urlsIn(v, out, depth + 1)
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) urlsIn(v, out, depth + 1)
  }
}

/**
 * The signals a report recorded without them still carries: the Server, X-Powered-By and similar headers
 * named in version-disclosure's evidence, cookie names in the cookie checks' evidence, and script or
 * resource URLs in any check's evidence.
 */
export function signalsFromReport(report: ReportLike): PlatformSignals {
  const headers: Record<string, string> = {}
  const urls: string[] = []
  const cookies: string[] = []
  for (const check of report.checks ?? []) {
    const e = check.evidence ?? {}
    // Cookie checks list the names of the cookies they judged (never their values).
    if (check.id.startsWith('cookie-')) {
      for (const v of Object.values(e)) {
        if (Array.isArray(v)) for (const name of v) if (typeof name === 'string') cookies.push(`${name}=`)
      }
    }
    if (check.id === 'version-disclosure') {
      const server = str(e.server)
      if (server) headers.server = server
      for (const d of Array.isArray(e.disclosures) ? e.disclosures : []) {
        const name = str((d as { name?: unknown })?.name)
        const value = str((d as { value?: unknown })?.value)
        if (name && value && name !== 'meta generator') headers[name.toLowerCase()] ??= value
      }
    }
    urlsIn(e, urls)
  }
  return platformSignals(headers, urls.join('\n'), { setCookies: cookies })
}
