// The document title of the rendered page: present, not empty, and short enough to show in full in results.

import { defineCheck } from '../types.ts'
import { documentTitle, notHtmlReason, textLength } from './document.ts'

/** Titles longer than this are usually cut in search results (Google truncates around 600 px). */
export const TITLE_MAX = 60

export const seoTitle = defineCheck({
  id: 'seo-title',
  category: 'seo',
  title: 'The page has a title',
  failTitle: 'The page has no title',
  description: 'Reads the <title> of the rendered page (after JavaScript ran), as browsers and search engines see it.',
  why:
    'The title is the headline of the page in search results, browser tabs, bookmarks and link previews; a missing one leaves search ' +
    'engines to invent it.',
  confirmation: `Reads the first <title> in the rendered <head>, entities decoded and whitespace collapsed (falling back to document.title). Fails when it is missing or empty; warns when it is longer than ${TITLE_MAX} characters, where results usually cut it. A single-page app shell with a static title passes. <title> elements inside inline SVG are not the document title. Skipped when the page is not HTML.`,
  severity: 'low',
  fix: {
    generic:
      'Give every page a unique, descriptive <title> of at most about 60 characters in the <head>, e.g. <title>Pricing – Acme</title>.',
    vercel:
      'The title comes from your framework, not the platform: set it in the page template or head component (Next.js metadata, ' +
      'react-helmet, Vue useHead) and redeploy.',
    netlify:
      'The title comes from your framework or static HTML: set <title> in the page template (or the head component of your framework) ' +
      'and redeploy.',
    nextjs:
      "App Router: export const metadata = { title: 'Pricing – Acme' } in the page or layout (or title.template in the root layout). " +
      'Pages Router: <Head><title>Pricing – Acme</title></Head> from next/head.',
    nginx: 'nginx serves the HTML as built: add <title> to the page templates (index.html for a single-page app) and redeploy the files.',
    cloudflare:
      'Set the <title> in your templates; on Pages redeploy. For pages you cannot rebuild, a Worker with HTMLRewriter can insert one: ' +
      'new HTMLRewriter().on("head", { element(e) { e.prepend("<title>Acme</title>", { html: true }) } }).',
  },
  requires: ['page', 'mainResponse'],
  run: ({ page, mainResponse }) => {
    const notHtml = notHtmlReason(page, mainResponse)
    if (notHtml) return { status: 'skipped', evidence: { page: page.finalUrl, reason: notHtml }, summary: `Not applicable: ${notHtml}` }
    const fromHtml = documentTitle(page.html)
    const title = fromHtml ?? page.title.replace(/\s+/g, ' ').trim()
    const length = textLength(title)
    const evidence = { page: page.finalUrl, title: title.slice(0, 300), length, source: fromHtml === null ? 'document.title' : '<title>' }
    if (length === 0) {
      return {
        status: 'fail',
        evidence,
        summary: fromHtml === null && !page.title ? 'The page has no <title>.' : 'The page title is empty.',
      }
    }
    if (length > TITLE_MAX) {
      return {
        status: 'warn',
        evidence,
        summary: `The title is ${length} characters long (over ${TITLE_MAX}): search results will cut it.`,
      }
    }
    return { status: 'pass', evidence, summary: `Title: "${title}" (${length} characters).` }
  },
})
