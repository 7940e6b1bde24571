// The language of the page, declared on the <html> element.

import { defineCheck } from '../types.ts'
import { htmlElementAttributes, notHtmlReason } from './document.ts'

/** A BCP 47 language tag, loosely: a 2-8 letter primary subtag (or x-/i-) and alphanumeric subtags. */
const LANGUAGE_TAG = /^(?:[a-z]{2,8}|[xi])(?:-[a-z0-9]{1,8})*$/i

export const seoLang = defineCheck({
  id: 'seo-lang',
  category: 'seo',
  title: 'The page declares its language',
  failTitle: 'The page does not declare its language',
  description: 'Reads the lang attribute of the <html> element of the rendered page.',
  why:
    'Search engines use the declared language to serve the page to the right audience; screen readers use it to pick the pronunciation,' +
    ' and browsers to offer translation.',
  confirmation:
    'Warns when <html> has no lang attribute, an empty one, or a value that is not a language tag (en_US with an underscore, ' +
    '"english"). Accepts any well-formed BCP 47 tag such as en, en-GB, zh-Hant-TW. Reads the rendered DOM, so a lang set by ' +
    'JavaScript counts. Skipped when the page is not HTML.',
  severity: 'low',
  fix: {
    generic: 'Declare the language on the root element: <html lang="en"> (or en-GB, fr, de-CH ...).',
    vercel: "Set lang in your framework's document template (Next.js root layout, index.html for Vite) and redeploy.",
    netlify: "Set lang in your framework's document template or index.html and redeploy.",
    nextjs:
      'App Router: in app/layout.tsx render <html lang="en">. Pages Router: in pages/_document.tsx render <Html lang="en">, or set ' +
      'i18n.defaultLocale in next.config.js.',
    nginx: 'Add lang to the <html> tag of the templates (index.html for a single-page app) and redeploy the files.',
    cloudflare:
      'Fix the template and redeploy; for pages you cannot rebuild, a Worker with HTMLRewriter can set it: .on("html", { element(e) { ' +
      'e.setAttribute("lang", "en") } }).',
  },
  requires: ['page', 'mainResponse'],
  run: ({ page, mainResponse }) => {
    const notHtml = notHtmlReason(page, mainResponse)
    if (notHtml) return { status: 'skipped', evidence: { page: page.finalUrl, reason: notHtml }, summary: `Not applicable: ${notHtml}` }
    const attrs = htmlElementAttributes(page.html)
    const lang = attrs.lang?.trim()
    const evidence = { page: page.finalUrl, lang: lang ?? null, ...(attrs['xml:lang'] ? { xmlLang: attrs['xml:lang'] } : {}) }
    if (lang === undefined) return { status: 'warn', evidence, summary: 'The <html> element has no lang attribute.' }
    if (lang === '') return { status: 'warn', evidence, summary: 'The <html> lang attribute is empty.' }
    if (!LANGUAGE_TAG.test(lang)) {
      const hint = lang.includes('_') ? ` (use ${lang.replace(/_/g, '-')})` : ''
      return { status: 'warn', evidence, summary: `lang="${lang.slice(0, 40)}" is not a valid language tag${hint}.` }
    }
    return { status: 'pass', evidence, summary: `The page declares lang="${lang}".` }
  },
})
