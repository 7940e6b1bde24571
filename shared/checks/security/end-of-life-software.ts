// Server software and runtimes whose upstream support has ended, named with their version by the site
// itself: Server and X-Powered-By headers, a Django debug page, phpinfo(). No advisory needs to name the
// version: a line that gets no more security fixes is the finding.

import { END_OF_LIFE, END_OF_LIFE_DATA, type EndOfLifeLine } from '../data/end-of-life.ts'
import { defineCheck, type HttpResponseArtifact, type ProbeResult } from '../types.ts'
import { headerValue } from '../util/http.ts'
import { ownAnswers } from '../util/probe.ts'
import { parseVersion, satisfies } from '../util/semver.ts'

const SCAN = 65_536

export interface Sighting {
  product: EndOfLifeLine['product']
  version: string
  /** Where the version was read: a header name or a page URL. */
  source: string
  excerpt: string
}

/** Completes "7.4" or "2" to a three-part version so ranges compare it. */
function full(version: string): string | null {
  const parts = version.split('.').slice(0, 3)
  while (parts.length < 3) parts.push('0')
  const v = parts.join('.')
  return parseVersion(v) ? v : null
}

const BANNERS: Array<{ product: Sighting['product']; re: RegExp }> = [
  { product: 'apache', re: /\bApache\/(\d+\.\d+(?:\.\d+)?)/ },
  { product: 'php', re: /\bPHP\/(\d+\.\d+(?:\.\d+)?)/ },
  { product: 'python', re: /\b(?:C?Python)\/(\d+\.\d+(?:\.\d+)?)/ },
  { product: 'openssl', re: /\bOpenSSL\/(\d+\.\d+(?:\.\d+)?)/ },
  { product: 'iis', re: /\bMicrosoft-IIS\/(\d+\.\d+)/ },
]

const PAGES: Array<{ product: Sighting['product']; gate: string; re: RegExp }> = [
  // Django's technical 500 page: <th>Django Version:</th> <td>3.2.25</td>
  { product: 'django', gate: 'Django Version:', re: /<th>\s*Django Version:\s*<\/th>\s*<td>\s*(\d+\.\d+(?:\.\d+)?)/i },
  { product: 'python', gate: 'Python Version:', re: /<th>\s*Python Version:\s*<\/th>\s*<td>\s*(\d+\.\d+(?:\.\d+)?)/i },
  // phpinfo(): <h1 class="p">PHP Version 7.4.33</h1>
  { product: 'php', gate: 'PHP Version', re: /<h1 class="p">\s*PHP Version (\d+\.\d+(?:\.\d+)?)/i },
]

/** Every product version the headers and pages name. */
export function sightings(main: HttpResponseArtifact, probes: Record<string, ProbeResult>): Sighting[] {
  const found: Sighting[] = []
  for (const header of ['server', 'x-powered-by']) {
    const value = headerValue(main.headers, header)
    if (!value) continue
    for (const { product, re } of BANNERS) {
      const m = re.exec(value)
      if (m) found.push({ product, version: m[1]!, source: header === 'server' ? 'Server' : 'X-Powered-By', excerpt: value.slice(0, 200) })
    }
  }
  const pages = ownAnswers(main, probes)
  for (const page of pages) {
    const body = page.body.slice(0, SCAN)
    for (const { product, gate, re } of PAGES) {
      const m = body.includes(gate) ? re.exec(body) : null
      if (m)
        found.push({
          product,
          version: m[1]!,
          source: page.url,
          excerpt: m[0]
            .replace(/<[^>]{0,100}>/g, ' ')
            .replace(/\s+/g, ' ')
            .trim(),
        })
    }
  }
  return found
}

export const endOfLifeSoftware = defineCheck({
  id: 'end-of-life-software',
  category: 'security',
  title: 'No end-of-life server software or runtime is announced',
  failTitle: 'End-of-life server software or runtime',
  description:
    'Reads the versions the site names itself (Server and X-Powered-By headers, a Django debug page, phpinfo()) and compares them ' +
    `with the release lines whose upstream support has ended: ${END_OF_LIFE.map((l) => `${l.name} ${l.range.replace('<', 'before ')}`).join(', ')}. ` +
    `Table reviewed ${END_OF_LIFE_DATA}.`,
  why:
    'A release line past its end of life gets no more security fixes: every flaw found from then on stays open, whether or not an ' +
    'advisory lists the exact version. Attackers look for these banners first.',
  confirmation:
    'Only versions the site states count: Apache/2.2.34, PHP/7.4.33, Python/3.8.10, OpenSSL/1.0.2k or Microsoft-IIS/8.5 in the ' +
    'Server or X-Powered-By header, the "Django Version" row of Django\u2019s debug page and the "PHP Version" heading of phpinfo(). A ' +
    'page that is the same as the answer for a path that cannot exist is not read. Not findings: a banner without a version, a ' +
    'supported line, a version in a file name or page text. A distribution\u2019s long-term support (Debian, Ubuntu ESM, RHEL) may still ' +
    'patch an old line, which the banner cannot tell: the summary says so. Evidence: product, version, where it was read, when ' +
    'support ended and what to move to.',
  severity: 'medium',
  fix: {
    generic:
      'Upgrade to a supported release line (the evidence names one) and plan the next upgrade before its end-of-life date. Until ' +
      'then, stop announcing the version (it does not fix anything, but it stops advertising the gap).',
    vercel:
      'Vercel runs supported runtimes: set the Node.js or Python version in Project Settings > General, or a supported "runtime" in ' +
      'vercel.json for functions; an old PHP or Django comes from a proxied backend, which must be upgraded.',
    netlify:
      'Set a supported runtime (NODE_VERSION, PYTHON_VERSION in netlify.toml [build.environment]); a banner from a proxied backend ' +
      'means that backend needs the upgrade.',
    nextjs: 'Next.js needs none of these; the banner comes from a backend or proxy in front of it, which needs the upgrade.',
    nginx:
      'Upgrade the software behind nginx (PHP-FPM, the Django app), then stop passing its banners on:\nserver_tokens off;\n' +
      'proxy_hide_header X-Powered-By;\nfastcgi_hide_header X-Powered-By;',
    apache:
      'Upgrade Apache httpd and PHP to supported lines (the distribution\u2019s packages of a supported release), then in the server ' +
      'config:\nServerTokens Prod\nand expose_php = Off in php.ini.',
    cloudflare:
      'Upgrade at the origin. Rules > Transform Rules > Modify Response Header can remove X-Powered-By meanwhile; it hides the ' +
      'version, not the flaws.',
    django:
      'Upgrade to Django 5.2 LTS: follow the release notes of each version in between, run python -Wa manage.py test, and set DEBUG = False.',
    iis: 'Move the site to Windows Server 2019 or later (IIS 10); IIS 8.5 and older ended with Windows Server 2012 R2.',
  },
  fixTarget: { kind: 'version' },
  requires: ['mainResponse', 'probes'],
  run: ({ mainResponse, probes }) => {
    const seen = sightings(mainResponse, probes)
    const ended: Array<Sighting & { line: EndOfLifeLine }> = []
    const keys = new Set<string>()
    for (const s of seen) {
      const v = full(s.version)
      const line = v ? END_OF_LIFE.find((l) => l.product === s.product && satisfies(v, l.range)) : undefined
      if (!line || keys.has(`${s.product}@${s.version}`)) continue
      keys.add(`${s.product}@${s.version}`)
      ended.push({ ...s, line })
    }
    const evidence = {
      url: mainResponse.url,
      versions: seen.map(({ product, version, source }) => ({ product, version, source })),
      endOfLife: ended.map((e) => ({
        product: e.line.name,
        version: e.version,
        source: e.source,
        excerpt: e.excerpt,
        supportEnded: e.line.ended,
        upgrade: e.line.upgrade,
      })),
      data: END_OF_LIFE_DATA,
    }
    if (ended.length > 0) {
      const first = ended[0]!
      return {
        status: 'fail',
        evidence,
        summary:
          `${first.line.name} ${first.version} (${first.source}) is past its end of life (support ended by ${first.line.ended}); move to ` +
          `${first.line.upgrade}${
            ended.length > 1
              ? `; also ${ended
                  .slice(1)
                  .map((e) => `${e.line.name} ${e.version}`)
                  .join(', ')}`
              : ''
          }. ` +
          'A distribution with long-term support may still patch it.',
      }
    }
    return {
      status: 'pass',
      evidence,
      summary:
        seen.length > 0
          ? `The versions named (${[...new Set(seen.map((s) => `${s.product} ${s.version}`))].join(', ')}) are supported release lines.`
          : 'The site names no server software version to judge.',
    }
  },
})
