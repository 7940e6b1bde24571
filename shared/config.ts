// Configuration, parsed once per process from the environment. Nothing else reads process.env.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

const Bool = (def: boolean, doc: string) => Type.Boolean({ default: def, description: doc })
const Int = (def: number, min: number, max: number, doc: string) =>
  Type.Integer({ default: def, minimum: min, maximum: max, description: doc })
const Str = (def: string, doc: string, extra: Record<string, unknown> = {}) => Type.String({ default: def, description: doc, ...extra })

export const ConfigSchema = Type.Object({
  PORT: Int(8787, 0, 65535, 'TCP port the api listens on (0 picks a free one).'),
  HOST: Str('127.0.0.1', 'Address the api binds to. The embedded default stays on loopback.'),
  HEALTH_PORT: Int(8788, 0, 65535, "Port of a crawler-only process's health server (/healthz, /readyz); an api answers them on PORT."),
  HEALTH_HOST: Str('127.0.0.1', "Address a crawler-only process's health server binds to (0.0.0.0 in a container)."),
  POD_NAME: Str('', "On Kubernetes, this pod's name (the downward API): a crawler then marks its pod's deletion cost with its work."),
  POD_NAMESPACE: Str('', "On Kubernetes, this pod's namespace (the downward API)."),
  K8S_API_URL: Str('https://kubernetes.default.svc', 'The Kubernetes API a crawler sets its deletion cost through.'),
  K8S_SERVICE_ACCOUNT_DIR: Str(
    '/var/run/secrets/kubernetes.io/serviceaccount',
    "Where the pod's service-account token and the cluster's CA are.",
  ),
  BASE_URL: Str(
    '',
    'Public base URL in its www form, e.g. https://www.example.com. Empty: http://localhost:PORT; with PORT=0, the URL of the port the api got (on HOST).',
  ),
  DATABASE_URL: Str('', 'PostgreSQL URL. Empty: embedded PGlite on disk under DATA_DIR.'),
  REDIS_URL: Str('', 'Redis URL for job streams, pub/sub and MCP sessions. Empty: in-process implementations.'),
  REDIS_PREFIX: Str('appaudit:', 'Prefix of every Redis key, so several deployments (or test runs) can share one Redis.'),
  DATA_DIR: Str('./data', 'Directory for the embedded database and local state.'),
  ROLE: Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('crawler')], {
    default: 'all',
    description: 'all: api and crawler workers in one process; api: no browsers; crawler: workers only.',
  }),
  ALLOW_PRIVATE_TARGETS: Bool(false, 'Allow scanning loopback and private addresses. Never set in production.'),
  TRUSTED_TARGET_HOSTS: Str('', 'Comma-separated host names or IPs exempt from the private-address rule (staging, tests).'),
  TRUSTED_CERT_SPKI: Str(
    '',
    'Comma-separated base64 SHA-256 SPKI hashes of certificates the browser trusts besides public CAs (private staging CAs, tests).',
  ),
  DNS_SERVERS: Str(
    '',
    'Comma-separated DNS servers (ip or ip:port) that verify_site asks for _appaudit TXT records. Empty: the system resolvers.',
  ),
  CHROMIUM_PATH: Str(
    '',
    "Chromium executable. Empty: Debian's headless shell (/usr/lib/chromium/chromium-headless-shell) when present, else /usr/bin/chromium, else Playwright's own.",
  ),
  WARM_UP: Bool(
    true,
    'Before a crawler says it is ready, scan a page it serves itself on loopback once and open the first page for a real scan, so the first scan is not the slow one.',
  ),
  CRAWL_SHARED_RENDERER: Bool(
    false,
    "A crawl's lanes share one Chromium renderer instead of one each: about 300 MB less at 4 lanes, but one main thread for all of them (fewer pages a minute at 4 lanes). For crawler pods short of memory; scans keep a renderer each.",
  ),
  WARM_SLOTS: Int(
    2,
    1,
    4,
    'Browser pages a crawler keeps opened ahead for its next scans (each a renderer with axe loaded, some 60 MB): with 2, a scan that follows another at once does not wait for one.',
  ),
  SCAN_PAGES_KEPT: Int(
    4,
    0,
    16,
    "Used scan pages a crawler keeps, cleared, for the same account's next scan within 2 minutes (one per account, each a renderer of some 60-100 MB): a scan that finds one skips a new renderer and axe's compile. 0: every scan opens a fresh context.",
  ),
  WORKER_CONCURRENCY: Int(2, 1, 64, 'Scan jobs one crawler process runs at once.'),
  SCAN_TIMEOUT_MS: Int(45_000, 1_000, 600_000, 'How long scan_app waits for a worker before answering scanner_unavailable.'),
  NAV_TIMEOUT_MS: Int(15_000, 500, 120_000, 'Navigation timeout for one page load in the browser.'),
  PROBE_TIMEOUT_MS: Int(8_000, 200, 60_000, 'Timeout for one plain-HTTP probe request.'),
  JOB_MAX_DELIVERIES: Int(3, 1, 20, 'Deliveries of one job before it is failed for good.'),
  JOB_CLAIM_IDLE_MS: Int(60_000, 1_000, 3_600_000, 'A pending job idle this long is taken over from a dead worker.'),
  AUDIT_WORKER_CONCURRENCY: Int(1, 1, 16, 'Audits (whole-site crawls) one crawler process runs at once.'),
  AUDIT_CONCURRENCY: Int(2, 1, 16, 'Pages one audit loads at once.'),
  AUDIT_MAX_DURATION_S: Int(600, 5, 7_200, 'Longest crawl of one audit, and the default of options.maxDurationSeconds.'),
  RECOVERY_INTERVAL_MS: Int(
    30_000,
    200,
    3_600_000,
    'How often a crawler re-dispatches unfinished scans and audits that no live worker holds.',
  ),
  RECOVERY_GRACE_S: Int(
    15,
    0,
    3_600,
    'A scan or audit younger than this may still be on its way into the queue: recovery leaves it alone.',
  ),
  MAX_BODY_BYTES: Int(1_048_576, 1_024, 16_777_216, 'Largest request body /api/mcp accepts (413 above).'),
  MCP_SESSION_TTL_S: Int(86_400, 60, 2_592_000, 'Idle lifetime of an MCP session.'),
  MCP_RATE_LIMIT_SCALE: Type.Number({
    default: 1,
    minimum: 0,
    maximum: 1_000_000,
    description: 'Multiplies the request rates of /api/mcp in shared/rate-limits.ts (per credential and per account); 0 turns them off.',
  }),
  VIEWER_TOKEN_TTL_S: Int(
    7_200,
    60,
    518_400,
    'Least life of a live-viewer link: it lives as long as its audit can run, and the end of its crawl kills it sooner.',
  ),
  OIDC_ISSUER: Str(
    '',
    'Identity provider (OpenID Connect issuer URL) for dashboard sign-in. Empty: the embedded default starts a local development provider; other deployments have no sign-in.',
  ),
  OIDC_CLIENT_ID: Str('', 'Client id of this service at the identity provider.'),
  OIDC_CLIENT_SECRET: Str('', 'Client secret at the identity provider (client_secret_basic). Empty: a public client, PKCE only.'),
  OIDC_SCOPES: Str('openid email profile', 'Scopes asked of the identity provider at sign-in.'),
  LOCAL_IDP_PORT: Int(0, 0, 65535, 'Port of the local development identity provider the embedded default starts (0 picks a free one).'),
  LOCAL_IDP_USER: Str('dev@localhost', 'Sign-in name of the development user of the local identity provider.'),
  LOCAL_IDP_PASSWORD: Str(
    '',
    'Password of the development user. Empty: one made at the first start and kept in DATA_DIR/local-signin-password.',
  ),
  SESSION_TTL_S: Int(604_800, 300, 2_592_000, 'Lifetime of a dashboard session cookie.'),
  TRUSTED_PROXY_HOPS: Int(
    0,
    0,
    10,
    'Reverse proxies in front of the api that append to X-Forwarded-For; 0 uses the peer address as the client IP (rate limits).',
  ),
  STRIPE_SECRET_KEY: Str(
    '',
    'Stripe secret API key (sk_...), used to create Checkout Sessions. Empty: no checkout; the dashboard shows no Upgrade or Buy credits button.',
  ),
  STRIPE_WEBHOOK_SECRET: Str(
    '',
    'Signing secret (whsec_...) of the Stripe webhook endpoint BASE_URL/api/webhooks/stripe. Empty: that route answers 503.',
  ),
  STRIPE_PRICE_LAUNCH: Str('', 'Stripe price id (price_...) of the Launch plan, a recurring price. Empty: Launch is not sold.'),
  STRIPE_PRICE_SCALE: Str('', 'Stripe price id (price_...) of the Scale plan, a recurring price. Empty: Scale is not sold.'),
  STRIPE_PRICE_CREDITS: Str('', 'Stripe price id (price_...) of one credit pack, a one-time price. Empty: credits are not sold.'),
  STRIPE_CREDITS_PER_PACK: Int(10, 1, 10_000, 'Credits that one credit pack (one unit of STRIPE_PRICE_CREDITS) adds.'),
  STRIPE_API_BASE: Str(
    '',
    'Where the Stripe client sends API requests, as scheme://host:port (tests point it at a local stand-in). Empty: Stripe itself.',
    { pattern: '^(https?://[^/?#]+/?)?$' },
  ),
  BILLING_GRACE_DAYS: Int(
    7,
    0,
    60,
    'Days a paid plan stays after a failed renewal (invoice.payment_failed) before the account is on free.',
  ),
  ALLOWED_HOSTS: Str('', "Extra Host header values accepted besides BASE_URL's host and loopback names (comma-separated)."),
  CRON_SECRET: Str(
    '',
    'Secret a scheduler sends as Authorization: Bearer ... to POST /api/cron/* (use 32+ random bytes). Empty: those routes answer 404; the embedded default runs the jobs on its own timer.',
  ),
  SECRETS_KEY: Str(
    '',
    'Key that encrypts stored secrets (a connected repository\'s token, an authenticated audit\'s credentials) with AES-256-GCM: 32 random bytes in base64 (openssl rand -base64 32). Empty: the embedded default makes one in DATA_DIR; with DATABASE_URL, connecting a repository and audit_authenticated are refused. Rotation: README, "Patches and connected repositories".',
  ),
  SECRETS_KEY_PREVIOUS: Str(
    '',
    'During a key rotation only: the previous SECRETS_KEY (or several, comma-separated), still accepted for decryption until `bun api/patches/rotate-secrets.ts` has re-encrypted every secret.',
  ),
  GITHUB_HOST: Str(
    'github.com',
    "Host (with its port, if any) of the GitHub whose repositories open pull requests through GITHUB_API_URL; repositories on other hosts use that host's GitHub Enterprise Server API, https://HOST/api/v3.",
    { pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$' },
  ),
  GITHUB_API_URL: Str(
    'https://api.github.com',
    'REST API base through which create_patch opens pull requests for repositories on GITHUB_HOST (POST {base}/repos/{owner}/{repo}/pulls). Tests point it at a local stand-in.',
    { pattern: '^https?://[^/?#]+(/[^?#]*)?$' },
  ),
  LOG_LEVEL: Type.Union([Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')], {
    default: 'info',
    description: 'Least severe log level printed.',
  }),
})

export type Config = Static<typeof ConfigSchema> & {
  /** BASE_URL with its default applied, without a trailing slash. */
  baseUrl: string
  trustedTargetHosts: string[]
  allowedHosts: string[]
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  }
}

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean)

type Env = Record<string, string | undefined>

/** The fields of `schema` read from `env` (an empty value counts as unset), with defaults and conversions, and every problem. */
function readEnv<S extends TSchema>(schema: S, env: Env): { parsed: Static<S>; problems: string[] } {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys((schema as unknown as { properties: Record<string, TSchema> }).properties)) {
    const v = env[key]
    if (v !== undefined && v !== '') raw[key] = v
  }
  const converted = Value.Convert(schema, Value.Default(schema, raw))
  const problems = [...Value.Errors(schema, converted)].map(
    (e) => `${e.path.slice(1) || '(root)'}: ${e.message} (got ${JSON.stringify(raw[e.path.slice(1)])})`,
  )
  return { parsed: converted as Static<S>, problems }
}

/** Parses the environment once; throws ConfigError naming every bad field. `overrides` win over `env` (an entry point's fixed role). */
export function loadConfig(env: Env = process.env, overrides: Env = {}): Config {
  const { parsed, problems } = readEnv(ConfigSchema, { ...env, ...overrides })
  let baseUrl = parsed.BASE_URL || `http://localhost:${parsed.PORT}`
  try {
    const u = new URL(baseUrl)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') problems.push(`BASE_URL: must be http or https`)
    baseUrl = u.origin + u.pathname.replace(/\/+$/, '')
  } catch {
    problems.push(`BASE_URL: not a URL (got ${JSON.stringify(parsed.BASE_URL)})`)
  }
  if (problems.length) throw new ConfigError(problems)
  return {
    ...parsed,
    baseUrl,
    trustedTargetHosts: list(parsed.TRUSTED_TARGET_HOSTS),
    allowedHosts: list(parsed.ALLOWED_HOSTS),
  }
}

/** For entry points: the configuration, or every bad field on stderr and exit status 2. */
export function loadConfigOrExit(overrides: Env = {}, env: Env = process.env): Config {
  return orExit(() => loadConfig(env, overrides))
}

function orExit<T>(load: () => T): T {
  try {
    return load()
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    console.error(e.message)
    process.exit(2)
  }
}

/** `server/cron-caller.ts`, the scheduler of docker-compose.yml and of the CronJobs: whom to call, with what, how often. */
export const CronCallerSchema = Type.Object({
  API_URL: Str('http://api:8787', 'Base URL of the api whose /api/cron/* jobs are called.'),
  CRON_SECRET: Str('', "The api's CRON_SECRET (16 characters or more).", { minLength: 16 }),
  CRON_EVERY_S: Int(300, 30, 86_400, 'Seconds between two rounds of calls.'),
})
export type CronCallerConfig = Static<typeof CronCallerSchema>

/** `server/local-idp.ts`: the development OpenID provider run on its own (docker-compose.yml). Never for production. */
export const LocalIdpSchema = Type.Object({
  LOCAL_IDP_HOST: Str('0.0.0.0', 'Address the provider binds to.'),
  LOCAL_IDP_PORT: Int(8790, 0, 65535, 'Port the provider listens on.'),
  LOCAL_IDP_ISSUER: Str('', 'Its issuer URL. Empty: http://localhost:LOCAL_IDP_PORT.'),
  LOCAL_IDP_USER: Str('dev@localhost', 'The one development user.'),
  LOCAL_IDP_PASSWORD: Str('', "The development user's password (8 characters or more).", { minLength: 8 }),
  OIDC_CLIENT_ID: Str('appaudit-dashboard', "The dashboard's client id."),
  OIDC_CLIENT_SECRET: Str('', "The dashboard's client secret."),
  BASE_URL: Str('http://localhost:8787', "The dashboard's base URL, for its sign-in callback."),
})
export type LocalIdpConfig = Static<typeof LocalIdpSchema>

/** A side program's configuration (CronCallerSchema, LocalIdpSchema), or every bad field on stderr and exit status 2. */
export function loadToolConfigOrExit<S extends TSchema>(schema: S, env: Env = process.env): Static<S> {
  return orExit(() => {
    const { parsed, problems } = readEnv(schema, env)
    if (problems.length) throw new ConfigError(problems)
    return parsed
  })
}

/** One line of doc per field, for the README and --help. */
export function describeConfig(): Array<{ name: string; default: unknown; doc: string }> {
  return Object.entries(ConfigSchema.properties as Record<string, TSchema>).map(([name, s]) => ({
    name,
    default: s.default,
    doc: String(s.description ?? ''),
  }))
}
