// Software versions announced in response headers and the generator meta tag. Only header values and the
// meta content are read: version numbers in file names (app.1.2.3.js) are not disclosures.

import { defineCheck } from '../types.ts'
import { headerValue } from '../util/http.ts'
import { metaNamed } from '../util/html.ts'

/** The version number in a product string: "nginx/1.18.0" -> "1.18.0", "PHP/8" -> "8", "Express" -> null. */
export function versionIn(value: string): string | null {
  const dotted = /\bv?(\d+\.\d+(?:\.\d+)*)/i.exec(value)
  if (dotted) return dotted[1]!
  const slashed = /\/v?(\d+)\b/i.exec(value)
  return slashed ? slashed[1]! : null
}

/** Headers that only exist to name the software; any value is a disclosure. */
const PRODUCT_HEADERS = ['x-powered-by', 'x-aspnet-version', 'x-aspnetmvc-version', 'x-generator']

interface Disclosure {
  source: 'header' | 'meta'
  name: string
  value: string
  version: string | null
}

export const versionDisclosure = defineCheck({
  id: 'version-disclosure',
  category: 'security',
  title: 'Server software versions are not announced',
  failTitle: 'Server software versions are announced',
  // A product named without a version (X-Powered-By: Express) is a warning of its own kind.
  failTitleOf: (evidence) =>
    Array.isArray(evidence.disclosures) &&
    evidence.disclosures.length > 0 &&
    evidence.disclosures.every((d) => typeof d === 'object' && d !== null && d.version == null)
      ? 'Server software is named in headers'
      : null,
  description:
    'Reads Server, X-Powered-By, X-AspNet-Version, X-AspNetMvc-Version and X-Generator on the main response, and <meta ' +
    'name="generator"> in the page.',
  why: 'An exact version number tells attackers which published vulnerabilities to try, without any probing.',
  confirmation:
    'Fails when a header or the generator meta tag carries a version number (nginx/1.18.0, PHP/8.1.2, WordPress 6.4.2, ' +
    'X-AspNet-Version). Warns when X-Powered-By or X-Generator names the product without a version (Express, Next.js). Not findings: ' +
    'a Server header without a version (nginx, cloudflare, Vercel), a generator tag without a version, and version numbers in asset ' +
    'file names.',
  severity: 'low',
  fix: {
    generic: 'Remove X-Powered-By and X-AspNet-Version headers and strip version numbers from Server and the generator meta tag.',
    vercel:
      'Vercel sends "Server: Vercel" without a version. For Next.js set poweredByHeader: false in next.config.js; for other ' +
      'frameworks remove the header in the app (Express: app.disable("x-powered-by")).',
    netlify:
      'Netlify sends "Server: Netlify" without a version. Remove X-Powered-By in your functions or framework (Express: ' +
      'app.disable("x-powered-by")); _headers can only add headers, not remove them.',
    nextjs: 'In next.config.js:\nmodule.exports = {\n  poweredByHeader: false,\n}',
    nginx:
      'In the http block:\nserver_tokens off;\nproxy_hide_header X-Powered-By;\nfastcgi_hide_header X-Powered-By;\n(PHP: expose_php =' +
      " Off in php.ini; WordPress: remove_action('wp_head', 'wp_generator');)",
    cloudflare:
      'Rules > Transform Rules > Modify Response Header > Create rule (all incoming requests):\nRemove  X-Powered-By\nRemove  ' +
      'X-AspNet-Version\nRemove  X-AspNetMvc-Version',
    express: "Where the app is created:\napp.disable('x-powered-by')\n(helmet() removes it too.)",
    django:
      'Django sends no version header. A version comes from the server in front of it (nginx: server_tokens off; Apache: ServerTokens Prod) or from a CMS generator meta tag in the base template: remove it there.',
    rails:
      'Rails sends no version; the proxy or app server does. Passenger: passenger_show_version_in_header off; nginx: server_tokens off; Apache: ServerTokens Prod.',
    apache:
      'In httpd.conf or apache2.conf (not allowed in .htaccess):\nServerTokens Prod\nServerSignature Off\nIn php.ini: expose_php = Off\nIn .htaccess (mod_headers): Header always unset X-Powered-By',
    caddy:
      'Caddy sends "Server: Caddy" without a version. Remove it and any upstream X-Powered-By in the site block:\nheader {\n  -Server\n  -X-Powered-By\n}',
    iis: 'In web.config:\n<system.webServer>\n  <security>\n    <requestFiltering removeServerHeader="true" />\n  </security>\n  <httpProtocol>\n    <customHeaders>\n      <remove name="X-Powered-By" />\n    </customHeaders>\n  </httpProtocol>\n</system.webServer>\n<system.web>\n  <httpRuntime enableVersionHeader="false" />\n</system.web>\n(removeServerHeader needs IIS 10; X-AspNetMvc-Version: MvcHandler.DisableMvcResponseHeader = true in Application_Start.)',
  },
  fixTarget: { kind: 'version' },
  requires: ['mainResponse'],
  optional: ['page'],
  run: ({ mainResponse, page }) => {
    const disclosures: Disclosure[] = []
    const server = headerValue(mainResponse.headers, 'server')
    if (server) {
      const version = versionIn(server)
      if (version) disclosures.push({ source: 'header', name: 'Server', value: server, version })
    }
    for (const name of PRODUCT_HEADERS) {
      const value = headerValue(mainResponse.headers, name)
      if (!value) continue
      const version = name === 'x-aspnet-version' || name === 'x-aspnetmvc-version' ? value : versionIn(value)
      disclosures.push({ source: 'header', name, value, version })
    }
    const generators = page ? metaNamed(page.html, 'generator') : []
    for (const content of generators) {
      const version = versionIn(content)
      if (version) disclosures.push({ source: 'meta', name: 'meta generator', value: content.slice(0, 200), version })
    }

    const evidence: Record<string, unknown> = {
      url: mainResponse.url,
      disclosures: disclosures.map(({ name, value, version }) => ({ name, value, version })),
    }
    if (server && !versionIn(server)) evidence.server = server
    if (generators.length > 0) evidence.generator = generators.map((g) => g.slice(0, 200))

    const versioned = disclosures.filter((d) => d.version)
    if (versioned.length > 0) {
      const first = versioned[0]!
      return { status: 'fail', evidence, summary: `${first.name} discloses a version: "${first.value}".` }
    }
    if (disclosures.length > 0) {
      const first = disclosures[0]!
      return { status: 'warn', evidence, summary: `${first.name} names the software: "${first.value}".` }
    }
    return {
      status: 'pass',
      evidence,
      summary: server ? `No version disclosed (Server: ${server}).` : 'No software version disclosed.',
    }
  },
})
