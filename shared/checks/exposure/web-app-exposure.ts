// Known web applications' own exposures: WordPress's readme, XML-RPC, REST user list, author archive and
// WP-Cron (probed only when the page is WordPress), and the installers and bundled documentation that
// DokuWiki, MediaWiki and phpMyAdmin leave under their base path (probed only when the scanned URL has one).

import { WORDPRESS_PROBES, BASE_PATH_PROBES } from '../probe-paths-apps.ts'
import { defineCheck, type Severity } from '../types.ts'
import { worseSeverity } from '../../report/ranking.ts'
import { type AppFinding, appFindings } from './web-app-pages.ts'

const describeFinding = (f: AppFinding): string => {
  const d = f.details
  if (f.item === 'REST API user list') {
    const slugs = Array.isArray(d.slugs) ? (d.slugs as string[]).join(', ') : ''
    return `${f.url} lists ${d.count} WordPress user(s)${slugs ? ` (${slugs})` : ''}`
  }
  if (f.item === 'author archive') return `${f.url} gives away the login name ${d.slug}`
  if (typeof d.version === 'string') return `${f.url} is the ${f.app} ${d.version} ${f.item}`
  return `${f.url} is the ${f.app} ${f.item}`
}

export const webAppExposure = defineCheck({
  id: 'web-app-exposure',
  category: 'exposure',
  title: 'No WordPress endpoints, left-over installers or bundled documentation of known web applications are exposed',
  failTitle: 'WordPress endpoints, left-over installers or bundled documentation of a web application are exposed',
  failTitleOf: (evidence) => {
    const findings = Array.isArray(evidence.findings) ? (evidence.findings as unknown[]) : []
    const items = findings.map((f) => (typeof f === 'object' && f !== null ? String((f as { item?: unknown }).item ?? '') : ''))
    if (items.length === 0) return null
    if (items.includes('REST API user list')) return 'WordPress lists its users\u2019 login names to anyone'
    if (items.some((i) => i.startsWith('installer'))) return 'A web application\u2019s installer is still served'
    if (items.every((i) => i === 'bundled documentation')) return 'phpMyAdmin\u2019s bundled documentation is served'
    return findings.every((f) => (f as { app?: unknown })?.app === 'WordPress') ? 'WordPress endpoints are exposed' : null
  },
  description:
    `When the page is WordPress (its generator meta, REST API link or Link header, RSD link, /wp-content/ or /wp-includes/ URLs), ` +
    `reads what its root answers for ${Object.values(WORDPRESS_PROBES).join(', ')}; when the scanned URL lives under a path (/dokuwiki/doku.php), reads ` +
    `${Object.values(BASE_PATH_PROBES)
      .filter((p) => p !== 'composer.json')
      .join(', ')} under it. Other sites get none of these requests.`,
  why:
    'XML-RPC lets one request try hundreds of passwords (system.multicall) and makes the site send pingbacks to any address; the ' +
    'REST user list and author archives give away login names, half of every password guess; readme.html and the bundled ' +
    'documentation narrow the version to look up known vulnerabilities for; a left-over installer is a page made to configure the ' +
    'application from scratch, sometimes still able to set a new administrator; WP-Cron lets anyone start scheduled work.',
  confirmation:
    'Each answer is read by content, never by status code, and never when it equals the answer for a path that cannot exist: ' +
    'readme.html by its title "WordPress \u203a ReadMe" (low); xmlrpc.php by its exact answer to a GET, "XML-RPC server accepts POST ' +
    'requests only." (medium); /wp-json/wp/v2/users or /?rest_route=/wp/v2/users by a JSON array of objects with an id and a slug ' +
    '(medium; an empty list is not a finding); /?author=1 by a redirect to /author/<slug>/ (its Location read, never followed) or ' +
    'an author archive page (low); wp-cron.php by a 200 with an empty body, unless the site answers that for anything (low); ' +
    'DokuWiki\u2019s install.php by its title "DokuWiki Installer" (medium; high when it offers the setup form); MediaWiki\u2019s ' +
    'mw-config/ by "MediaWiki x.y.z installation" (medium); phpMyAdmin\u2019s doc/html/index.html by "phpMyAdmin x.y.z ' +
    'documentation" (low). Not findings: 403 or 404 answers, a single-page app\u2019s index.html, a redirect to the home page. ' +
    'Evidence: URL, what was read, versions, the number of users and their slugs masked (a***n); never e-mail addresses.',
  severity: 'medium',
  fix: {
    generic:
      'Delete readme.html, license.txt, install.php and mw-config/ after installing or upgrading, and doc/ from phpMyAdmin; block ' +
      'xmlrpc.php unless an app needs it; limit the REST users endpoint to signed-in users (a plugin, or a rest_endpoints filter ' +
      'removing /wp/v2/users); redirect ?author= requests to the home page; set DISABLE_WP_CRON and run wp-cron.php from the ' +
      'system cron (wp cron event run --due-now).',
    nginx:
      'In the server block, before the location that passes .php to PHP (set DISABLE_WP_CRON and run wp cron event run --due-now ' +
      'from the system cron first):\nlocation = /xmlrpc.php { return 403; }\nlocation = /readme.html { return 404; }\nlocation = ' +
      '/wp-cron.php { return 403; }\nlocation ~ ^/wp-json/wp/v2/users { return 403; }\nif ($args ~* ' +
      '"(^|&)(author=\\d|rest_route=/wp/v2/users)") { return 403; }\nlocation ~ (?:^|/)(?:install\\.php|mw-config/|doc/html/) { ' +
      'return 404; }',
    apache:
      'In the site\u2019s virtual host or .htaccess, before WordPress\u2019s own rules (set DISABLE_WP_CRON and run wp cron event run ' +
      '--due-now from the system cron first):\n<Files "xmlrpc.php">\n  Require all denied\n</Files>\n<FilesMatch ' +
      '"^(readme\\.html|install\\.php|wp-cron\\.php)$">\n  Require all denied\n</FilesMatch>\nRewriteEngine On\nRewriteCond %{QUERY_STRING} ' +
      '(^|&)(author=\\d|rest_route=/wp/v2/users) [NC]\nRewriteRule ^ - [F]\nRewriteRule ^/?wp-json/wp/v2/users - [F]\nRedirectMatch ' +
      '404 /(mw-config|doc/html)/',
    vercel:
      'These applications run on a PHP host; where Vercel fronts one with rewrites (a headless WordPress), send its paths to a ' +
      'not-found page before the rewrite, in vercel.json:\n"rewrites": [\n  { "source": "/xmlrpc.php", "destination": "/404" },\n  ' +
      '{ "source": "/wp-json/wp/v2/users", "destination": "/404" }\n]\nand fix the origin as the generic advice says.',
    netlify:
      'Where Netlify proxies to the application, answer its paths first, in _redirects:\n/xmlrpc.php  /404.html  404!\n/readme.html  ' +
      '/404.html  404!\n/wp-json/wp/v2/users  /404.html  404!\n/wp-cron.php  /404.html  404!\nthen fix the origin as the generic ' +
      'advice says.',
    nextjs:
      'A Next.js front end of a headless WordPress does not expose WordPress itself: the WordPress host does. Fix that host (generic, ' +
      'nginx or apache advice), and keep its address out of public pages when only the Next.js server needs it.',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (http.request.uri.path in {"/xmlrpc.php" "/readme.html"} or ' +
      'starts_with(http.request.uri.path, "/wp-json/wp/v2/users") or http.request.uri.query contains "rest_route=/wp/v2/users" ' +
      'or http.request.uri.query contains "author=") -> Block. Then delete the installers at the origin.',
  },
  fixTarget: { kind: 'served-file' },
  requires: ['target', 'mainResponse', 'probes'],
  run: ({ target, mainResponse, probes }) => {
    const { plan, findings, probed } = appFindings(target, mainResponse, probes)
    if (!plan.wordpress && !plan.base)
      return {
        status: 'pass',
        evidence: { reason: 'The page is not WordPress and the scanned URL is at the root: no application path was asked for.' },
        summary: 'Not WordPress, no base path: nothing to probe.',
      }
    const checked = {
      ...(plan.wordpress ? { wordpressRoot: plan.wordpress.root, wordpressSignals: plan.wordpress.signals } : {}),
      ...(plan.base ? { basePath: plan.base.base } : {}),
      probed,
    }
    if (probed.every((p) => probes[p]!.status === 0))
      return {
        status: 'skipped',
        evidence: { ...checked, reason: probed.length === 0 ? 'The paths were not probed.' : 'No probe got an answer.' },
        summary: probed.length === 0 ? 'Not applicable: the paths were not probed.' : 'Not applicable: the probes got no answer.',
      }
    if (findings.length === 0)
      return {
        status: 'pass',
        evidence: checked,
        summary: `${probed.length} application path(s) probed; none exposed.`,
      }
    const severity = findings.reduce<Severity>((s, f) => worseSeverity(s, f.severity), 'low')
    // The most telling of the worst: a list of login names says more than an endpoint that answers.
    const worst = findings.filter((f) => f.severity === severity)
    const top = worst.find((f) => f.item === 'REST API user list') ?? worst[0]!
    const others = findings.filter((f) => f !== top).map((f) => f.item)
    return {
      status: 'fail',
      severity,
      evidence: { url: top.url, ...checked, findings },
      summary: `${describeFinding(top)}${others.length > 0 ? `; ${others.length} more: ${others.join(', ')}` : ''}.`,
    }
  },
})
