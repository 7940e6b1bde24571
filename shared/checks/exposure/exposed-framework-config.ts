// Build and deployment configs (next.config.js, vite.config.js, webpack.config.js, docker-compose.yml) and a
// WordPress config backup (wp-config.php.bak) served with the site.

import { FRAMEWORK_CONFIG_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { scanScripts } from '../util/secrets.ts'
import { secretNames } from './exposed-env-file.ts'
import { worseSeverity } from '../../report/ranking.ts'

const MAX_LINES = 2_000
const MAX_NAMES = 30

type JsTool = 'next' | 'vite' | 'webpack'

const JS_EXPORT = /\bmodule\.exports\s*=|\bexport\s+default\b|\bexports\.default\s*=/
const JS_MARKERS: Record<JsTool, RegExp> = {
  next: /@type\s*\{\s*import\(\s*['"]next['"]\s*\)|\bnextConfig\b|\bwithBundleAnalyzer\b|\bfrom\s+['"]next['"]/,
  vite: /\bdefineConfig\s*\(|\bfrom\s+['"]vite['"]|@vitejs\/plugin-/,
  webpack: /\brequire\(\s*['"]webpack['"]\s*\)|\bfrom\s+['"]webpack['"]|\bHtmlWebpackPlugin\b|@type\s*\{\s*import\(\s*['"]webpack['"]\s*\)/,
}
const JS_KEYS: Record<JsTool, readonly string[]> = {
  next: [
    'reactStrictMode',
    'images',
    'experimental',
    'rewrites',
    'redirects',
    'headers',
    'output',
    'basePath',
    'trailingSlash',
    'swcMinify',
    'poweredByHeader',
    'env',
    'webpack',
    'i18n',
    'transpilePackages',
    'compiler',
    'eslint',
    'typescript',
    'productionBrowserSourceMaps',
  ],
  vite: ['plugins', 'server', 'build', 'resolve', 'base', 'define', 'preview', 'optimizeDeps', 'css', 'envPrefix', 'publicDir', 'root'],
  webpack: ['entry', 'output', 'module', 'plugins', 'resolve', 'devServer', 'optimization', 'mode', 'devtool', 'target', 'externals'],
}
const KEY = /(?:^|[\s{,(])([A-Za-z_$][\w$]{0,40})\s*(?::|\()/g

export interface JsConfigShape {
  kind: 'js-config'
  tool: JsTool
  keys: string[]
}

/** A JavaScript config module: an export plus config keys of the tool (two, or one with a tool marker). */
export function readJsConfig(tool: JsTool, body: string): JsConfigShape | null {
  const head = body.slice(0, 32_768)
  if (!JS_EXPORT.test(head)) return null
  const wanted = new Set(JS_KEYS[tool])
  const keys = new Set<string>()
  for (const m of head.matchAll(KEY)) {
    if (wanted.has(m[1]!)) keys.add(m[1]!)
    if (keys.size >= 15) break
  }
  if (keys.size >= 2 || (keys.size >= 1 && JS_MARKERS[tool].test(head))) return { kind: 'js-config', tool, keys: [...keys] }
  return null
}

export interface ComposeShape {
  kind: 'docker-compose'
  services: string[]
  /** Environment variables with secret-looking names and a literal value (not ${VAR}), names only. */
  secretNames: string[]
}

const ENV_ENTRY = /^\s+(?:-\s+)?["']?([A-Z][A-Z0-9_]{0,100})["']?\s*[:=]\s*(.*)$/
const FROM_ENV = /^["']?\$\{?[A-Za-z_]/

/** docker-compose.yml: a top-level services: key with indented service keys (image, build, ports, ...). */
export function readCompose(body: string): ComposeShape | null {
  const lines = body.split(/\r?\n/, MAX_LINES)
  const start = lines.findIndex((l) => /^services:\s*(?:#.*)?$/.test(l))
  if (start === -1 || !/^\s+(?:image|build|ports|environment|volumes|command|depends_on|container_name)\s*:/m.test(body.slice(0, 65_536)))
    return null
  const services: string[] = []
  let indent: string | null = null
  for (let i = start + 1; i < lines.length && services.length < MAX_NAMES; i++) {
    const line = lines[i]!
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue
    if (!/^\s/.test(line)) break
    const m = /^(\s+)([\w.-]{1,100}):\s*(?:#.*)?$/.exec(line)
    if (!m) continue
    if (indent === null) indent = m[1]!
    if (m[1] === indent) services.push(m[2]!)
  }
  if (services.length === 0) return null
  const secrets = new Set<string>()
  for (const line of lines) {
    const m = ENV_ENTRY.exec(line.length <= 4_000 ? line : '')
    if (!m) continue
    const value = m[2]!.trim().replace(/^["']|["']$/g, '')
    if (value !== '' && !FROM_ENV.test(value) && secretNames([m[1]!]).length > 0) secrets.add(m[1]!)
    if (secrets.size >= MAX_NAMES) break
  }
  return { kind: 'docker-compose', services, secretNames: [...secrets] }
}

export interface WpConfigShape {
  kind: 'wp-config'
  constants: string[]
  /** DB_PASSWORD or an auth key/salt with a non-empty literal value. */
  credentials: boolean
}

const WP_DEFINE = /\bdefine\s*\(\s*['"]([A-Z][A-Z0-9_]{1,60})['"]\s*,\s*(?:'([^'\n]{0,500})'|"([^"\n]{0,500})"|([^)\n]{0,200}))/g
const WP_CREDENTIAL = /^(?:DB_PASSWORD|(?:SECURE_)?AUTH_(?:KEY|SALT)|LOGGED_IN_(?:KEY|SALT)|NONCE_(?:KEY|SALT))$/

/** wp-config.php (a backup of it): define('DB_NAME', ...) and friends, or $table_prefix with a define. */
export function readWpConfig(body: string): WpConfigShape | null {
  const constants: string[] = []
  let credentials = false
  for (const m of body.matchAll(WP_DEFINE)) {
    const name = m[1]!
    if (!constants.includes(name) && constants.length < MAX_NAMES) constants.push(name)
    const value = (m[2] ?? m[3] ?? '').trim()
    if (WP_CREDENTIAL.test(name) && value !== '' && !/^put your unique phrase here$/i.test(value)) credentials = true
  }
  const db = constants.some((c) => c.startsWith('DB_'))
  if (!db && !(constants.length > 0 && /\$table_prefix\s*=/.test(body))) return null
  return { kind: 'wp-config', constants, credentials }
}

type Found = JsConfigShape | ComposeShape | WpConfigShape

function readConfig(path: string, body: string): Found | null {
  if (path.endsWith('/docker-compose.yml')) return readCompose(body)
  if (path.endsWith('/wp-config.php.bak')) return readWpConfig(body)
  const tool = (['next', 'vite', 'webpack'] as const).find((t) => path.endsWith(`/${t}.config.js`))
  return tool ? readJsConfig(tool, body) : null
}

export const exposedFrameworkConfig = defineCheck({
  id: 'exposed-framework-config',
  category: 'exposure',
  title: 'No build, deployment or WordPress config files are served',
  failTitle: 'Build, deployment or WordPress config files are served',
  description: `Reads what the site returns for ${FRAMEWORK_CONFIG_PROBES.join(', ')} and judges whether each is that config file.`,
  why:
    'Build configs reveal internal hosts, rewrites to private services and environment values baked into the build; a docker-compose ' +
    'file lists the services, ports and often their passwords; a wp-config.php backup is served as plain text (not run as PHP) and ' +
    'hands out the database password and the auth salts.',
  confirmation:
    'Confirmed by content, never by status code: next/vite/webpack configs must be a JavaScript module (module.exports or export ' +
    'default) with config keys of that tool (e.g. reactStrictMode, images, rewrites; plugins, server, build; entry, output, module); ' +
    'docker-compose.yml must have a top-level services: key with indented services using image, build, ports or environment; ' +
    'wp-config.php.bak must define() DB_* constants (PHP source starting with <?php counts as a file, not a page). None may be an ' +
    'HTML page or the same answer as a path that cannot exist. Not findings: a single-page app answering index.html, a 404 page, a ' +
    'JavaScript bundle without config keys. Medium; high when a compose file sets a secret-looking variable to a literal value; ' +
    'critical when a JavaScript config contains a provider secret, and for a wp-config backup with a database password or auth keys. ' +
    'Evidence: ' +
    'path, detected keys or services, constant and variable names only, never values.',
  severity: 'medium',
  fix: {
    generic:
      'Deploy the build output only, never the project root: remove these files from the served directory. For a wp-config.php backup, ' +
      'delete it, then change the database password and regenerate the auth keys and salts ' +
      '(https://api.wordpress.org/secret-key/1.1/salt/).',
    vercel:
      'Set the Output Directory to the build output (dist, out, .next is handled by the preset) instead of the repository root, and ' +
      'list stray files in .vercelignore:\nnext.config.js\nvite.config.js\nwebpack.config.js\ndocker-compose.yml',
    netlify:
      'Point the publish directory at the build output (dist, out). Until fixed, in netlify.toml:\n[[redirects]]\n  from = ' +
      '"/docker-compose.yml"\n  to = "/404.html"\n  status = 404\n  force = true\n(repeat for each exposed file).',
    nextjs:
      'next.config.js is never served by Next.js itself: a copy sits in public/ or the server serves the project root. Remove the copy ' +
      'and serve only the Next.js server or the out/ export.',
    nginx:
      'Point root at the build directory; until then, in the server block:\nlocation ~ ^/(?:(?:next|vite|webpack)\\.config\\' +
      '.js|docker-compose\\.ya?ml)$ {\n  return 404;\n}\nlocation ~* \\.(?:bak|old|orig|save|swp)$ {\n  deny all;\n}',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (http.request.uri.path in {"/next.config.js" "/vite.config.js" "/webpack.config.js"' +
      ' "/docker-compose.yml"} or ends_with(http.request.uri.path, ".bak")) -> Block. Then remove the files at the origin.',
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = FRAMEWORK_CONFIG_PROBES.map((path) =>
      confirmByContent(path, probes, 'that config file', (body) => readConfig(path, body)),
    )
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'config files')
    let severity: Severity = 'medium'
    const raise = (s: Severity) => {
      severity = worseSeverity(severity, s)
    }
    const files = served.map(({ path, probe, found }) => {
      const base = { path, ...probeEvidence(probe) }
      if (found.kind === 'wp-config') {
        raise(found.credentials ? 'critical' : 'high')
        return { ...base, kind: found.kind, constants: found.constants, databaseCredentials: found.credentials, values: 'redacted' }
      }
      if (found.kind === 'docker-compose') {
        if (found.secretNames.length > 0) raise('high')
        return { ...base, kind: found.kind, services: found.services, secretNames: found.secretNames }
      }
      const secrets = scanScripts([{ url: probe.url, inline: false, body: probe.body }])
        .filter((f) => f.exposure === 'secret')
        .slice(0, 10)
        .map((f) => ({ kind: f.kind, redacted: f.redacted }))
      if (secrets.length > 0) raise('critical')
      return { ...base, kind: `${found.tool}-config`, keys: found.keys.map((k) => clip(k, 40)), ...(secrets.length > 0 ? { secrets } : {}) }
    })
    const paths = files.map((f) => f.path)
    const wp = served.find((s) => s.found.kind === 'wp-config')
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary:
        `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served` +
        (wp && (wp.found as WpConfigShape).credentials
          ? ', including a wp-config.php backup with database credentials.'
          : secretIn(files)
            ? `, with a credential in ${secretIn(files)!.path}: ${secretIn(files)!.secret.kind} ${secretIn(files)!.secret.redacted}.`
            : '.'),
    }
  },
})

/** The first served file with a provider secret in it, and that secret (redacted). */
function secretIn(
  files: ReadonlyArray<{ path: string; secrets?: Array<{ kind: string; redacted: string }> }>,
): { path: string; secret: { kind: string; redacted: string } } | null {
  for (const f of files) if (f.secrets?.[0]) return { path: f.path, secret: f.secrets[0] }
  return null
}
