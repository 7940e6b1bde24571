// The http:// form of the site should redirect to https, first on the same host (so HSTS can be set for it).

import { defineCheck, type RedirectChain } from '../types.ts'
import { hostOf, parseUrl, sameSiteVariant } from '../util/http.ts'

const isRedirect = (status: number) => status >= 300 && status < 400

/** Errors that mean the http form did not answer at all, as opposed to a broken chain. */
const UNREACHABLE = /unreachable|refused|timed? ?out|timeout|dns|enotfound|econn|reset|blocked|no response|closed/i
const LOOP = /too many|loop|more than \d+ redirects/i

function hopsEvidence(chain: RedirectChain) {
  return chain.hops.slice(0, 10).map((h) => ({ url: h.url, status: h.status, location: h.location }))
}

export const httpsRedirect = defineCheck({
  id: 'https-redirect',
  category: 'https',
  title: 'http redirects to https',
  failTitle: 'http does not redirect to https',
  description: 'Follows the http:// form of the site hop by hop and reads where it ends.',
  why:
    'Users and links still reach sites over http; without a redirect they stay on an unencrypted page that anyone on the network can ' +
    'read or change.',
  confirmation:
    'Passes when the http chain ends on https of the same host or its www/apex variant, with the first redirect going to https on the' +
    ' same host. Warns when it gets there another way: the first hop goes to another host or stays on http (redirect to https on the ' +
    'same host first, so HSTS covers that host), or the chain ends on https of an unrelated host. Fails when the http form answers ' +
    'without redirecting to https (a 200 page, an error page), when the chain ends on http, or when it loops. Skipped when the http ' +
    'form could not be reached at all (nothing listens on port 80 is not a finding).',
  severity: 'high',
  fix: {
    generic: 'Answer every http:// request with a 301 (or 308) redirect to the same host and path on https://.',
    vercel:
      'Vercel redirects http to https on every domain automatically; check that the domain is added to the project and not only proxied' +
      ' elsewhere.',
    netlify:
      'Netlify redirects http to https once the certificate is provisioned: Domain management > HTTPS > Verify DNS configuration, then ' +
      'enable Force HTTPS if shown.',
    nextjs:
      'Redirect at the host or proxy in front of Next.js (a Next.js app cannot see the scheme reliably). Behind a proxy, in ' +
      "middleware.ts:\nif (req.headers.get('x-forwarded-proto') === 'http') return " +
      "NextResponse.redirect(`https://${req.headers.get('host')}${req.nextUrl.pathname}${req.nextUrl.search}`, 308)",
    nginx:
      'server {\n  listen 80;\n  listen [::]:80;\n  server_name example.com www.example.com;\n  return 301 https://$host$request_uri;\n' +
      '}',
    cloudflare: 'SSL/TLS > Edge Certificates > Always Use HTTPS: On.',
    express:
      "Redirect in the app (or at the proxy in front of it). Behind a proxy:\napp.set('trust proxy', 1)\napp.use((req, res, next) => req.secure ? next() : res.redirect(301, `https://${req.get('host')}${req.originalUrl}`))",
    django:
      'In settings.py:\nSECURE_SSL_REDIRECT = True\n# behind a proxy that terminates TLS and sets X-Forwarded-Proto:\nSECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")',
    rails:
      'In config/environments/production.rb:\nconfig.force_ssl = true\n# behind a proxy that terminates TLS:\nconfig.assume_ssl = true',
    apache:
      'In the port-80 virtual host:\n<VirtualHost *:80>\n  ServerName example.com\n  Redirect permanent / https://example.com/\n</VirtualHost>\nor in .htaccess (mod_rewrite):\nRewriteEngine On\nRewriteCond %{HTTPS} off\n# behind a proxy that terminates TLS:\nRewriteCond %{HTTP:X-Forwarded-Proto} !https\nRewriteRule ^ https://%{HTTP_HOST}%{REQUEST_URI} [L,R=301]',
    caddy:
      'Caddy redirects http to https by itself for a site address with a domain name. Make the site address the bare domain (example.com {...}), not http://example.com, and leave auto_https on.',
    iis: 'In web.config (URL Rewrite module), inside <system.webServer>:\n<rewrite>\n  <rules>\n    <rule name="HTTPS" stopProcessing="true">\n      <match url="(.*)" />\n      <conditions>\n        <add input="{HTTPS}" pattern="^OFF$" />\n      </conditions>\n      <action type="Redirect" url="https://{HTTP_HOST}/{R:1}" redirectType="Permanent" />\n    </rule>\n  </rules>\n</rewrite>',
  },
  fixTarget: { kind: 'https-redirect' },
  requires: ['httpRedirect'],
  run: ({ httpRedirect }) => {
    if (!httpRedirect) {
      return {
        status: 'skipped',
        evidence: { reason: 'The http:// form of the site could not be built or fetched.' },
        summary: 'Not applicable: no http chain.',
      }
    }
    const chain = httpRedirect
    const startHost = hostOf(chain.startUrl) ?? ''
    const evidence: Record<string, unknown> = {
      startUrl: chain.startUrl,
      hops: hopsEvidence(chain),
      finalUrl: chain.finalUrl,
      error: chain.error,
    }
    const first = chain.hops[0]

    if (!first || first.status === 0) {
      if (chain.finalUrl && parseUrl(chain.finalUrl)?.protocol === 'http:' && !chain.error) {
        return { status: 'fail', evidence, summary: 'The http:// form answers without redirecting to https.' }
      }
      return {
        status: 'skipped',
        evidence: { ...evidence, reason: `The http:// form is unreachable${chain.error ? `: ${chain.error}` : ''}.` },
        summary: 'Not applicable: the http:// form of the site does not answer.',
      }
    }

    if (!isRedirect(first.status) || !first.location) {
      return { status: 'fail', evidence, summary: `The http:// form answers ${first.status} without redirecting to https.` }
    }

    // Every URL the chain went to, resolved against the hop that sent it there.
    const targets = chain.hops
      .filter((h) => isRedirect(h.status) && h.location)
      .map((h) => parseUrl(h.location, h.url))
      .filter((u): u is URL => u !== null)
    const firstTarget = targets[0]
    const end = parseUrl(chain.finalUrl) ?? targets[targets.length - 1] ?? null
    evidence.endsOn = end?.href ?? null

    if (chain.error && LOOP.test(chain.error)) {
      return { status: 'fail', evidence, summary: `The http:// redirect chain does not end: ${chain.error}.` }
    }
    if (end?.protocol !== 'https:') {
      if (chain.error && UNREACHABLE.test(chain.error) && targets.some((t) => t.protocol === 'https:')) {
        evidence.note = 'The chain reached https but the https page did not answer.'
      } else {
        return { status: 'fail', evidence, summary: `The http:// form redirects but ends on ${end?.href ?? 'no page'}, not https.` }
      }
    }

    const endHost = (end ?? targets.find((t) => t.protocol === 'https:'))?.hostname ?? ''
    if (!sameSiteVariant(startHost, endHost)) {
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: `http://${startHost} ends on https of a different host (${endHost}).`,
      }
    }
    if (firstTarget?.protocol !== 'https:' || firstTarget.hostname.toLowerCase() !== startHost) {
      evidence.note = 'Redirect to https on the same host first, then to the other host, so HSTS is set for this host.'
      return {
        status: 'warn',
        severity: 'medium',
        evidence,
        summary: `The first redirect goes to ${firstTarget?.href ?? 'another URL'} instead of https on the same host.`,
      }
    }
    return { status: 'pass', evidence, summary: `http://${startHost} redirects to ${end?.href ?? firstTarget.href}.` }
  },
})
