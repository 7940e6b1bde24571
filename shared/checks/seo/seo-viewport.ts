// The mobile viewport declaration, which mobile-first indexing and every phone browser depend on.

import { defineCheck } from '../types.ts'
import { metaNamed } from '../util/html.ts'
import { notHtmlReason } from './document.ts'

export const seoViewport = defineCheck({
  id: 'seo-viewport',
  category: 'seo',
  title: 'The page sets a mobile viewport',
  failTitle: 'The page sets no mobile viewport',
  description: 'Looks for <meta name="viewport"> with a width or initial-scale in the rendered page.',
  why:
    'Without a viewport, phones render the page at desktop width and zoom out, so text is tiny; search engines index the mobile version' +
    ' and treat such pages as not mobile-friendly.',
  confirmation:
    'Warns when there is no <meta name="viewport">, or when its content sets neither width nor initial-scale. Passes ' +
    'width=device-width, initial-scale=1 and equivalents. Zoom restrictions (user-scalable=no, maximum-scale=1) are reported in ' +
    'evidence; the accessibility check judges them. Skipped when the page is not HTML.',
  severity: 'low',
  fix: {
    generic: 'Add to the <head>: <meta name="viewport" content="width=device-width, initial-scale=1">',
    vercel: "Add the viewport tag to your framework's document template (index.html for Vite; Next.js adds one by default) and redeploy.",
    netlify: "Add the viewport tag to your framework's document template or index.html and redeploy.",
    nextjs:
      'Next.js adds width=device-width, initial-scale=1 by default; if it is missing, check for a custom <meta name="viewport"> ' +
      "override, or export const viewport = { width: 'device-width', initialScale: 1 } from app/layout.tsx.",
    nginx: 'Add <meta name="viewport" content="width=device-width, initial-scale=1"> to the page templates and redeploy the files.',
    cloudflare: 'Fix the template and redeploy; for pages you cannot rebuild, a Worker with HTMLRewriter can append the tag to <head>.',
  },
  requires: ['page', 'mainResponse'],
  run: ({ page, mainResponse }) => {
    const notHtml = notHtmlReason(page, mainResponse)
    if (notHtml) return { status: 'skipped', evidence: { page: page.finalUrl, reason: notHtml }, summary: `Not applicable: ${notHtml}` }
    const viewports = metaNamed(page.html, 'viewport').map((v) => v.trim())
    const content = viewports.find((v) => v.length > 0)
    if (content === undefined) {
      return {
        status: 'warn',
        evidence: { page: page.finalUrl, viewport: null },
        summary: 'The page has no <meta name="viewport">: phones will render it at desktop width.',
      }
    }
    const settings = Object.fromEntries(
      content
        .split(/[,;]/)
        .map((p) => p.split('=').map((s) => s.trim().toLowerCase()))
        .filter((p) => p[0])
        .map((p) => [p[0]!, p[1] ?? '']),
    )
    const zoomRestricted =
      settings['user-scalable'] === 'no' ||
      settings['user-scalable'] === '0' ||
      (settings['maximum-scale'] !== undefined && Number(settings['maximum-scale']) < 2)
    const evidence = { page: page.finalUrl, viewport: content.slice(0, 200), ...(zoomRestricted ? { zoomRestricted: true } : {}) }
    if (settings.width === undefined && settings['initial-scale'] === undefined) {
      return { status: 'warn', evidence, summary: `The viewport "${content.slice(0, 80)}" sets neither width nor initial-scale.` }
    }
    return { status: 'pass', evidence, summary: `Viewport: "${content.slice(0, 80)}".` }
  },
})
