// Whether the page asks search engines not to index it: meta robots tags and X-Robots-Tag headers.

import { defineCheck } from '../types.ts'
import { metaTags, startTags } from '../util/html.ts'
import { clip, headerValue, splitList } from '../util/http.ts'
import { documentHeaders, notHtmlReason } from './document.ts'

/** Directives whose own syntax has a colon: "unavailable_after: 25 Jun 2030", "max-snippet: 20". */
const COLON_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview'])
/** Meta names that address crawlers: robots, or a crawler by name (googlebot, bingbot, googlebot-news ...). */
const CRAWLER_META = /^(?:robots|[a-z-]*bot(?:-[a-z]+)?|slurp|yandex|baiduspider)$/

interface Directive {
  source: 'meta' | 'header'
  /** "all" for robots / an unprefixed header, else the crawler named. */
  agent: string
  value: string
}

/** Splits an X-Robots-Tag value: "noindex, nofollow", "googlebot: noindex", "otherbot: noindex, nofollow". */
export function parseRobotsHeader(value: string): Array<{ agent: string; directive: string }> {
  const out: Array<{ agent: string; directive: string }> = []
  let agent = 'all'
  for (const token of splitList(value)) {
    const m = /^([\w.-]+)\s*:\s*(.*)$/.exec(token)
    if (m && !COLON_DIRECTIVES.has(m[1]!.toLowerCase())) {
      agent = m[1]!.toLowerCase()
      if (m[2]!.trim()) out.push({ agent, directive: m[2]!.trim().toLowerCase() })
    } else {
      out.push({ agent, directive: token.toLowerCase() })
    }
  }
  return out
}

const blocksIndexing = (directive: string) => directive === 'noindex' || directive === 'none'

/** Whether the rendered page asks for a password: a sign-in page, which sites keep out of search results on purpose. */
function asksForPassword(html: string): boolean {
  return startTags(html, ['input']).some((t) => (t.attrs.type ?? '').trim().toLowerCase() === 'password')
}

/**
 * How deliberate a noindex looks. A sign-in page kept out of search results is what it should be. A page-level
 * "noindex, follow" for every crawler, with no header saying noindex, is the per-page choice applications make for
 * pages with nothing to find yet (a wiki topic not written, a search result, a tag listing): worth knowing,
 * low. A blanket noindex (with nofollow, "none", a header, a named crawler) is what a staging setting carried
 * to production looks like: medium.
 */
function noindexKind(directives: Directive[], blocking: Directive[], html: string): 'sign-in' | 'per-page' | 'blanket' {
  if (asksForPassword(html)) return 'sign-in'
  const follows = directives.some((d) => d.source === 'meta' && d.agent === 'all' && d.value === 'follow')
  const blanket = blocking.some((d) => d.source === 'header' || d.agent !== 'all' || d.value === 'none')
  const noFollow = directives.some((d) => d.value === 'nofollow')
  return follows && !blanket && !noFollow ? 'per-page' : 'blanket'
}

export const seoIndexable = defineCheck({
  id: 'seo-indexable',
  category: 'seo',
  title: 'Search engines may index the page',
  failTitle: 'Search engines may not index the page',
  description:
    'Reads <meta name="robots"> (and crawler-specific tags such as googlebot) in the rendered page, and the X-Robots-Tag header of the ' +
    "page's response.",
  why:
    'A noindex left over from staging or a preview deployment silently removes the site from search results; it is worth knowing before' +
    ' launch, and worth confirming on a staging site that should stay out.',
  confirmation:
    'Warns when a robots meta tag or an X-Robots-Tag header says noindex or none, for all crawlers or a named one, with the exact tag' +
    ' or header as evidence: medium for a blanket noindex (with nofollow, "none", a header or a named crawler), low for a ' +
    'page-level "noindex, follow" (the per-page choice applications make for pages with nothing to find yet), and a pass for a ' +
    'sign-in page (a password field), which sites keep out of search results on purpose. nofollow, noarchive and the like are ' +
    "reported but do not warn. Reads the header from the browser's " +
    'response for the page (or the plain-HTTP response for the same URL) and the meta tags from the rendered DOM, so tags added by ' +
    'JavaScript count. robots.txt is not read: it controls crawling, not indexing. Skipped when the page is not HTML.',
  severity: 'medium',
  fix: {
    generic:
      'If the page should appear in search results, remove noindex from <meta name="robots"> and from the X-Robots-Tag header (often a ' +
      'staging setting carried to production). Keep it on staging and preview sites.',
    vercel:
      'Vercel adds "X-Robots-Tag: noindex" to preview deployments only; on the production domain remove noindex from your app\'s ' +
      'metadata and from any "headers" entry in vercel.json.',
    netlify:
      'Remove X-Robots-Tag: noindex from _headers or netlify.toml [[headers]] for production (keep it for deploy previews with a ' +
      "context-specific rule), and remove noindex from the page's robots meta tag.",
    nextjs:
      "Remove robots: { index: false } (or 'noindex') from the metadata export of the page or layout, and any X-Robots-Tag entry in " +
      'headers() of next.config.js, for production builds.',
    nginx:
      'Remove add_header X-Robots-Tag "noindex" from the production server block (keep it on staging), remove noindex from the robots ' +
      'meta tag in the templates, then nginx -s reload.',
    cloudflare:
      'Check Rules > Transform Rules > Modify Response Header for an X-Robots-Tag rule and remove it for the production hostname; Pages' +
      ' *.pages.dev preview URLs get noindex automatically, production domains do not.',
  },
  requires: ['page', 'mainResponse'],
  run: ({ page, mainResponse }) => {
    const notHtml = notHtmlReason(page, mainResponse)
    if (notHtml) return { status: 'skipped', evidence: { page: page.finalUrl, reason: notHtml }, summary: `Not applicable: ${notHtml}` }
    const directives: Directive[] = []
    for (const tag of metaTags(page.html)) {
      const name = tag.name?.trim().toLowerCase()
      if (!name || !CRAWLER_META.test(name) || tag.content === undefined) continue
      for (const d of splitList(tag.content))
        directives.push({ source: 'meta', agent: name === 'robots' ? 'all' : name, value: d.toLowerCase() })
    }
    const header = headerValue(documentHeaders(page, mainResponse), 'x-robots-tag')
    if (header) for (const d of parseRobotsHeader(header)) directives.push({ source: 'header', agent: d.agent, value: d.directive })

    const blocking = directives.filter((d) => blocksIndexing(d.value))
    const evidence = {
      page: page.finalUrl,
      directives: directives.slice(0, 20),
      ...(header ? { xRobotsTag: clip(header, 200) } : {}),
    }
    if (blocking.length > 0) {
      const first = blocking[0]!
      const where =
        first.source === 'header'
          ? `X-Robots-Tag: ${clip(header ?? '', 80)}`
          : `<meta name="${first.agent === 'all' ? 'robots' : first.agent}" content="${first.value}">`
      const who = first.agent === 'all' ? 'search engines' : first.agent
      const kind = noindexKind(directives, blocking, page.html)
      if (kind === 'sign-in')
        return {
          status: 'pass',
          evidence: { ...evidence, noindex: blocking, signInPage: true },
          summary: `A sign-in page kept out of search results (${where}): as it should be.`,
        }
      return {
        status: 'warn',
        ...(kind === 'per-page' ? { severity: 'low' as const } : {}),
        evidence: { ...evidence, noindex: blocking },
        summary:
          kind === 'per-page'
            ? `The page tells search engines not to index it but to follow its links (${where}): a per-page choice; remove it if this page should be found.`
            : `The page tells ${who} not to index it (${where}): fine for staging, remove it before launch.`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary:
        directives.length > 0
          ? `Indexable; robots directives: ${[...new Set(directives.map((d) => d.value))].join(', ')}.`
          : 'No noindex directive: search engines may index the page.',
    }
  },
})
