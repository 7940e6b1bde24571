// The known, documented weaknesses of each application's default install (as bench/real-apps/install.sh and
// apps.sh set them up from Debian's packages), each with where it is documented, and how each tool's
// answer is read as having found it. Every item is visible to a non-intrusive scanner (plain GETs or
// one harmless POST); `local` items exist only because the scanner runs on the same machine (Debian's
// `Require local`) and are shown but not counted.
//
// Ours: an item is found when one of `ours` checks reports a finding (fail or warn) and, when `oursText` is
// given, its summary or evidence matches it. Wapiti: found when a finding of a category matching
// `wapitiCategory` has a path or info matching `wapitiText`.

export interface GroundTruthItem {
  id: string
  what: string
  /** Where the application, its packager or a standard documents it. */
  source: string
  ours: string[]
  oursText?: RegExp
  wapitiCategory: RegExp
  wapitiText?: RegExp
  /** Seen only from the server itself (Debian's `Require local`): not counted. */
  local?: boolean
}

const NONE = /^$/ // no check of that tool claims the item

/**
 * What Debian's own Apache defaults add to every application served by it, and the headers it does not
 * send; `sends` names the headers the application sends itself (then that item is not a weakness).
 */
function apacheDefaults(app: string, sends: ('nosniff' | 'csp')[] = []): GroundTruthItem[] {
  const items: GroundTruthItem[] = [
    {
      id: `${app}-server-banner`,
      what: 'Server header names Apache 2.4.x and the OS (Debian security.conf: ServerTokens OS)',
      source:
        '/etc/apache2/conf-available/security.conf (Debian: "set to Prod on production"); https://httpd.apache.org/docs/2.4/mod/core.html#servertokens',
      ours: ['version-disclosure'],
      oursText: /Apache\/2\.4/,
      wapitiCategory: /Fingerprint web server|Fingerprint web technology/i,
      // wapp's fingerprint: {"versions": ["2.4.71"], "name": "Apache", ...}
      wapitiText: /"versions": \["2\.4[^\]]*\], "name": "Apache"/,
    },
    {
      id: `${app}-server-status`,
      what: '/server-status readable (mod_status enabled by Debian, Require local)',
      source: '/etc/apache2/mods-available/status.conf; https://httpd.apache.org/docs/2.4/mod/mod_status.html#security',
      ours: ['server-info-page'],
      oursText: /server-status/,
      wapitiCategory: /./,
      wapitiText: /server-status/,
      local: true,
    },
    {
      id: `${app}-nosniff`,
      what: 'No X-Content-Type-Options: nosniff',
      source: 'https://cheatsheetseries.owasp.org/cheatsheets/HTTP_Headers_Cheat_Sheet.html#x-content-type-options',
      ours: ['x-content-type-options'],
      wapitiCategory: /HTTP Secure Headers|HTTP security headers/i,
      wapitiText: /X-Content-Type-Options/i,
    },
    {
      id: `${app}-csp`,
      what: 'No Content-Security-Policy',
      source: 'https://cheatsheetseries.owasp.org/cheatsheets/Content_Security_Policy_Cheat_Sheet.html',
      ours: ['csp'],
      wapitiCategory: /Content Security Policy/i,
    },
  ]
  return items.filter((i) => !sends.some((h) => i.id === `${app}-${h}`))
}

const clickjacking = (app: string, where: string): GroundTruthItem => ({
  id: `${app}-clickjacking`,
  what: `${where} can be framed by any site (no X-Frame-Options, no frame-ancestors)`,
  source: 'https://cheatsheetseries.owasp.org/cheatsheets/Clickjacking_Defense_Cheat_Sheet.html',
  ours: ['frame-protection'],
  wapitiCategory: /HTTP Secure Headers|Clickjacking/i,
  wapitiText: /X-Frame-Options/i,
})

const WORDPRESS: GroundTruthItem[] = [
  {
    id: 'wp-readme',
    what: '/readme.html is served (names WordPress and its major version)',
    source:
      'https://developer.wordpress.org/advanced-administration/security/hardening/ ; OWASP WSTG-INFO-08 (https://owasp.org/www-project-web-security-testing-guide/latest/4-Web_Application_Security_Testing/01-Information_Gathering/08-Fingerprint_Web_Application_Framework)',
    ours: ['web-app-exposure', 'version-disclosure', 'exposed-metadata-files', 'server-info-page'],
    oursText: /"url":"[^"]*\/readme\.html"/,
    wapitiCategory: /./,
    wapitiText: /readme\.html/i,
  },
  {
    id: 'wp-xmlrpc',
    what: '/xmlrpc.php answers (system.multicall brute-force amplification, pingbacks)',
    source: 'https://developer.wordpress.org/advanced-administration/security/brute-force/#xml-rpc',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*\/xmlrpc\.php"/,
    wapitiCategory: /./,
    wapitiText: /xmlrpc\.php/i,
  },
  {
    id: 'wp-rest-users',
    what: 'REST API lists user names: /?rest_route=/wp/v2/users (/wp-json/wp/v2/users with pretty permalinks)',
    source: 'https://developer.wordpress.org/rest-api/reference/users/ (list is public for authors of published posts)',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*wp\/v2\/users"/,
    wapitiCategory: /./,
    wapitiText: /wp\/v2\/users/i,
  },
  {
    id: 'wp-author-enum',
    what: '/?author=1 reveals the login name (author archive)',
    source: 'https://developer.wordpress.org/advanced-administration/security/hardening/ (user names; WPScan user enumeration)',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*[?&]author=1"/,
    wapitiCategory: /./,
    wapitiText: /author=\d/i,
  },
  {
    id: 'wp-dir-listing',
    what: 'Directory listing of /wp-includes/, /wp-content/uploads/ (Debian example vhost: Options All)',
    source:
      '/usr/share/doc/wordpress/examples/apache.conf; https://developer.wordpress.org/advanced-administration/security/hardening/ (disable directory browsing)',
    ours: ['directory-listing'],
    wapitiCategory: /./,
    wapitiText: /wp-includes\/|wp-content\/|Index of|listing/i,
  },
  {
    id: 'wp-generator',
    what: 'Generator meta tag names WordPress 6.1.x',
    source: 'OWASP WSTG-INFO-08 (meta generator, WordPress example)',
    ours: ['version-disclosure'],
    oursText: /WordPress/i,
    wapitiCategory: /Fingerprint web/i,
    wapitiText: /"versions": \["\d[^\]]*\], "name": "WordPress"/,
  },
  {
    id: 'wp-cron',
    what: '/wp-cron.php can be triggered by anyone',
    source: 'https://developer.wordpress.org/plugins/cron/hooking-wp-cron-into-the-system-task-scheduler/',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*\/wp-cron\.php"/,
    wapitiCategory: /./,
    wapitiText: /wp-cron\.php/i,
  },
  clickjacking('wp', 'The front page'),
  ...apacheDefaults('wp'),
]

const DOKUWIKI: GroundTruthItem[] = [
  {
    id: 'dw-installer',
    what: '/dokuwiki/install.php still served after setup',
    source: 'https://www.dokuwiki.org/installer ("delete install.php after the installation"); https://www.dokuwiki.org/security',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*\/install\.php"/,
    wapitiCategory: /./,
    wapitiText: /install\.php/i,
  },
  clickjacking('dw', 'Wiki pages'),
  ...apacheDefaults('dw'),
]

const PHPMYADMIN: GroundTruthItem[] = [
  {
    id: 'pma-docs-version',
    what: '/phpmyadmin/doc/html/ served, naming phpMyAdmin 5.2.1',
    source: 'https://docs.phpmyadmin.net/en/latest/setup.html#securing-your-phpmyadmin-installation (serve only what is needed)',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*\/doc\/html\/index\.html"/,
    wapitiCategory: /./,
    wapitiText: /phpmyadmin\/doc/i,
  },
  // phpMyAdmin sends X-Frame-Options: DENY, nosniff and its own CSP.
  ...apacheDefaults('pma', ['nosniff', 'csp']),
]

const MEDIAWIKI: GroundTruthItem[] = [
  {
    id: 'mw-installer',
    what: '/mediawiki/mw-config/ installer reachable after installation (names 1.39.x)',
    source: 'https://www.mediawiki.org/wiki/Manual:Config_script ; https://www.mediawiki.org/wiki/Manual:Security',
    ours: ['web-app-exposure'],
    oursText: /"url":"[^"]*\/mw-config\/"/,
    wapitiCategory: /./,
    wapitiText: /mw-config/i,
  },
  {
    id: 'mw-composer',
    what: '/mediawiki/composer.json lists the dependencies and versions',
    source: 'https://www.mediawiki.org/wiki/Manual:Security (keep non-public files out of the web root)',
    ours: ['exposed-package-manifest'],
    wapitiCategory: /./,
    wapitiText: /composer\.json/i,
  },
  {
    id: 'mw-generator',
    what: 'Generator meta tag names MediaWiki 1.39.x',
    source: 'OWASP WSTG-INFO-08 (meta generator)',
    ours: ['version-disclosure'],
    oursText: /MediaWiki/i,
    wapitiCategory: /Fingerprint web/i,
    wapitiText: /"versions": \["\d[^\]]*\], "name": "MediaWiki"/,
  },
  // Page views only: edit pages send X-Frame-Options: DENY ($wgEditPageFrameOptions), $wgBreakFrames is off.
  clickjacking('mw', 'Wiki pages (https://www.mediawiki.org/wiki/Manual:$wgBreakFrames)'),
  // MediaWiki sends nosniff itself.
  ...apacheDefaults('mw', ['nosniff']),
]

const JUICESHOP: GroundTruthItem[] = [
  {
    id: 'js-ftp',
    what: '/ftp lists confidential files (acquisitions.md, package.json.bak, coupons, incident-support.kdbx)',
    source:
      'https://pwning.owasp-juice.shop/companion-guide/latest/part2/sensitive-data-exposure.html (Confidential Document, Forgotten Developer Backup)',
    ours: ['directory-listing'],
    oursText: /ftp/,
    wapitiCategory: /./,
    wapitiText: /\/ftp/i,
  },
  {
    id: 'js-metrics',
    what: '/metrics (Prometheus) readable by anyone',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/sensitive-data-exposure.html (Exposed Metrics)',
    ours: ['server-info-page'],
    oursText: /metrics/,
    wapitiCategory: /./,
    wapitiText: /\/metrics/i,
  },
  {
    id: 'js-api-docs',
    what: '/api-docs (Swagger UI of the B2B API) served',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/security-misconfiguration.html ; juice-shop swagger.yml',
    // Found only at a well-known path (/api-docs/swagger-ui-init.js), not linked from the page: exposed-api-docs warns (low).
    ours: ['exposed-api-docs'],
    wapitiCategory: /./,
    wapitiText: /api-docs/i,
  },
  {
    id: 'js-error-page',
    what: 'Error pages show the Express stack trace and versions',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/security-misconfiguration.html (Error Handling)',
    ours: ['debug-error-page'],
    wapitiCategory: /Internal Server Error/i,
  },
  {
    id: 'js-cors',
    what: 'Access-Control-Allow-Origin: * on every answer',
    source:
      'juice-shop server.ts (app.use(cors())); https://owasp.org/www-project-web-security-testing-guide/latest/4-Web_Application_Security_Testing/11-Client-side_Testing/07-Testing_Cross_Origin_Resource_Sharing',
    ours: ['cors-wildcard-api', 'cors-credentialed-reflection'],
    wapitiCategory: NONE,
  },
  {
    id: 'js-cookies',
    what: 'Cookies without HttpOnly/SameSite (token, language, welcomebanner_status, cookieconsent_status)',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/broken-authentication.html',
    ours: ['cookie-httponly', 'cookie-samesite'],
    wapitiCategory: /HttpOnly|cookie/i,
  },
  {
    id: 'js-support-logs',
    what: '/support/logs lists the server access logs',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/sensitive-data-exposure.html (Access Log)',
    ours: ['directory-listing', 'exposed-log-files'],
    oursText: /support\/logs/,
    wapitiCategory: /./,
    wapitiText: /support\/logs/i,
  },
  {
    id: 'js-encryptionkeys',
    what: '/encryptionkeys lists jwt.pub and premium.key',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/cryptographic-issues.html',
    ours: ['directory-listing'],
    oursText: /encryptionkeys/,
    wapitiCategory: /./,
    wapitiText: /encryptionkeys/i,
  },
  {
    id: 'js-vulnerable-libs',
    what: 'Front end ships libraries with known vulnerabilities',
    source: 'https://pwning.owasp-juice.shop/companion-guide/latest/part2/vulnerable-components.html',
    ours: ['vulnerable-js-library'],
    wapitiCategory: NONE,
  },
]

export const GROUND_TRUTH: Record<string, GroundTruthItem[]> = {
  wordpress: WORDPRESS,
  dokuwiki: DOKUWIKI,
  phpmyadmin: PHPMYADMIN,
  mediawiki: MEDIAWIKI,
  juiceshop: JUICESHOP,
}

/**
 * Checks whose findings on a plain-HTTP loopback site are about the transport, not the application (every
 * site of this bench is served without TLS): not counted as false alarms on the careful configuration.
 */
export const TRANSPORT_CHECKS = new Set(['https-redirect', 'hsts', 'tls-protocol', 'tls-certificate', 'mixed-content', 'cookie-secure'])
