// Status and information pages of web servers and runtimes, and framework debug, profiler and admin-console
// endpoints, at their well-known paths (probed) or as the page scanned. Each is recognised by the markup the
// software itself writes; these are pages, so the HTML gate of exposed files does not apply here.

import { BASELINE_PROBE, METRICS_PROBES, SERVER_INFO_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { ownAnswers } from '../util/probe.ts'
import { worseSeverity } from '../../report/ranking.ts'
import { secretNames } from './exposed-env-file.ts'

const SCAN = 65_536
const MAX_PAGES = 10

export interface InfoPage {
  software: string
  page: string
  url: string
  status: number
  severity: Severity
  /** What the page gave away, as names and versions (never values of secrets). */
  details: Record<string, unknown>
}

interface Rule {
  software: string
  page: string
  severity: Severity
  /** Cheap test first: one of these substrings must be in the body before any marker runs. */
  gate: string[]
  /** Every marker must match in the first SCAN characters. */
  markers: RegExp[]
  details?(body: string): { details: Record<string, unknown>; severity?: Severity }
}

const first = (re: RegExp, body: string) => {
  const m = re.exec(body)
  return m ? clip(m[1]!.replace(/<[^>]{0,200}>/g, '').trim(), 120) : null
}

/** Environment variable names phpinfo() lists under $_SERVER / $_ENV / Environment whose names look secret. */
function phpinfoSecrets(body: string): string[] {
  const names = new Set<string>()
  for (const m of body.matchAll(
    /<td class="e">\s*(?:\$_(?:SERVER|ENV)\['([A-Z][A-Z0-9_]{1,80})'\]|([A-Z][A-Z0-9_]{1,80}))\s*<\/td>\s*<td class="v">([^<]{1,400})/g,
  )) {
    const name = m[1] ?? m[2]!
    if (m[3]!.trim() !== '' && m[3]!.trim() !== '<i>no value</i>') names.add(name)
    if (names.size > 200) break
  }
  return secretNames([...names])
    .filter((n) => !/^(?:PHP_AUTH_|HTTP_AUTHORIZATION$|AUTH_TYPE$)/.test(n))
    .slice(0, 20)
}

const METRIC_NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const METRIC_TYPE = new RegExp(
  `^# TYPE (${METRIC_NAME}) (?:counter|gauge|histogram|summary|untyped|unknown|info|stateset|gaugehistogram)[ \\t]*\\r?$`,
  'gm',
)

/** What a Prometheus exposition reveals: how many metric families, a few names, the runtime versions it labels. */
function metricsDetails(body: string) {
  const families = [...body.matchAll(METRIC_TYPE)].map((m) => m[1]!)
  const label = (metric: string, name: string) => first(new RegExp(`^${metric}\\{[^}\\n]{0,500}\\b${name}="([^"\\n]{1,60})"`, 'm'), body)
  const versions = Object.fromEntries(
    [
      ['node', label('nodejs_version_info', 'version')],
      ['go', label('go_info', 'version')],
      ['python', label('python_info', 'version')],
    ].filter(([, v]) => v !== null),
  )
  return {
    details: {
      format: /^# EOF\s*$/m.test(body) ? 'OpenMetrics' : 'Prometheus text',
      families: families.length,
      names: families.slice(0, 8),
      ...(Object.keys(versions).length > 0 ? { versions } : {}),
    },
  }
}

const RULES: Rule[] = [
  {
    software: 'Apache httpd',
    page: 'mod_status (server-status)',
    gate: ['Apache Server Status'],
    severity: 'medium',
    markers: [/<title>Apache Status<\/title>/i, /<h1>Apache Server Status for /i],
    details: (body) => {
      // With ExtendedStatus the table lists each worker's client address and request line.
      const requests =
        /<th>Client<\/th>|<th>Req<\/th>/i.test(body) &&
        /<td[^>]*>\s*(?:GET|POST|HEAD|PUT|DELETE|OPTIONS)\s+\/[^<]{0,300}\s+HTTP\/\d/i.test(body)
      return {
        details: { serverVersion: first(/Server Version:\s*([^<\n]{1,200})/i, body), extendedStatus: requests },
        ...(requests ? { severity: 'high' as const } : {}),
      }
    },
  },
  {
    software: 'Apache httpd',
    page: 'mod_info (server-info)',
    gate: ['Apache Server Information'],
    severity: 'medium',
    markers: [/<title>Server Information<\/title>/i, /Apache Server Information/i],
    details: (body) => ({
      details: {
        serverVersion: first(/Server Version:\s*(?:<\/strong>|<\/b>)?\s*(?:<tt>)?([^<\n]{1,200})/i, body),
        modules: [...body.slice(0, SCAN).matchAll(/<a name="([a-z_]{1,60}\.c)">/gi)].length,
      },
    }),
  },
  {
    software: 'nginx',
    page: 'stub_status',
    gate: ['Active connections:'],
    severity: 'low',
    markers: [/^Active connections: \d+\s*\r?\nserver accepts handled requests\r?\n\s*\d+ \d+ \d+/],
  },
  {
    software: 'PHP',
    page: 'phpinfo()',
    gate: ['phpinfo()', 'PHP Version'],
    severity: 'medium',
    markers: [
      /<title>(?:PHP [\d.]+ - )?phpinfo\(\)<\/title>|<h1 class="p">PHP Version [\d.]+/i,
      /<td class="e">\s*(?:System|Server API|Loaded Configuration File)\s*<\/td>/i,
    ],
    details: (body) => {
      const secrets = phpinfoSecrets(body)
      return {
        details: {
          phpVersion: first(/PHP Version\s*([\d.]+[\w.-]*)/i, body),
          documentRoot: first(/<td class="e">\s*DOCUMENT_ROOT\s*<\/td>\s*<td class="v">([^<]{1,300})/i, body),
          ...(secrets.length > 0 ? { secretVariables: secrets, values: 'redacted' } : {}),
        },
        ...(secrets.length > 0 ? { severity: 'high' as const } : {}),
      }
    },
  },
  {
    software: 'Werkzeug',
    page: 'interactive debugger console',
    gate: ['CONSOLE_MODE', 'Werkzeug Debugger'],
    severity: 'high',
    markers: [/<title>Console \/\/ Werkzeug Debugger<\/title>|CONSOLE_MODE\s*=\s*true/i, /Werkzeug|EVALEX/],
    details: (body) => {
      // Without a PIN (EVALEX_TRUSTED true, or PIN security off) anyone can run Python on the server.
      const locked = /\bEVALEX_TRUSTED\s*=\s*false\b/.test(body) || /console is locked/i.test(body)
      return { details: { pinLocked: locked }, ...(locked ? {} : { severity: 'critical' as const }) }
    },
  },
  {
    software: 'Symfony',
    page: 'web profiler',
    gate: ['Symfony Profiler', 'sf-toolbar'],
    severity: 'high',
    markers: [/<title>[^<]{0,100}Symfony Profiler<\/title>|id="sf-toolbar-|class="sf-toolbar/i],
    details: (body) => ({ details: { symfonyVersion: first(/Symfony\s+v?(\d+\.\d+\.\d+)/, body) } }),
  },
  {
    software: 'Laravel',
    page: 'Telescope',
    gate: ['window.Telescope'],
    severity: 'high',
    markers: [/<title>[^<]{0,100}Telescope[^<]{0,100}<\/title>/i, /window\.Telescope\s*=/],
  },
  {
    software: 'Spring Boot',
    page: 'actuator env endpoint',
    gate: ['propertySources'],
    severity: 'high',
    markers: [/^\s*\{\s*"activeProfiles"\s*:\s*\[/, /"propertySources"\s*:\s*\[/],
    details: (body) => ({
      details: { propertySources: [...body.slice(0, SCAN).matchAll(/"name"\s*:\s*"([^"]{1,120})"\s*,\s*"properties"/g)].length },
    }),
  },
  {
    software: 'Ruby on Rails',
    page: 'rails/info/properties',
    gate: ['Rails version'],
    severity: 'medium',
    markers: [
      /<td[^>]{0,60}>\s*Rails version\s*<\/td>/i,
      /<td[^>]{0,60}>\s*Ruby version\s*<\/td>/i,
      /<td[^>]{0,60}>\s*Application root\s*<\/td>/i,
    ],
    details: (body) => ({ details: { railsVersion: first(/Rails version\s*<\/td>\s*<td[^>]*>([^<]{1,40})/i, body) } }),
  },
  {
    software: 'Go',
    page: 'net/http/pprof index',
    gate: ['/debug/pprof/'],
    severity: 'medium',
    markers: [/<title>\/debug\/pprof\/<\/title>/i, /Types of profiles available/i],
  },
  {
    // prom-client, client_golang, client_python...: text/plain; version=0.0.4 or application/openmetrics-text.
    software: 'Prometheus',
    page: 'metrics exposition',
    gate: ['# TYPE '],
    severity: 'medium',
    markers: [
      new RegExp(`^\\s*(?:# (?:HELP|TYPE) ${METRIC_NAME} |${METRIC_NAME}(?:\\{| ))`),
      new RegExp(METRIC_TYPE.source, 'm'),
      new RegExp(`^${METRIC_NAME}(?:\\{[^}\\n]{0,2000}\\})?[ \\t]+(?:[-+]?\\d[\\d.]*(?:e[-+]?\\d+)?|NaN|[-+]Inf)\\b`, 'im'),
    ],
    details: metricsDetails,
  },
  {
    software: 'ASP.NET',
    page: 'ELMAH error log',
    gate: ['ELMAH'],
    severity: 'high',
    markers: [/<title>\s*Error log for [^<]{1,200}<\/title>/i, /Powered by <a[^>]{0,200}>\s*ELMAH|ELMAH \d+\.\d+/i],
  },
]

/** The information page this answer is, or null. */
export function findInfoPage(answer: { url: string; status: number; body: string }): InfoPage | null {
  const head = answer.body.slice(0, SCAN)
  if (head.length < 20) return null
  for (const rule of RULES) {
    if (!rule.gate.some((g) => head.includes(g)) || !rule.markers.every((m) => m.test(head))) continue
    const more = rule.details?.(head)
    return {
      software: rule.software,
      page: rule.page,
      url: answer.url,
      status: answer.status,
      severity: more?.severity ?? rule.severity,
      details: more?.details ?? {},
    }
  }
  return null
}

export const serverInfoPage = defineCheck({
  id: 'server-info-page',
  category: 'exposure',
  title: 'No server status, runtime information or debug console pages are reachable',
  failTitle: 'Server status, runtime information or debug console pages are reachable',
  description: `Looks at the page scanned and at ${[...SERVER_INFO_PROBES, ...METRICS_PROBES].join(', ')} for the status and information pages of web servers and runtimes, Prometheus metrics, and the debug, profiler and console endpoints of frameworks.`,
  why:
    'These pages were made for the operator: phpinfo() lists the configuration, paths and often environment variables with secrets; ' +
    'Apache\u2019s server-status shows every visitor\u2019s address and the URLs they request (tokens in query strings included); ' +
    'server-info shows the whole configuration; a Werkzeug console runs Python on the server; Symfony\u2019s profiler, Laravel ' +
    'Telescope and Spring\u2019s actuator show requests, sessions and settings.',
  confirmation:
    'Recognised by the markup the software writes, never by status code or path: Apache "Apache Server Status for" (high when ' +
    'ExtendedStatus lists request lines) and "Apache Server Information", nginx stub_status ("Active connections: N" then "server ' +
    'accepts handled requests"), phpinfo() (its title or "PHP Version" heading and its e/v table; high when environment variables ' +
    'with secret-looking names have values), the Werkzeug console (critical when no PIN locks it), Symfony\u2019s profiler or ' +
    'toolbar, Laravel Telescope, Spring Boot /actuator/env ("activeProfiles" and "propertySources"), Rails /rails/info/properties, Go ' +
    'pprof\u2019s index, ELMAH\u2019s error log, and a Prometheus metrics exposition (prom-client\u2019s /metrics: "# TYPE name ' +
    'counter|gauge|..." lines and samples, as text/plain; version=0.0.4 or OpenMetrics; medium: runtime versions, memory, ' +
    'traffic and the app\u2019s own counters). An answer that is the same as for a path that cannot exist is not read. Not ' +
    'findings: a 403 or 404 page at those paths, a page that only mentions them, an admin login page. Evidence: URL, software, ' +
    'versions and names it revealed, never secret values.',
  severity: 'medium',
  fix: {
    generic:
      'Remove the pages or restrict them to the operators: delete phpinfo() files, turn off debug mode and the debug console, ' +
      'disable profilers in production, limit status pages to localhost or an admin network, and expose only the health endpoints ' +
      'of Spring Boot actuator (management.endpoints.web.exposure.include=health).',
    vercel:
      'Production deployments should run no debug server or profiler: set production environment variables (APP_ENV=production, ' +
      'APP_DEBUG=false, FLASK_DEBUG unset) and delete info.php/phpinfo.php files from the project.',
    netlify:
      'Delete phpinfo files from the publish directory, and turn off debug and profiler settings in the production context of the ' +
      'site\u2019s environment variables.',
    nextjs:
      'Next.js has no such pages itself: they come from a proxied backend or files in public/. Remove the files and turn off the ' +
      'backend\u2019s debug endpoints in production.',
    nginx:
      'Limit stub_status and proxied status pages to the operators:\nlocation = /nginx_status {\n  stub_status;\n  allow 127.0.0.1;\n  ' +
      'deny all;\n}\nlocation ~ ^/(?:server-status|server-info|phpinfo\\.php|info\\.php|console|_profiler|telescope|actuator)(?:/|$) {\n  ' +
      'return 404;\n}',
    apache:
      'Limit mod_status and mod_info to localhost (or disable them: a2dismod info):\n<Location "/server-status">\n  SetHandler ' +
      'server-status\n  Require local\n</Location>\n<Location "/server-info">\n  SetHandler server-info\n  Require local\n</Location>',
    cloudflare:
      'Remove or restrict the pages at the origin. Meanwhile: Security > WAF > Custom rules > (http.request.uri.path in ' +
      '{"/server-status" "/server-info" "/phpinfo.php" "/info.php" "/console"} or starts_with(http.request.uri.path, "/_profiler") ' +
      'or starts_with(http.request.uri.path, "/actuator")) -> Block.',
    django: 'Run with DEBUG = False and remove django-debug-toolbar and similar apps from INSTALLED_APPS in production settings.',
    express:
      'Do not mount debugging or status middleware (express-status-monitor, a REPL route) in production, or protect it with authentication.',
    rails: 'rails/info is only served in development: run production with RAILS_ENV=production.',
  },
  requires: ['mainResponse', 'probes'],
  run: ({ mainResponse, probes }) => {
    const pages: InfoPage[] = []
    const seen = new Set<string>()
    let checked = 0
    for (const answer of ownAnswers(mainResponse, probes)) {
      if (seen.has(answer.url)) continue
      seen.add(answer.url)
      checked++
      const page = findInfoPage(answer)
      if (page && pages.length < MAX_PAGES) pages.push(page)
    }
    if (pages.length === 0)
      return {
        status: 'pass',
        evidence: { checked, paths: [...SERVER_INFO_PROBES, ...METRICS_PROBES] },
        summary: `No server status, runtime information or debug console page among ${checked} answer(s).`,
      }
    const severity = pages.reduce<Severity>((s, p) => worseSeverity(s, p.severity), 'low')
    const top = [...pages].sort((a, b) => (worseSeverity(a.severity, b.severity) === a.severity ? -1 : 1))[0]!
    return {
      status: 'fail',
      severity,
      evidence: { url: top.url, pages },
      summary: `${top.url} is the ${top.software} ${top.page}${pages.length > 1 ? `; ${pages.length - 1} more such page(s)` : ''}.`,
    }
  },
})
