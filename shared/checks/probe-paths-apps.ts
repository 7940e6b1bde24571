// Paths of known web applications, probed only when the scan gives a reason: the WordPress group when the
// page shows it is WordPress, and a short list relative to the scanned URL's base path when that is not the
// origin's root (applications installed under /dokuwiki/, /phpmyadmin/, /mediawiki/). Sent with the other
// probes (crawler/gather/app-probes.ts), kept in artifacts.probes under their paths, counted against
// APP_PROBE_BUDGET. The plan is a pure function of the final URL and the main response, so the checks that
// read these answers compute the same plan from the same artifacts.

import { metaNamed, startTags } from './util/html.ts'
import { parseUrl } from './util/http.ts'

/** Relative to the WordPress root: the readme, XML-RPC, the REST user list (both URL forms), author archive 1, WP-Cron. */
export const WORDPRESS_PROBES = {
  readme: 'readme.html',
  xmlrpc: 'xmlrpc.php',
  restUsers: 'wp-json/wp/v2/users',
  restRouteUsers: '?rest_route=/wp/v2/users',
  author: '?author=1',
  cron: 'wp-cron.php',
} as const
export type WordPressProbe = keyof typeof WORDPRESS_PROBES

/**
 * Relative to the scanned URL's base path when it is not "/": a DokuWiki installer, phpMyAdmin's bundled
 * documentation, MediaWiki's installer, and a Composer manifest (read by exposed-package-manifest).
 */
export const BASE_PATH_PROBES = {
  dokuwikiInstaller: 'install.php',
  phpMyAdminDocs: 'doc/html/index.html',
  mediawikiInstaller: 'mw-config/',
  composer: 'composer.json',
} as const
export type BasePathProbe = keyof typeof BASE_PATH_PROBES

/** Requests one scan makes at most for these probes, besides PROBE_BUDGET: stated in the report. */
export const APP_PROBE_BUDGET = Object.keys(WORDPRESS_PROBES).length + Object.keys(BASE_PATH_PROBES).length

export interface AppProbePlan {
  /** The WordPress root path ("/" or "/blog/") and its probe paths, or null when the page is not WordPress. */
  wordpress: { root: string; signals: string[]; paths: Record<WordPressProbe, string> } | null
  /**
   * The base path and its probe paths: a DokuWiki's or MediaWiki's installation directory (by its generator
   * and its own script URLs), else the scanned URL's directory; null when that is the origin's root.
   */
  base: { base: string; paths: Record<BasePathProbe, string> } | null
}

const SAFE_PATH = /^\/(?:[A-Za-z0-9._~%!$&'()*+,;=:@-]+\/){0,8}$/
const SCRIPT_SEGMENT = /\.(?:php\d?|phtml|aspx?|jsp|cgi|pl|s?html?)$/i
const HEAD_SCAN = 256 * 1024

/** A directory path fit to put probe paths under: absolute, ending in "/", no dot segments, at most 8 deep. */
function safeDir(path: string): string | null {
  if (path.length > 200 || !SAFE_PATH.test(path)) return null
  return path.split('/').some((s) => s === '.' || s === '..' || /^%2e/i.test(s)) ? null : path
}

/**
 * The base path of the scanned URL: its directory, cut before the first script segment that has more path
 * after it (/mediawiki/index.php/Main_Page is under /mediawiki/). "/" when it has none.
 */
export function basePathOf(finalUrl: string): string {
  const pathname = parseUrl(finalUrl)?.pathname
  if (!pathname) return '/'
  const segments = pathname.split('/').slice(1)
  const kept: string[] = []
  for (let i = 0; i < segments.length - 1; i++) {
    if (SCRIPT_SEGMENT.test(segments[i]!)) break
    kept.push(segments[i]!)
  }
  return safeDir(`/${kept.map((s) => `${s}/`).join('')}`) ?? '/'
}

const sameHostPath = (href: string | undefined, pageUrl: URL): URL | null => {
  const u = parseUrl(href?.trim(), pageUrl.href)
  return u && u.hostname === pageUrl.hostname && (u.protocol === 'http:' || u.protocol === 'https:') ? u : null
}

const WP_ASSET = /^(.*?\/)wp-(?:content|includes)\//

/**
 * Whether the page is WordPress, by what WordPress writes into every page head: its generator meta, the
 * REST API link (rel="https://api.w.org/"), the RSD link to xmlrpc.php, and /wp-content/ or /wp-includes/
 * URLs. The root comes from those links when they are on the page's host, else "/".
 */
export function wordpressOf(html: string, finalUrl: string, linkHeader = ''): { root: string; signals: string[] } | null {
  const page = parseUrl(finalUrl)
  if (!page) return null
  const head = html.slice(0, HEAD_SCAN)
  const signals: string[] = []
  // Candidate roots by how surely they name it: the RSD link is site_url('xmlrpc.php'), the REST link may
  // carry a custom prefix, and wp-content may be moved (WP_CONTENT_URL).
  const roots: Record<'rsd' | 'rest' | 'assets', string[]> = { rsd: [], rest: [], assets: [] }
  if (metaNamed(head, 'generator').some((g) => /^\s*WordPress\b/i.test(g))) signals.push('generator')
  const restRoot = (ref: string | undefined) => {
    const u = sameHostPath(ref, page)
    if (u?.searchParams.has('rest_route')) roots.rest.push(u.pathname.replace(/[^/]*$/, ''))
    else if (u && /\/wp-json\/?$/.test(u.pathname)) roots.rest.push(u.pathname.replace(/wp-json\/?$/, ''))
  }
  // WordPress sends the REST link as a header too (Link: <.../wp-json/>; rel="https://api.w.org/").
  const headerLink = /<([^>]{1,500})>\s*;\s*rel="https:\/\/api\.w\.org\/"/.exec(linkHeader.slice(0, 4_000))
  if (headerLink) {
    signals.push('rest-header')
    restRoot(headerLink[1])
  }
  for (const t of startTags(head, ['link', 'script', 'img', 'a'])) {
    const rel = (t.attrs.rel ?? '').toLowerCase()
    const ref = t.attrs.href ?? t.attrs.src
    if (t.name === 'link' && rel.split(/\s+/).includes('https://api.w.org/')) {
      if (!signals.includes('rest-link')) signals.push('rest-link')
      restRoot(ref)
    } else if (t.name === 'link' && rel === 'edituri' && /xmlrpc\.php\?rsd\b/i.test(ref ?? '')) {
      if (!signals.includes('rsd-link')) signals.push('rsd-link')
      const u = sameHostPath(ref, page)
      if (u) roots.rsd.push(u.pathname.replace(/xmlrpc\.php$/, ''))
    } else if (ref && /\/wp-(?:content|includes)\//.test(ref)) {
      // A link to another site's uploads says nothing of this one; its own assets may come from a CDN.
      const u = sameHostPath(ref, page)
      if (t.name === 'a' && !u) continue
      if (!signals.includes('wp-assets')) signals.push('wp-assets')
      const m = u ? WP_ASSET.exec(u.pathname) : null
      if (m) roots.assets.push(m[1]!)
    }
  }
  if (signals.length === 0) return null
  const root = [...roots.rsd, ...roots.rest, ...roots.assets].map(safeDir).find((r): r is string => r !== null) ?? '/'
  return { root, signals }
}

const under = <K extends string>(dir: string, rel: Record<K, string>): Record<K, string> =>
  Object.fromEntries(Object.entries<string>(rel).map(([k, p]) => [k, dir + p])) as Record<K, string>

/** A wiki says so in its generator meta, wherever it is installed. */
const WIKI_GENERATOR = /^\s*(DokuWiki|MediaWiki)\b/i
/**
 * The scripts every page of the wiki loads from its installation directory, which short URLs (/wiki/Page
 * served by /w/index.php, DokuWiki's /ns/page rewrites) do not show: MediaWiki's load.php, api.php (the RSD
 * link), opensearch_desc.php and index.php, DokuWiki's lib/exe/ and lib/tpl/.
 */
const WIKI_ASSET: Record<'dokuwiki' | 'mediawiki', RegExp> = {
  mediawiki: /^(.*?\/)(?:load|api|opensearch_desc|index)\.php$/,
  dokuwiki: /^(.*?\/)lib\/(?:exe|tpl)\//,
}

/** A DokuWiki's or MediaWiki's installation directory, from its own script URLs on the page's host; null if none. */
export function wikiRootOf(html: string, finalUrl: string): string | null {
  const head = html.slice(0, HEAD_SCAN)
  const name = metaNamed(head, 'generator')
    .map((g) => WIKI_GENERATOR.exec(g)?.[1]?.toLowerCase())
    .find((g) => g !== undefined) as 'dokuwiki' | 'mediawiki' | undefined
  const page = parseUrl(finalUrl)
  if (!name || !page) return null
  for (const t of startTags(head, ['link', 'script'])) {
    const u = sameHostPath(t.attrs.href ?? t.attrs.src, page)
    const m = u ? WIKI_ASSET[name].exec(u.pathname) : null
    const dir = m ? safeDir(m[1]!) : null
    if (dir) return dir
  }
  return basePathOf(finalUrl)
}

/** What to probe for this scan, from its final URL and the main response (its body and Link header). */
export function planAppProbes(finalUrl: string, main: { body: string; headers?: Record<string, string> }): AppProbePlan {
  const wp = wordpressOf(main.body, finalUrl, main.headers?.link ?? '')
  // A wiki's own scripts name its directory; otherwise the scanned URL's, when it is not the root.
  const wiki = wikiRootOf(main.body, finalUrl)
  const base = wiki ?? basePathOf(finalUrl)
  return {
    wordpress: wp ? { ...wp, paths: under(wp.root, WORDPRESS_PROBES) } : null,
    base: wiki !== null || base !== '/' ? { base, paths: under(base, BASE_PATH_PROBES) } : null,
  }
}

/** The plan's paths, each once, leaving out any the fixed probe list already has. */
export function appProbePaths(plan: AppProbePlan, fixed: readonly string[] = []): string[] {
  const all = [...Object.values(plan.wordpress?.paths ?? {}), ...Object.values(plan.base?.paths ?? {})]
  const skip = new Set(fixed)
  return [...new Set(all)].filter((p) => !skip.has(p))
}
