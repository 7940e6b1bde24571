// Paths the gatherer fetches over plain HTTP once per scan; checks read them from artifacts.probes.
// Every path costs one request per scan, so the list stays short (see PROBE_PATHS below). Checks refer to
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

/** Common static directories, fetched with a trailing slash to see whether the server lists them. */
export const DIRECTORY_PROBES = ['/assets/', '/static/', '/uploads/'] as const

export const PROBE_PATHS: readonly string[] = [
  BASELINE_PROBE,
  ...ENV_PROBES,
  ...GIT_PROBES,
  ...AGENT_INSTRUCTION_PROBES,
  ...MANIFEST_PROBES,
  ...FRAMEWORK_CONFIG_PROBES,
  ...DIRECTORY_PROBES,
]
