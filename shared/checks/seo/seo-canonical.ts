// The canonical URL the page declares: valid, single, and on the page's own origin.

import { defineCheck } from '../types.ts'
import { clip, headerValue, parseUrl } from '../util/http.ts'
import { documentBaseUrl } from '../util/html.ts'
import { documentHeaders, headOf, linkTags, notHtmlReason } from './document.ts'

interface Canonical {
  source: 'link' | 'header'
  href: string
}

/** rel="canonical" targets in a Link header: <https://example.com/>; rel="canonical" */
function canonicalsInLinkHeader(value: string): string[] {
  const out: string[] = []
  for (const m of value.matchAll(/<([^>]*)>([^<]*)/g)) {
    const rel = m[2]!
      .split(';')
      .map((p) => /^\s*rel\s*=\s*"?([^"]*)"?/i.exec(p.replace(/,\s*$/, ''))?.[1])
      .find((r) => r !== undefined)
    if (rel?.toLowerCase().split(/\s+/).includes('canonical')) out.push(m[1]!.trim())
  }
  return out
}

export const seoCanonical = defineCheck({
  id: 'seo-canonical',
  category: 'seo',
  title: 'The canonical URL is valid and on this site',
  failTitle: 'The canonical URL is invalid or on another site',
  description: 'Reads <link rel="canonical"> in the rendered <head> and rel="canonical" in the Link header of the page\'s response.',
  why:
    'The canonical URL tells search engines which address to index. A broken one is ignored; one pointing at another origin (a staging ' +
    "host, the http:// version, another domain) moves this page's ranking there or drops it.",
  confirmation:
    'Resolves each canonical against the page URL (or its <base href>; relative URLs are allowed). Warns when one is empty, ' +
    'unparsable or not http(s), when several disagree, or when it points to another origin (scheme, host or port differ: http vs ' +
    'https and www vs apex count), which is sometimes intended (a preview deployment pointing at production) and worth confirming. A ' +
    'canonical to another path on the same origin passes (normal for URLs with parameters). No canonical is reported as info: search ' +
    'engines then choose one themselves. Skipped when the page is not HTML.',
  severity: 'low',
  fix: {
    generic:
      'Put one absolute canonical URL on the page\'s own origin in the <head>: <link rel="canonical" ' +
      'href="https://www.example.com/current/path">, using the scheme and host you want indexed.',
    vercel:
      'Generate the canonical from the production domain, not the deployment URL: build it from an environment variable such as ' +
      "NEXT_PUBLIC_SITE_URL set per environment, and redirect the other domain variants in the project's Domains settings.",
    netlify:
      "Build the canonical from the URL environment variable (the site's main address; DEPLOY_PRIME_URL is the preview one) and set a " +
      'primary domain so the other variants redirect.',
    nextjs:
      "In the root layout: export const metadata = { metadataBase: new URL('https://www.example.com') }, and per page alternates: { " +
      "canonical: '/current/path' }.",
    nginx:
      'Fix the canonical in the templates, and redirect the other host and scheme variants to the canonical origin: server { ' +
      'server_name example.com; return 301 https://www.example.com$request_uri; }',
    cloudflare:
      'Fix the canonical in the templates and redeploy; redirect the other host variant with Rules > Redirect Rules (e.g. example.com/*' +
      ' to https://www.example.com/${1}) so only one origin serves the pages.',
  },
  requires: ['page', 'mainResponse'],
  run: ({ page, mainResponse }) => {
    const notHtml = notHtmlReason(page, mainResponse)
    if (notHtml) return { status: 'skipped', evidence: { page: page.finalUrl, reason: notHtml }, summary: `Not applicable: ${notHtml}` }
    const canonicals: Canonical[] = []
    for (const link of linkTags(headOf(page.html))) {
      const rel = (link.rel ?? '').toLowerCase().split(/\s+/)
      if (rel.includes('canonical')) canonicals.push({ source: 'link', href: (link.href ?? '').trim() })
    }
    const linkHeader = headerValue(documentHeaders(page, mainResponse), 'link')
    if (linkHeader) for (const href of canonicalsInLinkHeader(linkHeader)) canonicals.push({ source: 'header', href })

    if (canonicals.length === 0) {
      return {
        status: 'info',
        severity: 'info',
        evidence: { page: page.finalUrl, canonical: null },
        summary: 'No canonical URL declared: search engines choose one themselves.',
      }
    }
    const pageUrl = parseUrl(page.finalUrl)
    const base = documentBaseUrl(page.html, page.finalUrl)
    const resolved = canonicals.map((c) => {
      // A Link header resolves against the response URL; a <link> against the document base (<base href>).
      const url = c.href ? parseUrl(c.href, c.source === 'link' ? base : page.finalUrl) : null
      const valid = url !== null && (url.protocol === 'http:' || url.protocol === 'https:')
      return {
        source: c.source,
        href: clip(c.href, 300),
        url: valid ? url!.href : null,
        sameOrigin: valid && pageUrl !== null && url!.origin === pageUrl.origin,
      }
    })
    const evidence = { page: page.finalUrl, canonicals: resolved.slice(0, 10) }
    const invalid = resolved.find((c) => c.url === null)
    if (invalid) {
      return {
        status: 'warn',
        evidence,
        summary: `The canonical URL "${clip(invalid.href, 80)}" is not a valid http(s) URL; search engines ignore it.`,
      }
    }
    const distinct = [...new Set(resolved.map((c) => c.url))]
    if (distinct.length > 1) {
      return {
        status: 'warn',
        evidence,
        summary: `The page declares ${distinct.length} different canonical URLs (${distinct.slice(0, 2).join(', ')}); search engines ignore conflicting ones.`,
      }
    }
    const canonical = resolved[0]!
    if (!canonical.sameOrigin) {
      return {
        status: 'warn',
        evidence,
        summary: `The canonical URL ${canonical.url} is on another origin than the page (${pageUrl?.origin ?? page.finalUrl}): confirm that is intended.`,
      }
    }
    const samePage = pageUrl !== null && canonical.url === pageUrl.href.replace(/#.*$/, '')
    return {
      status: 'pass',
      evidence,
      summary: samePage ? `The page is its own canonical (${canonical.url}).` : `Canonical URL on the same origin: ${canonical.url}.`,
    }
  },
})
