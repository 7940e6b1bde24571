// Paths the gatherer fetches over plain HTTP once per scan; checks read them from artifacts.probes.
// Every path costs one request per scan, so the list stays within PROBE_BUDGET (below). Checks refer to
// the named groups, never to repeated string literals.

/** A path no real app serves: what the app answers for "anything". SPAs answer 200 with index.html. */
export const BASELINE_PROBE = '/__appaudit_probe_4f1c9e2b__'

/** Dotenv files and the copies editors and deploy scripts leave next to them. */
export const ENV_PROBES = [
  '/.env',
  '/.env.local',
  '/.env.production',
  '/.env.development',
  '/.env.backup',
  '/.env.bak',
  '/.env.save',
] as const

/** A Git working copy: its config (remotes, sometimes with credentials) and HEAD. */
export const GIT_PROBES = ['/.git/config', '/.git/HEAD'] as const

/** Instruction files for coding agents, which describe the code base, its commands and sometimes its secrets. */
export const AGENT_INSTRUCTION_PROBES = [
  '/CLAUDE.md',
  '/AGENTS.md',
  '/.cursorrules',
  '/.cursor/rules',
  '/.windsurfrules',
  '/.github/copilot-instructions.md',
] as const

/** Package manifests (dependency lists) and the npm client config (registry tokens). */
export const MANIFEST_PROBES = ['/package.json', '/composer.json', '/.npmrc'] as const

/** Build and deployment configs of common frameworks, and a WordPress config backup. */
export const FRAMEWORK_CONFIG_PROBES = [
  '/next.config.js',
  '/vite.config.js',
  '/webpack.config.js',
  '/docker-compose.yml',
  '/wp-config.php.bak',
] as const

/**
 * Common static directories, fetched with a trailing slash to see whether the server lists them; WordPress's
 * /wp-includes/ is listed by Apache wherever Indexes is on (Debian's example WordPress host has Options All).
 */
export const DIRECTORY_PROBES = ['/assets/', '/static/', '/uploads/', '/wp-includes/'] as const

/** Database dumps, site archives and backup copies of config files left in the web root. */
export const BACKUP_PROBES = [
  '/backup.sql',
  '/dump.sql',
  '/db.sql',
  '/database.sql',
  '/backup.zip',
  '/backup.tar.gz',
  '/site.tar.gz',
  '/www.zip',
  '/config.php.bak',
  '/config.php~',
  '/settings.py.bak',
  '/web.config.bak',
] as const

/** The status and information pages of web servers and runtimes, and framework debug and profiler endpoints. */
export const SERVER_INFO_PROBES = [
  '/server-status',
  '/server-info',
  '/nginx_status',
  '/phpinfo.php',
  '/info.php',
  '/console',
  '/_profiler/',
  '/telescope',
  '/actuator/env',
  '/rails/info/properties',
  '/debug/pprof/',
  '/elmah.axd',
] as const

/** What operating systems, editors and version control other than Git leave in a folder. */
export const METADATA_PROBES = [
  '/.DS_Store',
  '/.svn/entries',
  '/.svn/wc.db',
  '/.hg/requires',
  '/.hg/hgrc',
  '/.bzr/branch-format',
  '/.idea/workspace.xml',
  '/.vscode/sftp.json',
  '/.vscode/settings.json',
  '/.index.php.swp',
  '/.index.html.swp',
] as const

/** Container and CI definitions, cloud and cluster credentials, password files and private keys. */
export const INFRA_PROBES = [
  '/Dockerfile',
  '/.gitlab-ci.yml',
  '/.travis.yml',
  '/.circleci/config.yml',
  '/bitbucket-pipelines.yml',
  '/Jenkinsfile',
  '/.aws/credentials',
  '/.docker/config.json',
  '/.kube/config',
  '/terraform.tfstate',
  '/.htpasswd',
  '/id_rsa',
  '/.ssh/id_rsa',
] as const

/** Logs that package managers, frameworks, PHP and servers write next to the code. */
export const LOG_PROBES = [
  '/npm-debug.log',
  '/yarn-error.log',
  '/storage/logs/laravel.log',
  '/error_log',
  '/debug.log',
  '/wp-content/debug.log',
  '/logs/error.log',
] as const

/**
 * Folders Node apps list with serve-index (OWASP Juice Shop's /ftp, /encryptionkeys and /support/logs: documents
 * and backups, keys, access logs), fetched without a trailing slash as the apps link them.
 */
export const NODE_LISTING_PROBES = ['/ftp', '/encryptionkeys', '/support/logs'] as const

/** A Prometheus metrics exposition (prom-client's default path): runtime, versions and traffic of the app. */
export const METRICS_PROBES = ['/metrics'] as const

export const PROBE_PATHS: readonly string[] = [
  BASELINE_PROBE,
  ...ENV_PROBES,
  ...GIT_PROBES,
  ...AGENT_INSTRUCTION_PROBES,
  ...MANIFEST_PROBES,
  ...FRAMEWORK_CONFIG_PROBES,
  ...DIRECTORY_PROBES,
  ...BACKUP_PROBES,
  ...SERVER_INFO_PROBES,
  ...METADATA_PROBES,
  ...INFRA_PROBES,
  ...LOG_PROBES,
  ...NODE_LISTING_PROBES,
  ...METRICS_PROBES,
]

/**
 * Requests one scan makes at most for probes: every path above once, plus the source maps the page's scripts
 * name (GATHER_LIMITS.sourceMaps) and the directory-like links it names (GATHER_LIMITS.directoryLinks). Stated
 * in the report; a test keeps PROBE_PATHS within it.
 */
export const PROBE_BUDGET = 96

/**
 * API probes: only what the page reveals, plus a few well-known API documents. Sent after the page has
 * loaded (crawler/gather/api-probes.ts), never a write: GET, OPTIONS, or one POST of the GraphQL
 * introspection query. Counted apart from PROBE_BUDGET (API_PROBE_BUDGET).
 */
/** swagger-ui-express (Express apps' usual Swagger UI at /api-docs/) embeds the whole document in this script. */
export const OPENAPI_PROBES = ['/swagger.json', '/openapi.json', '/v3/api-docs', '/api-docs', '/api-docs/swagger-ui-init.js'] as const
export const GRAPHQL_PROBES = ['/graphql', '/api/graphql'] as const
export const API_PROBE_LIMITS = {
  /** API paths of the page's traffic probed for CORS, each with a foreign Origin and with "null". */
  corsPaths: 4,
  /** GraphQL endpoints sent the introspection query: the page's own and GRAPHQL_PROBES, at most this many. */
  graphql: 3,
  /** OpenAPI/Swagger documents linked from the page, fetched besides OPENAPI_PROBES. */
  openapiLinks: 2,
  /** API prefixes of the page's traffic (/api, /rest) sent one GET of a path that cannot exist: its error page. */
  errorPaths: 2,
}
/** The last segment of the nonsense path asked under an API prefix (/api/<this>): no API serves it. */
export const API_ERROR_PROBE = '__appaudit_probe_7d3a0c51__'
/** Requests one scan makes at most for API probes. */
export const API_PROBE_BUDGET =
  API_PROBE_LIMITS.corsPaths * 2 +
  API_PROBE_LIMITS.graphql +
  API_PROBE_LIMITS.openapiLinks +
  OPENAPI_PROBES.length +
  API_PROBE_LIMITS.errorPaths
