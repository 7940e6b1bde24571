// Subresource Integrity on third-party <script src> of the rendered page.

import { defineCheck } from '../types.ts'
import { isFirstPartyUrl, siteDomains } from '../util/domains.ts'
import { parseUrl } from '../util/http.ts'
import { documentBaseUrl, startTags } from '../util/html.ts'

const MAX_LISTED = 20

/** HTML's JavaScript MIME type essences: a <script type> that is none of these (nor "module") is a data block. */
const JAVASCRIPT_TYPES = new Set([
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
])

/** Vendors that change these scripts in place: a pinned hash breaks them, so the fix is different. */
const VENDOR_MANAGED = [
  /(^|\.)googletagmanager\.com$/,
  /(^|\.)google-analytics\.com$/,
  /^js\.stripe\.com$/,
  /^(www\.)?google\.com$/, // reCAPTCHA loader
  /^www\.gstatic\.com$/,
  /^connect\.facebook\.net$/,
  /^static\.cloudflareinsights\.com$/,
  /^challenges\.cloudflare\.com$/,
  /^widget\.intercom\.io$/,
  /^js\.hs-scripts\.com$/,
  /^static\.hotjar\.com$/,
  /^cdn\.segment\.com$/,
  /^js\.sentry-cdn\.com$/,
  /^plausible\.io$/,
  /^maps\.googleapis\.com$/,
  /^(www\.)?youtube\.com$/,
  /^apis\.google\.com$/,
  /^accounts\.google\.com$/,
]

/** Whether a <script> element with this type attribute runs JavaScript (classic or module). */
export function isExecutableScriptType(type: string | undefined): boolean {
  if (type === undefined) return true
  const t = type.trim().toLowerCase()
  return t === '' || t === 'module' || JAVASCRIPT_TYPES.has(t)
}

/** Hash expressions browsers accept (SRI §3.3.3); an attribute without one gives no protection at all. */
export function validIntegrityHashes(value: string): string[] {
  return value.split(/[\t\n\f\r ]+/).filter((token) => /^sha(?:256|384|512)-[A-Za-z0-9+/_-]+={0,2}(?:\?\S*)?$/i.test(token))
}

interface PageScript {
  url: string
  integrity: string | null
  crossorigin: boolean
}

/** External scripts that run, resolved against the document base URL, first occurrence of each URL. */
function externalScripts(html: string, documentUrl: string): PageScript[] {
  const base = documentBaseUrl(html, documentUrl)
  const seen = new Map<string, PageScript>()
  for (const tag of startTags(html, ['script'])) {
    const src = tag.attrs.src?.trim()
    if (!src || !isExecutableScriptType(tag.attrs.type)) continue
    const url = parseUrl(src, base)
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) continue
    if (seen.has(url.href)) continue
    seen.set(url.href, { url: url.href, integrity: tag.attrs.integrity ?? null, crossorigin: tag.attrs.crossorigin !== undefined })
  }
  return [...seen.values()]
}

export const subresourceIntegrity = defineCheck({
  id: 'subresource-integrity',
  category: 'security',
  title: 'Third-party scripts are pinned with Subresource Integrity',
  failTitle: 'Third-party scripts are not pinned with Subresource Integrity',
  description:
    'Reads the <script src> elements of the rendered page and, for scripts served by another site, whether they carry an integrity ' +
    'attribute with a sha256, sha384 or sha512 hash.',
  why:
    'A script from another site runs with full power over your page. If that CDN or vendor is compromised (polyfill.io in 2024), ' +
    "every visitor runs the attacker's code; an integrity hash makes the browser refuse a file that changed.",
  confirmation:
    "Reads the rendered DOM, so scripts that other scripts inserted count too (evidence says which ones were not in the server's " +
    'HTML). A script is third-party when its registrable domain (public suffix list, with hosting suffixes such as vercel.app and ' +
    "github.io as suffixes) differs from the site's (the target, where its redirects ended and the page the browser loaded): public " +
    'CDNs (jsdelivr, unpkg, cdnjs) are third parties. Warns when a third-party script has no integrity attribute, or one with no ' +
    'valid sha256/sha384/sha512 hash (browsers then check nothing); fails when such a script is loaded over http:. Not findings: ' +
    "scripts of the page's own origin or its own subdomains, inline scripts, data: and blob: scripts, <script> elements that are not" +
    ' JavaScript (JSON, templates), markup inside comments and <noscript>. A third-party script with integrity but no crossorigin ' +
    'attribute is listed as a note: browsers block it, which breaks the page but is not a hole. Vendor scripts that change in place ' +
    '(Google Tag Manager, Stripe.js, reCAPTCHA) are still findings but marked vendorManaged, because a hash would break them; ' +
    'stylesheets are not judged.',
  severity: 'medium',
  fix: {
    generic:
      'Pin every third-party script to an exact version and add its hash:\n<script ' +
      'src="https://cdn.jsdelivr.net/npm/lib@1.2.3/dist/lib.min.js" integrity="sha384-BASE64HASH" crossorigin="anonymous"></script>\n' +
      'Compute the hash with: curl -s URL | openssl dgst -sha384 -binary | openssl base64 -A\nBetter still, install the library (npm ' +
      'install lib) and bundle it so it is served from your own origin. Vendor loaders that change in place (Google Tag Manager, ' +
      'Stripe.js) cannot be pinned: restrict them with a Content-Security-Policy script-src allowlist instead.',
    vercel:
      'Vercel serves your HTML unchanged, so fix it in the source: add integrity="sha384-..." crossorigin="anonymous" to the <script>' +
      " tags in index.html (or your framework's layout), or npm install the library and import it so the bundler serves it from your" +
      ' own domain.',
    netlify:
      'Netlify serves your HTML unchanged, so fix it in the source: add integrity="sha384-..." crossorigin="anonymous" to the ' +
      '<script> tags in index.html (or your layout), or npm install the library and import it so it is bundled and served from your ' +
      'own domain.',
    nextjs:
      'Prefer npm install + import so the library is bundled. For a script that must stay external, in app/layout.tsx:\nimport Script' +
      ' from \'next/script\'\n<Script src="https://cdn.jsdelivr.net/npm/lib@1.2.3/dist/lib.min.js" integrity="sha384-BASE64HASH" ' +
      'crossOrigin="anonymous" strategy="afterInteractive" />',
    nginx:
      'Add integrity="sha384-..." crossorigin="anonymous" to the <script> tags in the HTML nginx serves, or self-host the file:\n' +
      'location /vendor/ { root /srv/www; add_header Cache-Control "public, max-age=31536000, immutable"; }\nand load ' +
      '/vendor/lib-1.2.3.min.js instead of the CDN URL.',
    cloudflare:
      'Cloudflare does not add integrity attributes: add integrity="sha384-..." crossorigin="anonymous" to the <script> tags in your ' +
      "HTML. Cloudflare's client-side security (formerly Page Shield) can also alert you when a third-party script on the page " +
      'changes.',
  },
  requires: ['page', 'mainResponse', 'target'],
  run: ({ page, mainResponse, target }) => {
    const pageUrl = parseUrl(page.finalUrl)
    if (!pageUrl)
      return {
        status: 'skipped',
        evidence: { page: page.finalUrl, reason: 'The page URL could not be parsed.' },
        summary: 'Not applicable: no page URL.',
      }
    const site = siteDomains({ target, mainResponse, page })
    const scripts = externalScripts(page.html, page.finalUrl)
    // A cut body cannot tell a runtime-inserted script from one past the cut.
    const inServerHtml = mainResponse.bodyTruncated
      ? null
      : new Set(externalScripts(mainResponse.body, mainResponse.url || page.finalUrl).map((s) => s.url))

    const thirdParty = scripts.filter((s) => {
      return new URL(s.url).origin !== pageUrl.origin && !isFirstPartyUrl(s.url, site)
    })
    const missing = thirdParty.filter((s) => s.integrity === null || validIntegrityHashes(s.integrity).length === 0)
    const describe = (s: PageScript) => {
      const url = new URL(s.url)
      return {
        url: s.url,
        ...(url.protocol === 'http:' ? { http: true } : {}),
        ...(s.integrity !== null ? { invalidIntegrity: s.integrity.slice(0, 120) } : {}),
        ...(inServerHtml === null || inServerHtml.has(s.url) ? {} : { addedAtRuntime: true }),
        ...(VENDOR_MANAGED.some((re) => re.test(url.hostname)) ? { vendorManaged: true } : {}),
      }
    }
    const blocked = thirdParty.filter((s) => s.integrity !== null && validIntegrityHashes(s.integrity).length > 0 && !s.crossorigin)
    const evidence: Record<string, unknown> = {
      page: page.finalUrl,
      scripts: scripts.length,
      firstParty: scripts.length - thirdParty.length,
      thirdParty: thirdParty.length,
      withIntegrity: thirdParty.length - missing.length,
      withoutIntegrity: missing.slice(0, MAX_LISTED).map(describe),
      withoutIntegrityCount: missing.length,
      ...(blocked.length > 0
        ? {
            integrityWithoutCrossorigin: blocked.slice(0, MAX_LISTED).map((s) => s.url),
            note:
              'Scripts with integrity but no crossorigin attribute are blocked by browsers: the hash cannot be checked on a no-cors ' +
              'response.',
          }
        : {}),
    }

    const insecure = missing.filter((s) => s.url.startsWith('http:'))
    if (insecure.length > 0) {
      return {
        status: 'fail',
        severity: 'high',
        evidence,
        summary: `${insecure.length} third-party script(s) load over http without integrity, e.g. ${insecure[0]!.url}: anyone on the network can replace them.`,
      }
    }
    if (missing.length > 0) {
      return {
        status: 'warn',
        evidence,
        summary: `${missing.length} of ${thirdParty.length} third-party script(s) have no integrity hash, e.g. ${missing[0]!.url}.`,
      }
    }
    if (thirdParty.length === 0) {
      return { status: 'pass', evidence, summary: `The page loads no third-party scripts (${scripts.length} first-party).` }
    }
    return { status: 'pass', evidence, summary: `All ${thirdParty.length} third-party script(s) carry an integrity hash.` }
  },
})
