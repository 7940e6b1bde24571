// Cookies stored before any interaction: third-party ones, and analytics cookies set on the site itself.

import { defineCheck, type BrowserCookie } from '../types.ts'
import { registrableDomain, siteDomains } from '../util/domains.ts'

const MAX_LISTED = 30

/** Analytics and advertising cookies their vendors' scripts set on the site's own domain. */
const ANALYTICS_COOKIES: Array<[RegExp, string]> = [
  [/^_ga(?:_[A-Z0-9]+)?$/, 'Google Analytics'],
  [/^_gid$/, 'Google Analytics'],
  [/^_gat(?:_.+)?$/, 'Google Analytics'],
  [/^_gcl_(?:au|aw|dc|gb)$/, 'Google Ads'],
  [/^_fbp$/, 'Meta Pixel'],
  [/^_fbc$/, 'Meta Pixel'],
  [/^_hjSession(?:User)?(?:_\d+)?$/, 'Hotjar'],
  [/^_hjid$/, 'Hotjar'],
  [/^_hjFirstSeen$/, 'Hotjar'],
  [/^_clck$/, 'Microsoft Clarity'],
  [/^_clsk$/, 'Microsoft Clarity'],
  [/^_uetsid$/, 'Microsoft Advertising'],
  [/^_uetvid$/, 'Microsoft Advertising'],
  [/^_pk_(?:id|ses)\b.*$/, 'Matomo'],
  [/^ajs_(?:anonymous_id|user_id)$/, 'Segment'],
  [/^mp_[\w]+_mixpanel$/, 'Mixpanel'],
  [/^_tt_enable_cookie$|^_ttp$/, 'TikTok Pixel'],
  [/^_li(?:dc|_fat_id)$|^li_sugr$/, 'LinkedIn'],
]

export function analyticsVendor(name: string): string | null {
  for (const [pattern, vendor] of ANALYTICS_COOKIES) if (pattern.test(name)) return vendor
  return null
}

const describe = (c: BrowserCookie) => ({
  name: c.name,
  domain: c.domain,
  secure: c.secure,
  httpOnly: c.httpOnly,
  sameSite: c.sameSite,
  session: c.expires <= 0,
})

export const thirdPartyCookies = defineCheck({
  id: 'third-party-cookies',
  category: 'privacy',
  title: 'No third-party cookies before consent',
  failTitle: 'Third-party cookies are set before consent',
  description:
    'Lists the cookies the browser stored while loading the page, before any interaction, whose domain belongs to another site, and ' +
    "analytics cookies set on the site's own domain.",
  why:
    'Cookies set before the visitor agrees to anything are how trackers follow people across sites; in the EU and UK (ePrivacy, GDPR) ' +
    'non-essential cookies need prior consent, and regulators fine sites that set them on arrival.',
  confirmation:
    "A cookie is third-party when its domain's registrable domain differs from the site's (target, redirect end, page); a cookie on" +
    ' cdn.example.com or .example.com is first-party for www.example.com. Warns with the names and domains of third-party cookies ' +
    "stored before any interaction (values are never read into the report). Known analytics cookies on the site's own domain (_ga, " +
    '_gid, _fbp, _hjSession*, ...) are reported as info, not a failure: whether they need prior consent depends on the jurisdiction ' +
    "and on how they are configured, so confirm against your consent setup. Only what the scanner's browser stored on one load is " +
    'seen; a browser that blocks third-party cookies would refuse some of them.',
  severity: 'medium',
  fix: {
    generic:
      'Load tags that set cookies (ads, analytics, embeds) only after consent; use a consent manager with Google Consent Mode defaults ' +
      'set to denied, privacy-enhanced embeds (youtube-nocookie.com) and cookieless analytics where possible.',
    vercel:
      'Render third-party tags only after consent in your app; Vercel Web Analytics is cookieless and first-party and can replace ' +
      'cookie-based analytics.',
    netlify:
      'Render third-party tags only after consent in your app or templates; Netlify Analytics is server-side and sets no cookies, an ' +
      'option for basic traffic numbers.',
    nextjs:
      "Render <Script> tags for analytics and ads only after consent (e.g. from a consent-state provider), set gtag('consent', '" +
      "default', { ad_storage: 'denied', analytics_storage: 'denied' }) before loading Google tags, and use lite embeds for " +
      'YouTube and maps.',
    nginx:
      'Cookies here are set by scripts and embeds in the page, not by nginx: remove or consent-gate those tags in the templates; do not' +
      ' proxy_pass third-party Set-Cookie headers through your domain.',
    cloudflare:
      'Use Zaraz with its consent management to load tools only after consent (tools then run at the edge and set fewer browser ' +
      'cookies), or gate the tags in your templates.',
  },
  requires: ['page', 'target', 'mainResponse'],
  run: ({ page, target, mainResponse }) => {
    const site = siteDomains({ target, mainResponse, page })
    const thirdParty: BrowserCookie[] = []
    const analytics: Array<BrowserCookie & { vendor: string }> = []
    for (const cookie of page.cookies) {
      const domain = registrableDomain(cookie.domain)
      if (!site.has(domain)) {
        thirdParty.push(cookie)
        continue
      }
      const vendor = analyticsVendor(cookie.name)
      if (vendor) analytics.push({ ...cookie, vendor })
    }
    const byDomain: Record<string, number> = {}
    for (const c of thirdParty) {
      const d = registrableDomain(c.domain)
      byDomain[d] = (byDomain[d] ?? 0) + 1
    }
    const evidence = {
      site: [...site],
      cookies: page.cookies.length,
      thirdParty: thirdParty.slice(0, MAX_LISTED).map(describe),
      thirdPartyCount: thirdParty.length,
      thirdPartyDomains: byDomain,
      firstPartyAnalytics: analytics.slice(0, MAX_LISTED).map((c) => ({ ...describe(c), vendor: c.vendor })),
      note:
        'Before any interaction or consent. Consent rules depend on jurisdiction: first-party analytics cookies are listed for review, ' +
        'not scored.',
    }
    if (thirdParty.length > 0) {
      const domains = Object.entries(byDomain)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([d]) => d)
      return {
        status: 'warn',
        evidence,
        summary: `${thirdParty.length} third-party cookie(s) set before any interaction, from ${domains.join(', ')}${Object.keys(byDomain).length > 4 ? ', ...' : ''} (e.g. ${thirdParty[0]!.name} on ${thirdParty[0]!.domain}).`,
      }
    }
    if (analytics.length > 0) {
      const vendors = [...new Set(analytics.map((c) => c.vendor))]
      return {
        status: 'info',
        severity: 'info',
        evidence,
        summary: `No third-party cookies, but ${vendors.join(', ')} set ${analytics.length} first-party cookie(s) (${analytics
          .slice(0, 3)
          .map((c) => c.name)
          .join(', ')}) before consent; whether that needs consent depends on your jurisdiction.`,
      }
    }
    return {
      status: 'pass',
      evidence,
      summary: `No third-party or analytics cookies before interaction (${page.cookies.length} cookie(s) stored).`,
    }
  },
})
