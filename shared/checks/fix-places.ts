// Where a change of each kind goes, per hosting platform: the file or setting a fix brief points at. A check
// whose fix goes elsewhere on some platform says so in its own fixTarget.where.
import type { FixKind, Platform } from './types.ts'

export const FIX_PLACES: Readonly<Record<FixKind, Readonly<Record<Platform, string>>>> = {
  headers: {
    vercel: 'vercel.json at the project root ("headers" for source "/(.*)")',
    netlify: '_headers in the publish directory (e.g. public/_headers), or [[headers]] in netlify.toml',
    nextjs: 'next.config.js (or next.config.mjs / next.config.ts): async headers() for source "/:path*"',
    nginx: 'the nginx server block of the site (e.g. /etc/nginx/sites-available/<site>), with "always" so error pages get it too',
    cloudflare: 'Cloudflare dashboard: Rules > Transform Rules > Modify Response Header (a rule for all incoming requests)',
    generic: 'the web server, proxy or framework config that sets response headers for every path',
  },
  'https-redirect': {
    vercel: 'Vercel dashboard: Project > Settings > Domains (the domain must be served by Vercel, not only proxied)',
    netlify: 'Netlify dashboard: Domain management > HTTPS (certificate, then Force HTTPS)',
    nextjs: 'the host or proxy in front of Next.js; behind a proxy, middleware.ts',
    nginx: 'the nginx server block that listens on port 80',
    cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > Always Use HTTPS',
    generic: 'the web server or load balancer answering on port 80',
  },
  cookies: {
    vercel: 'the code that sets the cookie (API route or Vercel Function)',
    netlify: 'the code that sets the cookie (Netlify Function)',
    nextjs: 'the route handler, server action or middleware that calls cookies().set',
    nginx: 'the app that sets the cookie; as a stop-gap, proxy_cookie_flags in the nginx server or location block that proxies it',
    cloudflare: 'the application that sets the cookie; as a stop-gap, a Cloudflare Worker rewriting Set-Cookie',
    generic: 'the server code that sends the Set-Cookie header (session or auth middleware)',
  },
  'mixed-content': {
    vercel: 'the page source and config holding http:// URLs, then vercel.json ("headers") as a safety net',
    netlify: 'the page source and config holding http:// URLs, then _headers as a safety net',
    nextjs: 'components and environment variables holding http:// URLs, then headers() in next.config.js as a safety net',
    nginx: "the app's http:// URLs, then the nginx server block as a safety net",
    cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > Automatic HTTPS Rewrites, and the http:// URLs in the app',
    generic: 'every http:// resource URL in the page source, templates and configuration',
  },
  version: {
    vercel: "the framework or app that sends X-Powered-By (next.config.js poweredByHeader, or the app's own server code)",
    netlify: 'the functions or framework that send X-Powered-By (Netlify cannot remove headers from _headers)',
    nextjs: 'next.config.js (poweredByHeader: false)',
    nginx: 'the nginx http block (nginx.conf: server_tokens off, proxy_hide_header) and the upstream app or CMS',
    cloudflare: 'Cloudflare dashboard: Rules > Transform Rules > Modify Response Header (remove the headers)',
    generic: 'the web server and app config that send Server, X-Powered-By and the generator meta tag',
  },
  'served-file': {
    vercel:
      'the deployment contents: .gitignore / .vercelignore and any build step that copies the file into the output; secrets in Project ' +
      'Settings > Environment Variables',
    netlify: 'the publish directory (it must be the build output) and netlify.toml ([[redirects]] returning 404 until redeployed)',
    nextjs: 'the public/ directory (and out/ for a static export): Next.js serves everything in it as is',
    nginx:
      'the nginx server block (a location that denies the path, e.g. location ~ /\\.(?!well-known) { deny all; }) and the served root ' +
      'directory',
    cloudflare: 'Cloudflare dashboard: Security > WAF > Custom rules (block the path), then the files at the origin',
    generic: 'the deployed web root (remove the file) and the web server config (deny the path)',
  },
  secrets: {
    vercel:
      'the client-side code that embeds the key; move it to Project Settings > Environment Variables (no NEXT_PUBLIC_/VITE_ prefix) and' +
      ' an API route or Vercel Function',
    netlify:
      'the client-side code that embeds the key; move it to Site configuration > Environment variables (Functions scope) and a Netlify ' +
      'Function',
    nextjs:
      'the client component or NEXT_PUBLIC_ variable that puts the key in the bundle; move the call to a route handler or server action',
    nginx: 'the built JavaScript that embeds the key; move the call to a backend route that nginx proxies',
    cloudflare:
      'the client-side code that embeds the key; move the call to a Cloudflare Worker holding it as a secret (wrangler secret put)',
    generic: 'the client-side code that embeds the key, and a server-side route that holds it instead',
  },
  other: {
    vercel: "vercel.json or the project's code",
    netlify: "netlify.toml, _headers or the project's code",
    nextjs: "next.config.js or the app's code",
    nginx: 'the nginx server block or the app behind it',
    cloudflare: 'the Cloudflare dashboard or the origin app',
    generic: 'the app or web server configuration',
  },
}
