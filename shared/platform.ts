// Which hosting platform or framework serves a site, told from its response headers and page. Pure: the
// worker can record the few signals it needs, and fix briefs read them back (or, for reports recorded
// without them, read what the report's evidence still carries).

import type { Platform } from './checks/types.ts'

export type { Platform } from './checks/types.ts'

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
] as const

const MAX_VALUE = 200

/** The little a detection needs, small enough to store beside a scan. */
export interface PlatformSignals {
  /** Fingerprint headers only, lower-cased names, values cut to 200 characters. */
  headers: Record<string, string>
  /** The page loads Next.js assets (/_next/static/) or carries __NEXT_DATA__. */
  nextAssets: boolean
}

export interface PlatformDetection {
  /** The platform whose fix to apply; generic when nothing was recognised. */
  platform: Platform
  /** The signals that named it, e.g. "x-vercel-id header", "server: Vercel". */
  detectedFrom: string[]
  /** Every other platform with a signal, e.g. cloudflare in front of a Vercel app. */
  alsoDetected: Platform[]
}

const NEXT_ASSETS = /\/_next\/(?:static|image)\b|\b__NEXT_DATA__\b/

/** Keeps what detection reads from a response (headers with lower-cased names) and its page HTML. */
export function platformSignals(headers: Record<string, string>, html = ''): PlatformSignals {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if ((FINGERPRINT_HEADERS as readonly string[]).includes(lower) && typeof value === 'string')
      kept[lower] = value.trim().slice(0, MAX_VALUE)
  }
  return { headers: kept, nextAssets: NEXT_ASSETS.test(html) }
}

/** Reads stored signals back, refusing anything of another shape. */
export function asPlatformSignals(value: unknown): PlatformSignals | null {
  if (!value || typeof value !== 'object') return null
  const v = value as { headers?: unknown; nextAssets?: unknown }
  if (!v.headers || typeof v.headers !== 'object' || typeof v.nextAssets !== 'boolean') return null
  const headers = Object.fromEntries(Object.entries(v.headers).filter((e): e is [string, string] => typeof e[1] === 'string'))
  return { headers, nextAssets: v.nextAssets }
}

type Found = Partial<Record<Exclude<Platform, 'generic'>, string[]>>

function collect(signals: PlatformSignals): Found {
  const h = signals.headers
  const found: Found = {}
  const add = (p: Exclude<Platform, 'generic'>, why: string) => (found[p] ??= []).push(why)
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
  return found
}

/**
 * Chooses the platform whose config a coding agent should change:
 * 1. Next.js when the server itself says so (x-powered-by, x-nextjs-*): next.config.js applies wherever it runs.
 * 2. Vercel, then Netlify: their config files live in the repository and work whatever the framework.
 * 3. nginx: the origin's own config, even behind a CDN.
 * 4. Cloudflare: a dashboard setting, for sites where nothing behind it shows.
 * 5. Next.js seen only from /_next/ assets: possibly a static export, where next.config.js headers do nothing.
 */
export function detectFromSignals(signals: PlatformSignals): PlatformDetection {
  const found = collect(signals)
  const nextFromServer = (found.nextjs ?? []).some((why) => why !== '/_next/ assets in the page')
  const order: Array<Exclude<Platform, 'generic'>> = nextFromServer
    ? ['nextjs', 'vercel', 'netlify', 'nginx', 'cloudflare']
    : ['vercel', 'netlify', 'nginx', 'cloudflare', 'nextjs']
  const platform = order.find((p) => found[p]) ?? 'generic'
  return {
    platform,
    detectedFrom: platform === 'generic' ? [] : found[platform]!,
    alsoDetected: order.filter((p) => p !== platform && found[p]),
  }
}

/** Detects the platform from a response's headers (lower-cased names) and its page HTML. */
export function detectPlatform(headers: Record<string, string>, html = ''): PlatformDetection {
  return detectFromSignals(platformSignals(headers, html))
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
 * named in version-disclosure's evidence, and script or resource URLs in any check's evidence.
 */
export function signalsFromReport(report: ReportLike): PlatformSignals {
  const headers: Record<string, string> = {}
  const urls: string[] = []
  for (const check of report.checks ?? []) {
    const e = check.evidence ?? {}
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
  return platformSignals(headers, urls.join('\n'))
}
