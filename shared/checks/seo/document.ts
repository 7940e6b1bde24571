// What the SEO checks read from the rendered page: whether it is an HTML document, its <head>, its
// <html> and <link> attributes, and the response headers of the document itself.

import type { BrowserRequest, HttpResponseArtifact, PageArtifact } from '../types.ts'
import { decodeEntities, startTags } from '../util/html.ts'

/** The browser's request for the page's own document (the last one for the final URL, after redirects). */
export function documentRequest(page: PageArtifact): BrowserRequest | null {
  let found: BrowserRequest | null = null
  for (const r of page.requests) {
    if (r.resourceType === 'document' && r.url === page.finalUrl) found = r
  }
  return found
}

/** Response headers of the page's document: the browser's copy, else the plain-HTTP one when it is the same URL. */
export function documentHeaders(page: PageArtifact, mainResponse: HttpResponseArtifact): Record<string, string> {
  const request = documentRequest(page)
  if (request && request.status > 0) return request.headers
  return mainResponse.url === page.finalUrl ? mainResponse.headers : {}
}

/** Why the page is not an HTML document to judge (an API answering JSON, an empty DOM), or null when it is. */
export function notHtmlReason(page: PageArtifact, mainResponse: HttpResponseArtifact): string | null {
  const contentType = (documentHeaders(page, mainResponse)['content-type'] ?? '').toLowerCase()
  if (contentType && !/\b(?:text\/html|application\/xhtml\+xml)\b/.test(contentType)) {
    return `The page is served as ${contentType.split(';')[0]!.trim()}, not HTML.`
  }
  if (page.html.trim() === '') return 'The rendered DOM could not be read.'
  return null
}

/** The part of the DOM before <body>: where the title, meta tags and canonical link belong. */
export function headOf(html: string): string {
  const body = /<body\b/i.exec(html)
  return body ? html.slice(0, body.index) : html
}

/** Attributes of every <link> start tag (markup quoted inside scripts and comments is not a tag). */
export function linkTags(html: string): Array<Record<string, string>> {
  return startTags(html, ['link']).map((t) => t.attrs)
}

/** The <html> element's attributes (the rendered DOM always has one; {} when it cannot be read). */
export function htmlElementAttributes(html: string): Record<string, string> {
  return startTags(headOf(html), ['html'])[0]?.attrs ?? {}
}

/** The document title as a browser shows it: the first <title> in the head, entities decoded, whitespace collapsed. */
export function documentTitle(html: string): string | null {
  const match = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(headOf(html))
  if (!match) return null
  return decodeEntities(match[1]!).replace(/\s+/g, ' ').trim()
}

/** Counts user-perceived characters closely enough for length limits (code points, not UTF-16 units). */
export function textLength(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}
