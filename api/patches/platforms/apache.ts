// Apache: a mod_headers and mod_rewrite block in the site's .htaccess.
import { appendBlock, type CookieCheck, MARK, pick, type Plan, sh, type Wanted } from '../plan.ts'

export function apache(p: Plan, w: Wanted): void {
  const path = pick(
    p.repo,
    ['public/.htaccess', 'public_html/.htaccess', '.htaccess'].filter((x) => p.repo.read(x) !== null).concat(['.htaccess']),
  )
  const lines: string[] = []
  const headerLines: string[] = []
  for (const h of w.headers) headerLines.push(`  Header always set ${h.key} "${h.value}"`)
  if (w.version) headerLines.push('  Header always unset X-Powered-By', '  Header unset X-Powered-By')
  const cookieEdits: Array<[CookieCheck, string, string]> = [
    ['cookie-secure', 'secure', 'Secure'],
    ['cookie-httponly', 'httponly', 'HttpOnly'],
    ['cookie-samesite', 'samesite', 'SameSite=Lax'],
  ]
  for (const [id, attr, add] of cookieEdits)
    if (w.cookies.has(id)) headerLines.push(`  Header always edit* Set-Cookie "(?i)^((?:(?!;\\s?${attr}).)+)$" "$1; ${add}"`)
  if (headerLines.length) lines.push(`# ${MARK}: security headers`, '<IfModule mod_headers.c>', ...headerLines, '</IfModule>')
  if (w.redirect)
    lines.push(
      `# ${MARK}: http to https`,
      '<IfModule mod_rewrite.c>',
      '  RewriteEngine On',
      '  RewriteCond %{HTTPS} off',
      '  RewriteCond %{HTTP:X-Forwarded-Proto} !https',
      '  RewriteRule ^ https://%{HTTP_HOST}%{REQUEST_URI} [L,R=301]',
      '</IfModule>',
    )
  if (!lines.length) return
  p.write(path, appendBlock(p.current(path), `${lines.join('\n')}\n`))
  if (w.headers.length) p.fixHeaders(w, `${path}, mod_headers`)
  if (w.version)
    p.fix(
      w.version,
      `${path} removes X-Powered-By; the Server version needs ServerTokens Prod in the server configuration (not allowed in .htaccess).`,
      `curl -sI ${sh(p.url)} | grep -iE '^(server|x-powered-by):' shows no version number.`,
    )
  for (const f of w.cookies.values())
    p.fix(
      f,
      `${path} appends the missing attribute to every Set-Cookie (mod_headers edit*).`,
      `curl -sI ${sh(p.url)} | grep -i '^set-cookie:' shows the attribute.`,
    )
  if (w.redirect)
    p.fix(
      w.redirect,
      `${path} redirects http to https with mod_rewrite (301).`,
      `curl -sI ${sh(p.url.replace(/^https:/, 'http:'))} answers 301 with a location on https.`,
    )
}
