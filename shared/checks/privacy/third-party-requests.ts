// Third parties the page contacted on its own, before the visitor did anything.

import { defineCheck } from '../types.ts'
import { registrableDomainOfUrl, siteDomains } from '../util/domains.ts'
import { displayUrl } from '../performance/resources.ts'
import { hostOf } from '../util/http.ts'

const MAX_LISTED = 30

export const thirdPartyRequests = defineCheck({
  id: 'third-party-requests',
  category: 'privacy',
  title: 'Third parties contacted before any interaction',
  failTitle: 'Third parties are contacted before any interaction',
  description:
    "Groups the requests the browser made while loading the page by registrable domain and lists those that are not the site's own.",
  why:
    "Every third-party request tells that party the visitor's IP address, browser and the page they are on, before any consent; it is " +
    'also code and availability you do not control.',
  confirmation:
    'A request is first-party when its registrable domain (eTLD+1, Public Suffix List with private suffixes) is that of the target, ' +
    'the end of its redirects or the page: cdn.example.com is first-party for www.example.com; another-app.vercel.app is not ' +
    'first-party for my-app.vercel.app. Counts every network request the browser made during the load, before any click or consent, ' +
    'including failed ones; data: and blob: URLs are not requests. Reported as info (not scored): whether each party is acceptable ' +
    'depends on its purpose and on consent rules of your jurisdiction. Passes when there are none.',
  severity: 'info',
  fix: {
    generic:
      'Self-host what you can (fonts, scripts, images), and load analytics, ads, chat and embeds only after consent or interaction (a ' +
      'click-to-load facade for videos and maps).',
    vercel:
      'Prefer first-party alternatives served from your own domain (Vercel Web Analytics and Speed Insights use /_vercel/ paths), ' +
      'self-host fonts, and gate other tags behind consent.',
    netlify:
      'Self-host fonts and scripts in the publish directory, proxy third-party endpoints through your domain with redirects (/api/* ' +
      'https://api.vendor.com/:splat 200) where the vendor allows it, and gate tags behind consent.',
    nextjs:
      'Use next/font (self-hosts Google Fonts at build time), load tags with next/script after consent (strategy="lazyOnload" or ' +
      'rendered only once consent is given), and use rewrites to proxy vendor endpoints through your domain.',
    nginx:
      'Self-host fonts and libraries under your server root; where a vendor allows it, proxy its endpoint through your domain (location' +
      ' /vendor/ { proxy_pass https://api.vendor.com/; }) and load the remaining tags after consent.',
    cloudflare:
      'Use Cloudflare Zaraz to run analytics and marketing tools from the edge (the browser then talks only to your domain) with its ' +
      'consent management, and self-host fonts.',
  },
  requires: ['page', 'target', 'mainResponse'],
  run: ({ page, target, mainResponse }) => {
    const site = siteDomains({ target, mainResponse, page })
    const parties = new Map<string, { requests: number; types: Record<string, number>; example: string; failed: number }>()
    // The same by host (an audit merges its findings per third-party host across pages).
    const hosts = new Map<string, { domain: string; requests: number; types: Record<string, number> }>()
    let total = 0
    for (const r of page.requests) {
      const domain = registrableDomainOfUrl(r.url)
      if (domain === null) continue
      total++
      if (site.has(domain)) continue
      const host = hostOf(r.url) ?? domain
      const h = hosts.get(host) ?? { domain, requests: 0, types: {} }
      h.requests++
      h.types[r.resourceType] = (h.types[r.resourceType] ?? 0) + 1
      hosts.set(host, h)
      const party = parties.get(domain) ?? { requests: 0, types: {}, example: displayUrl(r.url, 150), failed: 0 }
      party.requests++
      party.types[r.resourceType] = (party.types[r.resourceType] ?? 0) + 1
      if (r.status === 0) party.failed++
      parties.set(domain, party)
    }
    const list = [...parties.entries()]
      .map(([domain, p]) => ({
        domain,
        requests: p.requests,
        types: p.types,
        example: p.example,
        ...(p.failed > 0 ? { failed: p.failed } : {}),
      }))
      .sort((a, b) => b.requests - a.requests || a.domain.localeCompare(b.domain))
    const thirdPartyRequests = list.reduce((n, p) => n + p.requests, 0)
    const evidence = {
      site: [...site],
      requests: total,
      thirdPartyRequests,
      thirdPartyDomains: list.length,
      domains: list.slice(0, MAX_LISTED),
      truncated: list.length > MAX_LISTED,
      hosts: [...hosts.entries()]
        .map(([host, h]) => ({ host, domain: h.domain, requests: h.requests, types: h.types }))
        .sort((a, b) => b.requests - a.requests || a.host.localeCompare(b.host))
        .slice(0, MAX_LISTED),
    }
    if (list.length === 0) {
      return { status: 'pass', evidence, summary: `All ${total} request(s) went to the site's own domain(s) (${[...site].join(', ')}).` }
    }
    const named = list
      .slice(0, 5)
      .map((p) => `${p.domain} (${p.requests})`)
      .join(', ')
    return {
      status: 'info',
      evidence,
      summary: `Before any interaction the page contacted ${list.length} third-party domain(s) with ${thirdPartyRequests} request(s): ${named}${list.length > 5 ? ', ...' : ''}.`,
    }
  },
})
