// Per-platform snippets for fixes that come down to sending response headers on every path, and for the
// cookie attributes most fixes need. Every snippet is written in the platform's own configuration syntax,
// with values escaped for it, so it can be pasted as it is.
import { xmlAttribute } from '../../lib/html.ts'
import type { Platform } from '../types.ts'

export interface Header {
  key: string
  value: string
}

export type PlatformFixes = Record<Exclude<Platform, 'generic'>, string>

const json = (v: unknown) => JSON.stringify(v, null, 2)
/** A Python or Ruby string literal (both read JSON's escapes for the characters headers can hold). */
const quoted = (v: string) => JSON.stringify(v)

/** A Content-Security-Policy value as directives and their sources, in order. */
export function cspDirectives(policy: string): Array<[string, string[]]> {
  return policy
    .split(';')
    .map((d) => d.trim().split(/\s+/).filter(Boolean))
    .filter((parts) => parts.length > 0)
    .map(([name, ...sources]) => [name!.toLowerCase(), sources])
}

// Django settings that send a header themselves (Django's SecurityMiddleware, XFrameOptionsMiddleware).
function djangoSetting(h: Header): string | null {
  switch (h.key.toLowerCase()) {
    case 'x-content-type-options':
      return h.value.toLowerCase() === 'nosniff' ? 'SECURE_CONTENT_TYPE_NOSNIFF = True' : null
    case 'referrer-policy':
      return `SECURE_REFERRER_POLICY = ${quoted(h.value)}`
    case 'cross-origin-opener-policy':
      return `SECURE_CROSS_ORIGIN_OPENER_POLICY = ${quoted(h.value)}`
    case 'x-frame-options':
      return /^(deny|sameorigin)$/i.test(h.value) ? `X_FRAME_OPTIONS = ${quoted(h.value.toUpperCase())}` : null
    case 'strict-transport-security': {
      const age = /max-age=(\d+)/i.exec(h.value)?.[1]
      if (!age) return null
      return [
        `SECURE_HSTS_SECONDS = ${age}`,
        `SECURE_HSTS_INCLUDE_SUBDOMAINS = ${/includesubdomains/i.test(h.value) ? 'True' : 'False'}`,
        `SECURE_HSTS_PRELOAD = ${/preload/i.test(h.value) ? 'True' : 'False'}`,
      ].join('\n')
    }
    default:
      return null
  }
}

function django(headers: Header[]): string {
  const parts: string[] = []
  const settings: string[] = []
  const rest: Header[] = []
  for (const h of headers) {
    if (h.key.toLowerCase() === 'content-security-policy') {
      const directives = cspDirectives(h.value)
        .map(([name, sources]) => `        ${quoted(name)}: [${sources.map(quoted).join(', ')}],`)
        .join('\n')
      parts.push(
        '# Content-Security-Policy with django-csp 4 (pip install django-csp), in settings.py:',
        'MIDDLEWARE += ["csp.middleware.CSPMiddleware"]',
        `CONTENT_SECURITY_POLICY = {\n    "DIRECTIVES": {\n${directives}\n    },\n}`,
      )
      continue
    }
    const setting = djangoSetting(h)
    if (setting) settings.push(setting)
    else rest.push(h)
  }
  if (settings.length) {
    const frame = settings.some((l) => l.startsWith('X_FRAME_OPTIONS'))
    parts.unshift(
      `# In settings.py (django.middleware.security.SecurityMiddleware must be in MIDDLEWARE${
        frame ? '; X_FRAME_OPTIONS needs django.middleware.clickjacking.XFrameOptionsMiddleware' : ''
      }):`,
      settings.join('\n'),
    )
  }
  if (rest.length) {
    parts.push(
      '# A middleware for the other headers, e.g. in yourproject/middleware.py, then add "yourproject.middleware.security_headers" to MIDDLEWARE:',
      [
        'def security_headers(get_response):',
        '    def middleware(request):',
        '        response = get_response(request)',
        ...rest.map((h) => `        response.headers[${quoted(h.key)}] = ${quoted(h.value)}`),
        '        return response',
        '    return middleware',
      ].join('\n'),
    )
  }
  return parts.join('\n')
}

/** Rails' content_security_policy DSL: keywords as symbols, everything else as strings Rails sends verbatim. */
function railsSource(s: string): string {
  const keyword = /^'(self|none|unsafe-inline|unsafe-eval|unsafe-hashes|strict-dynamic|report-sample|wasm-unsafe-eval)'$/.exec(s)
  if (keyword) return `:${keyword[1]!.replace(/-/g, '_')}`
  if (/^(data|blob|https|http|ws|wss|mediastream|filesystem):$/.test(s)) return `:${s.slice(0, -1)}`
  return quoted(s)
}

function rails(headers: Header[]): string {
  const parts: string[] = []
  const special = new Set(['content-security-policy', 'strict-transport-security'])
  const rest = headers.filter((h) => !special.has(h.key.toLowerCase()))
  const csp = headers.find((h) => h.key.toLowerCase() === 'content-security-policy')
  const hsts = headers.find((h) => h.key.toLowerCase() === 'strict-transport-security')
  // Rails sends HSTS itself with force_ssl (ActionDispatch::SSL), which also redirects to https and marks cookies Secure.
  const age = hsts ? /max-age=(\d+)/i.exec(hsts.value)?.[1] : undefined
  if (hsts && age) {
    const options = [`expires: ${age}`, `subdomains: ${/includesubdomains/i.test(hsts.value)}`, `preload: ${/preload/i.test(hsts.value)}`]
    parts.push(
      '# In config/environments/production.rb:',
      `config.force_ssl = true\nconfig.ssl_options = { hsts: { ${options.join(', ')} } }`,
    )
  } else if (hsts) rest.push(hsts)
  if (rest.length) {
    parts.push(
      '# In config/application.rb (inside class Application):',
      `config.action_dispatch.default_headers.merge!(\n${rest.map((h) => `  ${quoted(h.key)} => ${quoted(h.value)}`).join(',\n')}\n)`,
    )
  }
  if (csp) {
    const lines = cspDirectives(csp.value).map(([name, sources]) => {
      const method = name.replace(/-/g, '_')
      return sources.length ? `    policy.${method} ${sources.map(railsSource).join(', ')}` : `    policy.${method} true`
    })
    parts.push(
      '# In config/initializers/content_security_policy.rb:',
      ['Rails.application.configure do', '  config.content_security_policy do |policy|', ...lines, '  end', 'end'].join('\n'),
    )
  }
  return parts.join('\n')
}

/** How to send these headers on every response, per platform. */
export function headerFixes(headers: Header[]): PlatformFixes {
  const nginxValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')
  // mod_headers reads %-sequences as format specifiers: a literal % is written %%.
  const apacheValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%')
  const caddyValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')
  return {
    vercel: `In vercel.json:\n${json({ headers: [{ source: '/(.*)', headers }] })}`,
    netlify: `In public/_headers (or the publish directory):\n/*\n${headers.map((h) => `  ${h.key}: ${h.value}`).join('\n')}`,
    nextjs: [
      'In next.config.js:',
      'module.exports = {',
      '  async headers() {',
      '    return [{',
      "      source: '/:path*',",
      '      headers: [',
      ...headers.map((h) => `        { key: '${h.key}', value: ${JSON.stringify(h.value)} },`),
      '      ],',
      '    }]',
      '  },',
      '}',
    ].join('\n'),
    express: [
      'In the Express app, before the routes (helmet() sets most of these headers too):',
      'app.use((req, res, next) => {',
      ...headers.map((h) => `  res.setHeader(${JSON.stringify(h.key)}, ${JSON.stringify(h.value)})`),
      '  next()',
      '})',
    ].join('\n'),
    django: django(headers),
    rails: rails(headers),
    nginx: `In the server block (always: also on error responses):\n${headers
      .map((h) => `add_header ${h.key} "${nginxValue(h.value)}" always;`)
      .join('\n')}`,
    apache: [
      'In .htaccess at the document root, or the <VirtualHost> (mod_headers: a2enmod headers; always: also on error responses):',
      '<IfModule mod_headers.c>',
      ...headers.map((h) => `  Header always set ${h.key} "${apacheValue(h.value)}"`),
      '</IfModule>',
    ].join('\n'),
    caddy: [
      'In the Caddyfile site block:',
      'example.com {',
      '  header {',
      ...headers.map((h) => `    ${h.key} "${caddyValue(h.value)}"`),
      '  }',
      '}',
    ].join('\n'),
    iis: [
      'In web.config at the site root:',
      '<configuration>',
      '  <system.webServer>',
      '    <httpProtocol>',
      '      <customHeaders>',
      ...headers.flatMap((h) => [
        `        <remove name="${xmlAttribute(h.key)}" />`,
        `        <add name="${xmlAttribute(h.key)}" value="${xmlAttribute(h.value)}" />`,
      ]),
      '      </customHeaders>',
      '    </httpProtocol>',
      '  </system.webServer>',
      '</configuration>',
    ].join('\n'),
    cloudflare: `Rules > Transform Rules > Modify Response Header > Create rule (all incoming requests):\n${headers
      .map((h) => `Set static  ${h.key} = ${h.value}`)
      .join('\n')}`,
  }
}

export type CookieAttribute = 'Secure' | 'HttpOnly' | 'SameSite'

/** How to add one attribute to the cookies a site sets, on the platforms whose configuration sets cookies. */
export function cookieFixes(attribute: CookieAttribute): Pick<PlatformFixes, 'express' | 'django' | 'rails' | 'apache' | 'caddy' | 'iis'> {
  const express = { Secure: 'secure: true', HttpOnly: 'httpOnly: true', SameSite: "sameSite: 'lax'" }[attribute]
  const django = {
    Secure: 'SESSION_COOKIE_SECURE = True\nCSRF_COOKIE_SECURE = True',
    HttpOnly: 'SESSION_COOKIE_HTTPONLY = True  # the default; CSRF_COOKIE_HTTPONLY only if no JavaScript reads the token',
    SameSite: 'SESSION_COOKIE_SAMESITE = "Lax"\nCSRF_COOKIE_SAMESITE = "Lax"',
  }[attribute]
  const rails = { Secure: 'secure: true', HttpOnly: 'httponly: true', SameSite: 'same_site: :lax' }[attribute]
  const php = {
    Secure: 'session.cookie_secure = 1',
    HttpOnly: 'session.cookie_httponly = 1',
    SameSite: 'session.cookie_samesite = "Lax"',
  }[attribute]
  const apacheAttr = { Secure: ['secure', 'Secure'], HttpOnly: ['httponly', 'HttpOnly'], SameSite: ['samesite', 'SameSite=Lax'] }[attribute]
  const iis = {
    Secure: '<httpCookies requireSSL="true" />',
    HttpOnly: '<httpCookies httpOnlyCookies="true" />',
    SameSite: '<httpCookies sameSite="Lax" />\n<sessionState cookieSameSite="Lax" />',
  }[attribute]
  return {
    express:
      `Where the cookie is set: express-session({ cookie: { ${express} }, ... }) or res.cookie(name, value, { ${express} })` +
      (attribute === 'Secure' ? ". Behind a proxy add app.set('trust proxy', 1), or express-session will not send a Secure cookie." : '.'),
    django: `In settings.py:\n${django}`,
    rails:
      `In config/initializers/session_store.rb:\nRails.application.config.session_store :cookie_store, key: "_app_session", ${rails}\n` +
      `and on other cookies: cookies[:name] = { value: v, ${rails} }` +
      (attribute === 'Secure' ? '. config.force_ssl = true also marks every cookie Secure.' : '.'),
    apache:
      `Set it where the cookie is made. PHP sessions (PHPSESSID), in php.ini or .user.ini:\n${php}\n` +
      `As a stop-gap for other cookies, in .htaccess (mod_headers):\n<IfModule mod_headers.c>\n` +
      `  Header always edit* Set-Cookie "(?i)^((?:(?!;\\s?${apacheAttr[0]}).)+)$" "$1; ${apacheAttr[1]}"\n</IfModule>`,
    caddy:
      'Set it in the app behind Caddy. As a stop-gap, in the reverse_proxy block:\n' +
      `reverse_proxy localhost:3000 {\n  header_down Set-Cookie "^(.*)$" "$1; ${attribute === 'SameSite' ? 'SameSite=Lax' : attribute}"\n}\n` +
      '(appends to every cookie: use it only when none already has the attribute).',
    iis: `In web.config (ASP.NET), inside <system.web>:\n${iis}\nCookies made in code: set Secure/HttpOnly/SameSite on the HttpCookie.`,
  }
}
