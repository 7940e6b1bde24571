// The crawl frontier: which URLs are known, which wait, in what order. Breadth first (lower depth
// first), so a page cap keeps the pages closest to the start. Every URL goes through normaliseUrl
// before it counts, so one page is one entry however it was linked.

/** Extensions that are never HTML pages: linked files are not navigated to. */
const NON_HTML_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'avif',
  'svg',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'css',
  'js',
  'mjs',
  'map',
  'json',
  'xml',
  'rss',
  'atom',
  'txt',
  'csv',
  'tsv',
  'pdf',
  'doc',
  'docx',
  'xls',
  'xlsx',
  'ppt',
  'pptx',
  'odt',
  'ods',
  'rtf',
  'epub',
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  '7z',
  'rar',
  'tar',
  'dmg',
  'exe',
  'msi',
  'apk',
  'deb',
  'rpm',
  'iso',
  'bin',
  'mp3',
  'mp4',
  'm4a',
  'm4v',
  'webm',
  'ogg',
  'ogv',
  'wav',
  'flac',
  'avi',
  'mov',
  'mkv',
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  'wasm',
])

/** Query parameters that only track where a visitor came from: dropped, so they do not multiply pages. */
const TRACKING_PARAMS = /^(utm_[a-z]+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|_gl)$/i

/** Distinct query strings kept per path: `?page=1..1000` or `?sort=` variants must not eat the page budget. */
export const MAX_QUERY_VARIANTS_PER_PATH = 5

/** Longest URL the crawler queues (longer ones are usually generated traps). */
export const MAX_CRAWL_URL_LENGTH = 2_000

/**
 * The crawlable form of a link, or null: resolved against `base`, same origin as `origin`, http(s),
 * no fragment, tracking parameters dropped, query parameters sorted (a stable key), not a file by its
 * extension.
 */
export function normaliseUrl(href: string, base: string, origin: string): string | null {
  let u: URL
  try {
    u = new URL(href, base)
  } catch {
    return null
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
  if (u.origin !== origin) return null
  if (u.username || u.password) return null
  u.hash = ''
  if (u.search) {
    const params = [...u.searchParams].filter(([k]) => !TRACKING_PARAMS.test(k))
    params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    u.search = params.length ? new URLSearchParams(params).toString() : ''
  }
  const ext = /\.([a-z0-9]{1,5})$/i.exec(u.pathname)?.[1]?.toLowerCase()
  if (ext && NON_HTML_EXTENSIONS.has(ext)) return null
  if (u.href.length > MAX_CRAWL_URL_LENGTH) return null
  return u.href
}

export interface FrontierEntry {
  url: string
  depth: number
}

export class Frontier {
  /** Every URL ever accepted (queued, in flight or done). */
  private known = new Set<string>()
  /** Known URLs that turned out not to be pages (non-HTML): still known, so never queued again, but not counted. */
  private notPages = new Set<string>()
  private variants = new Map<string, Set<string>>()
  /** Waiting URLs, one queue per depth. */
  private queues: FrontierEntry[][] = []
  private waiting = 0

  constructor(
    private maxDepth: number,
    /** Robots and any other gate; a refused URL is remembered as known so it is not asked again. */
    private allowed: (url: URL) => boolean,
  ) {}

  /** Number of distinct pages accepted so far. */
  get size(): number {
    return this.known.size - this.notPages.size
  }

  get pending(): number {
    return this.waiting
  }

  has(url: string): boolean {
    return this.known.has(url)
  }

  /** Marks a URL as already done (resume) without queueing it. */
  markDone(url: string): void {
    this.known.add(url)
  }

  /**
   * Queues an already-normalised URL; false when known, too deep, over its query-variant bound, or
   * refused. `force` skips the gate (the start URL, which the caller asked for by name).
   */
  add(url: string, depth: number, force = false): boolean {
    if (depth > this.maxDepth || this.known.has(url)) return false
    const u = new URL(url)
    if (u.search) {
      const key = u.origin + u.pathname
      const seen = this.variants.get(key) ?? new Set<string>()
      if (!seen.has(u.search) && seen.size >= MAX_QUERY_VARIANTS_PER_PATH) return false
      seen.add(u.search)
      this.variants.set(key, seen)
    }
    if (!force && !this.allowed(u)) return false
    this.known.add(url)
    ;(this.queues[depth] ??= []).push({ url, depth })
    this.waiting++
    return true
  }

  /** The next URL to visit, lowest depth first; null when none waits. */
  next(): FrontierEntry | null {
    for (const q of this.queues) {
      if (q && q.length > 0) {
        this.waiting--
        return q.shift()!
      }
    }
    return null
  }

  /** A URL that turned out not to be a page (non-HTML): no longer counted as discovered. */
  notAPage(url: string): void {
    if (this.known.has(url)) this.notPages.add(url)
  }
}
