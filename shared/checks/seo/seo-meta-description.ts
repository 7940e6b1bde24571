// The meta description of the rendered page, which search engines use for the snippet under the title.

import { defineCheck } from '../types.ts'
import { metaNamed } from '../util/html.ts'
import { notHtmlReason, textLength } from './document.ts'

export const seoMetaDescription = defineCheck({
  id: 'seo-meta-description',
  category: 'seo',
  title: 'The page has a meta description',
  failTitle: 'The page has no meta description',
  description: 'Looks for <meta name="description" content="..."> in the rendered page.',
  why:
    'Search engines and link previews use the description as the snippet under the title; without one they pick arbitrary text from the' +
    ' page, often navigation or cookie banners.',
  confirmation:
    'Reads <meta name="description"> from the rendered DOM, so descriptions added by JavaScript count. Warns when it is missing or ' +
    'its content is empty. Length is reported, not judged: engines cut snippets by pixel width and often rewrite them. Skipped when ' +
    'the page is not HTML.',
  severity: 'low',
  fix: {
    generic:
      'Add a one- or two-sentence summary of the page to the <head>: <meta name="description" content="What this page offers, in about ' +
      '150 characters.">',
    vercel:
      'Set the description in your framework (Next.js metadata, react-helmet, Vue useHead) or the HTML template and redeploy; the ' +
      'platform does not add one.',
    netlify: 'Set the description in your framework or the HTML template and redeploy; the platform does not add one.',
    nextjs:
      "App Router: export const metadata = { description: 'What this page offers.' } in the page or layout. Pages Router: <Head><meta " +
      'name="description" content="What this page offers." /></Head>.',
    nginx: 'Add <meta name="description" content="..."> to the page templates (index.html for a single-page app) and redeploy the files.',
    cloudflare:
      'Add the tag in your templates and redeploy (Pages); for pages you cannot rebuild, a Worker with HTMLRewriter can append it to ' +
      '<head>.',
  },
  requires: ['page', 'mainResponse'],
  run: ({ page, mainResponse }) => {
    const notHtml = notHtmlReason(page, mainResponse)
    if (notHtml) return { status: 'skipped', evidence: { page: page.finalUrl, reason: notHtml }, summary: `Not applicable: ${notHtml}` }
    const descriptions = metaNamed(page.html, 'description').map((d) => d.replace(/\s+/g, ' ').trim())
    const description = descriptions.find((d) => d.length > 0)
    if (description === undefined) {
      return {
        status: 'warn',
        evidence: { page: page.finalUrl, found: descriptions.length },
        summary: descriptions.length > 0 ? 'The meta description is empty.' : 'The page has no meta description.',
      }
    }
    const length = textLength(description)
    return {
      status: 'pass',
      evidence: { page: page.finalUrl, description: description.slice(0, 300), length, count: descriptions.length },
      summary: `Meta description present (${length} characters).`,
    }
  },
})
