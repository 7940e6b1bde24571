// Dotenv files (/.env and its usual variants and backups), confirmed by their content, never by the status code.

import { ENV_PROBES } from '../probe-paths.ts'
import { defineCheck } from '../types.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { redactAssignment } from '../util/redact.ts'

export const ENV_PATH = '/.env'
const ASSIGNMENT = /^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)\s*=/
const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|PWD|DATABASE_URL|DB_URL|PRIVATE|CREDENTIAL|DSN|AUTH/
const MAX_NAMES = 50
/** Lines read per file: a dotenv file has tens of lines; a 64 KiB body of something else is not one. */
const MAX_LINES = 2_000

export interface DotenvShape {
  names: string[]
  /** Lines that are neither blank nor comments. */
  contentLines: string[]
}

export function readDotenv(body: string): DotenvShape {
  const contentLines = body.split(/\r?\n/, MAX_LINES).filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))
  const names: string[] = []
  for (const line of contentLines) {
    const m = ASSIGNMENT.exec(line)
    if (m) names.push(m[1]!)
  }
  return { names, contentLines }
}

/**
 * Several KEY=VALUE lines with UPPER_SNAKE names making up most of the file (multi-line values such as PEM
 * keys account for the rest). A single assignment counts only when it is the whole file and names a secret.
 */
export function looksLikeDotenv(shape: DotenvShape): boolean {
  const { names, contentLines } = shape
  if (names.length >= 2) return names.length * 2 >= contentLines.length
  return names.length === 1 && contentLines.length === 1 && SECRET_NAME.test(names[0]!)
}

/** Names that look like they hold a secret. */
export function secretNames(names: readonly string[]): string[] {
  return names.filter((n) => SECRET_NAME.test(n))
}

export const exposedEnvFile = defineCheck({
  id: 'exposed-env-file',
  category: 'exposure',
  title: 'No .env file is served',
  failTitle: 'A .env file is served',
  description: `Reads what the site returns for ${ENV_PROBES.join(', ')} and judges whether each is a dotenv file.`,
  why:
    '.env files (and the .local, .production, .bak and .save copies next to them) hold database URLs, API keys and signing secrets; one' +
    ' served publicly hands them to anyone who asks.',
  confirmation:
    'Confirmed by content, never by status code: the body must be several KEY=VALUE lines with UPPER_SNAKE names (comments and blank ' +
    'lines allowed), must not be an HTML page, and must differ from what the site returns for a path that cannot exist. Not findings:' +
    ' a single-page app answering 200 with index.html everywhere, an HTML or plain-text 404 page that mentions ".env", lower-case or ' +
    'prose lines. Evidence per file shows only variable names and a redacted first line, never values. Critical when a name looks ' +
    'secret (KEY, SECRET, TOKEN, PASSWORD, DATABASE_URL, PRIVATE, ...), otherwise high.',
  severity: 'critical',
  fix: {
    generic:
      'Remove every .env file (and .env.* copy) from the served directory, block dot-files at the web server, and rotate every secret ' +
      'they contained: they must be treated as leaked.',
    vercel:
      'Keep .env files out of the deployment (add .env* to .gitignore and .vercelignore) and set variables in Project Settings > ' +
      'Environment Variables; then rotate the leaked secrets.',
    netlify:
      'Keep .env files out of the publish directory and set variables in Site configuration > Environment variables. Until ' +
      'redeployed, in netlify.toml:\n[[redirects]]\n  from = "/.env*"\n  to = "/404.html"\n  status = 404\n  force = true',
    nextjs:
      'Never put .env files in public/: Next.js serves public/ as is. Keep them at the project root (not served), use NEXT_PUBLIC_ only' +
      ' for values meant to be public, and rotate the leaked secrets.',
    nginx: 'In the server block:\nlocation ~ /\\.(?!well-known) {\n  deny all;\n  return 404;\n}',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (starts_with(http.request.uri.path, "/.env")) -> Block. Then remove the files at ' +
      'the origin and rotate the secrets.',
    express:
      "Keep .env at the project root, outside the directory given to express.static (which ignores dotfiles unless dotfiles: 'allow'), and rotate the leaked secrets.",
    django:
      'Keep .env outside STATIC_ROOT, MEDIA_ROOT and any directory the web server serves; rotate the leaked secrets (SECRET_KEY included).',
    rails: 'Keep .env at the app root, never in public/ (served as is); rotate the leaked secrets.',
    apache:
      'Remove the file from the document root and rotate the secrets. In .htaccess (or the <VirtualHost>):\n<FilesMatch "^\\.env">\n  Require all denied\n</FilesMatch>',
    caddy: 'In the site block:\n@env path /.env /.env.*\nrespond @env 404\nThen remove the file from the root and rotate the secrets.',
    iis: 'In web.config, inside <system.webServer><security><requestFiltering>:\n<fileExtensions>\n  <add fileExtension=".env" allowed="false" />\n</fileExtensions>\nThen remove the file and rotate the secrets.',
  },
  fixTarget: {
    kind: 'served-file',
    path: '/.env',
    where: { nextjs: 'the public/ directory: move .env* files to the project root, which Next.js does not serve' },
  },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = ENV_PROBES.map((path) =>
      confirmByContent(path, probes, 'a dotenv file', (body) => {
        const shape = readDotenv(body)
        return looksLikeDotenv(shape) ? shape : null
      }),
    )
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, '.env files')
    const files = served.map(({ path, probe, found }) => {
      const secrets = secretNames(found.names)
      return {
        path,
        ...probeEvidence(probe),
        variables: found.names.length,
        names: found.names.slice(0, MAX_NAMES),
        secretNames: secrets.slice(0, MAX_NAMES),
        firstLine: redactAssignment(found.contentLines.find((l) => ASSIGNMENT.test(l))!.trim()),
        namesTruncated: found.names.length > MAX_NAMES,
      }
    })
    const allSecrets = [...new Set(files.flatMap((f) => f.secretNames))]
    const variables = files.reduce((n, f) => n + f.variables, 0)
    const paths = files.map((f) => f.path)
    return {
      status: 'fail',
      severity: allSecrets.length > 0 ? 'critical' : 'high',
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary: `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served with ${variables} variable(s)${allSecrets.length > 0 ? `, including ${allSecrets.slice(0, 3).join(', ')}` : ''}.`,
    }
  },
})
