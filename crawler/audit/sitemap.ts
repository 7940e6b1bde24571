// Sitemaps (sitemaps.org protocol 0.9): a <urlset> lists pages in <url><loc>; a <sitemapindex> lists
// other sitemaps in <sitemap><loc>. Locations are entity-escaped XML text, possibly in CDATA. A plain-text
// sitemap (one URL per line) is accepted too, as the protocol allows. Read with a tolerant scanner, not a
// validating parser: real sitemaps are often slightly malformed and we only want the locations.

export type ParsedSitemap = { kind: 'urlset' | 'index' | 'text'; locs: string[] }

/** The protocol's own limits: 50,000 URLs and 50 MB uncompressed per file. We read less. */
export const SITEMAP_MAX_BYTES = 10 * 1024 * 1024
export const SITEMAP_MAX_LOCS = 50_000

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const n = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
      return Number.isFinite(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : m
    }
    return ENTITIES[e.toLowerCase()] ?? m
  })
}

export function parseSitemap(text: string): ParsedSitemap {
  const body = text.slice(0, SITEMAP_MAX_BYTES).replace(/^\uFEFF/, '')
  const head = body.trimStart()
  if (!head.startsWith('<')) {
    const locs = body
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => /^https?:\/\//i.test(l))
      .slice(0, SITEMAP_MAX_LOCS)
    return { kind: 'text', locs }
  }
  const kind = /<(?:[\w-]+:)?sitemapindex[\s>]/i.test(body) ? 'index' : 'urlset'
  const locs: string[] = []
  const re = /<(?:[\w-]+:)?loc\s*>([\s\S]*?)<\/(?:[\w-]+:)?loc\s*>/gi
  for (let m = re.exec(body); m && locs.length < SITEMAP_MAX_LOCS; m = re.exec(body)) {
    let v = m[1]!.trim()
    const cdata = /^<!\[CDATA\[([\s\S]*?)\]\]>$/.exec(v)
    v = cdata ? cdata[1]!.trim() : unescapeXml(v)
    if (v) locs.push(v)
  }
  return { kind, locs }
}
