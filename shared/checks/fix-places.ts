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
    express:
      "the Express app's entry file (app.js / server.js): helmet(), or a middleware calling res.setHeader, registered before the routes",
    django:
      'settings.py (SECURE_* settings and MIDDLEWARE); Content-Security-Policy through django-csp (CSP_* settings or CONTENT_SECURITY_POLICY)',
    rails: 'config/application.rb (config.action_dispatch.default_headers) and config/initializers/content_security_policy.rb',
    apache: 'the .htaccess in the document root, or the <VirtualHost> in httpd.conf / sites-available (mod_headers: Header always set)',
    caddy: 'the Caddyfile site block (the header directive)',
    iis: 'web.config at the site root: <system.webServer><httpProtocol><customHeaders>',
    generic: 'the web server, proxy or framework config that sets response headers for every path',
  },
  'https-redirect': {
    vercel: 'Vercel dashboard: Project > Settings > Domains (the domain must be served by Vercel, not only proxied)',
    netlify: 'Netlify dashboard: Domain management > HTTPS (certificate, then Force HTTPS)',
    nextjs: 'the host or proxy in front of Next.js; behind a proxy, middleware.ts',
    nginx: 'the nginx server block that listens on port 80',
    cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > Always Use HTTPS',
    express: 'the Express app (a redirect middleware with app.set("trust proxy") behind a proxy), or the proxy in front of it',
    django: 'settings.py: SECURE_SSL_REDIRECT = True (and SECURE_PROXY_SSL_HEADER behind a proxy)',
    rails: 'config/environments/production.rb: config.force_ssl = true',
    apache: 'the port-80 <VirtualHost> (Redirect permanent), or .htaccess with mod_rewrite',
    caddy:
      'nothing to add: Caddy redirects http to https for every site address with a domain name (check the site address is not http://)',
    iis: 'web.config: <system.webServer><rewrite> (URL Rewrite module); <httpRedirect> only on a separate http-only site, since it redirects every request',
    generic: 'the web server or load balancer answering on port 80',
  },
  cookies: {
    vercel: 'the code that sets the cookie (API route or Vercel Function)',
    netlify: 'the code that sets the cookie (Netlify Function)',
    nextjs: 'the route handler, server action or middleware that calls cookies().set',
    nginx: 'the app that sets the cookie; as a stop-gap, proxy_cookie_flags in the nginx server or location block that proxies it',
    cloudflare: 'the application that sets the cookie; as a stop-gap, a Cloudflare Worker rewriting Set-Cookie',
    express:
      'the express-session / res.cookie options (cookie: { secure, httpOnly, sameSite }), with app.set("trust proxy", 1) behind a proxy',
    django: 'settings.py: SESSION_COOKIE_SECURE, CSRF_COOKIE_SECURE, SESSION_COOKIE_HTTPONLY, SESSION_COOKIE_SAMESITE',
    rails: 'config/initializers/session_store.rb (secure:, httponly:, same_site:) and cookies[...] calls in controllers',
    apache:
      'the app that sets the cookie (PHP: session.cookie_secure / session.cookie_httponly / session.cookie_samesite in php.ini or .user.ini); as a stop-gap, Header always edit Set-Cookie in .htaccess',
    caddy: 'the app behind Caddy that sets the cookie; as a stop-gap, header_down Set-Cookie in the reverse_proxy block',
    iis: 'web.config: <system.web><httpCookies requireSSL="true" httpOnlyCookies="true" sameSite="Lax"/> (ASP.NET), or the code that sets the cookie',
    generic: 'the server code that sends the Set-Cookie header (session or auth middleware)',
  },
  'mixed-content': {
    vercel: 'the page source and config holding http:// URLs, then vercel.json ("headers") as a safety net',
    netlify: 'the page source and config holding http:// URLs, then _headers as a safety net',
    nextjs: 'components and environment variables holding http:// URLs, then headers() in next.config.js as a safety net',
    nginx: "the app's http:// URLs, then the nginx server block as a safety net",
    cloudflare: 'Cloudflare dashboard: SSL/TLS > Edge Certificates > Automatic HTTPS Rewrites, and the http:// URLs in the app',
    express: 'the templates and config holding http:// URLs, then the headers middleware (helmet) as a safety net',
    django: 'the templates and settings holding http:// URLs, then the CSP settings as a safety net',
    rails: 'the views and config holding http:// URLs, then the content_security_policy initializer as a safety net',
    apache: "the site's http:// URLs, then .htaccess (Header always set) as a safety net",
    caddy: "the site's http:// URLs, then the Caddyfile header directive as a safety net",
    iis: "the site's http:// URLs, then web.config customHeaders as a safety net",
    generic: 'every http:// resource URL in the page source, templates and configuration',
  },
  version: {
    vercel: "the framework or app that sends X-Powered-By (next.config.js poweredByHeader, or the app's own server code)",
    netlify: 'the functions or framework that send X-Powered-By (Netlify cannot remove headers from _headers)',
    nextjs: 'next.config.js (poweredByHeader: false)',
    nginx: 'the nginx http block (nginx.conf: server_tokens off, proxy_hide_header) and the upstream app or CMS',
    cloudflare: 'Cloudflare dashboard: Rules > Transform Rules > Modify Response Header (remove the headers)',
    express: "the Express app: app.disable('x-powered-by') (helmet() removes it too)",
    django: 'the server in front of Django (gunicorn, uWSGI, nginx or Apache): Django itself sends no version',
    rails: 'the app server and proxy in front of Rails (Passenger: passenger_show_version_in_header off)',
    apache: 'the server config (ServerTokens Prod and ServerSignature Off are not allowed in .htaccess) and php.ini (expose_php = Off)',
    caddy: 'the Caddyfile: header -Server (Caddy sends no version, only the name)',
    iis: 'web.config: <security><requestFiltering removeServerHeader="true"/>, <httpRuntime enableVersionHeader="false"/> and <customHeaders><remove name="X-Powered-By"/>',
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
    express:
      'the directory passed to express.static (keep only build output there; dotfiles are ignored by default, unless dotfiles: "allow")',
    django: 'STATIC_ROOT / MEDIA_ROOT and the server that serves them (collectstatic copies whatever the static dirs hold)',
    rails: 'the public/ directory: Rails serves everything in it as is',
    apache: 'the document root (remove the file) and .htaccess or httpd.conf (a <FilesMatch> or RedirectMatch 404 that denies the path)',
    caddy: 'the Caddyfile site block (a matcher that answers 404 for the path) and the root directory of file_server',
    iis: 'web.config: <requestFiltering><hiddenSegments> / <fileExtensions>, and the site directory',
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
    express: 'the client-side code that embeds the key; move the call to an Express route that reads the key from process.env',
    django: 'the templates or static JavaScript that embed the key; move the call to a Django view that reads the key from settings/env',
    rails: 'the views or JavaScript that embed the key; move the call to a controller action that reads it from credentials or ENV',
    apache: 'the JavaScript or templates that embed the key; move the call to a server-side script that reads it from the environment',
    caddy: 'the JavaScript that embeds the key; move the call to a backend route behind Caddy',
    iis: 'the JavaScript that embeds the key; move the call to a server-side endpoint that reads it from configuration',
    generic: 'the client-side code that embeds the key, and a server-side route that holds it instead',
  },
  dependencies: {
    vercel: 'package.json and its lockfile (then redeploy); a CDN <script src> in the HTML or layout that loads the library',
    netlify: 'package.json and its lockfile (then deploy); a CDN <script src> in the HTML that loads the library',
    nextjs: 'package.json and its lockfile (then next build); a CDN URL in next/script or the layout',
    nginx: "the front end's package.json (then rebuild), or the library file under the server root and the <script src> naming it",
    cloudflare: 'package.json of the Pages build or the origin app (then redeploy and purge the old file from the cache)',
    express:
      "the front end's package.json and lockfile (then rebuild the bundle the app serves); a CDN <script src> in index.html or the views",
    django: "the front end's package.json, or the file under STATIC_ROOT's source and the <script src> in the templates",
    rails: 'package.json (jsbundling / importmap pins in config/importmap.rb), or the file under vendor/javascript',
    apache: "the front end's package.json (then rebuild), or the library file under the document root and the <script src> naming it",
    caddy: "the front end's package.json (then rebuild), or the library file the Caddyfile serves and the <script src> naming it",
    iis: "the front end's package.json (then rebuild), or the library file under the site and the <script src> naming it",
    generic: "the front end's package.json and lockfile, or the <script src> (CDN URL or vendored file) that loads the library",
  },
  other: {
    vercel: "vercel.json or the project's code",
    netlify: "netlify.toml, _headers or the project's code",
    nextjs: "next.config.js or the app's code",
    nginx: 'the nginx server block or the app behind it',
    cloudflare: 'the Cloudflare dashboard or the origin app',
    express: "the Express app's code or middleware",
    django: "settings.py or the Django app's code",
    rails: "config/ or the Rails app's code",
    apache: '.htaccess, httpd.conf or the app behind Apache',
    caddy: 'the Caddyfile or the app behind Caddy',
    iis: 'web.config or the app behind IIS',
    generic: 'the app or web server configuration',
  },
}
