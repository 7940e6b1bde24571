// Package manifests (package.json, composer.json) and the npm client config (.npmrc) served with the site.

import { MANIFEST_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { redact, redactUrlCredentials } from '../util/redact.ts'
import { scanScripts } from '../util/secrets.ts'
import { worseSeverity } from '../../report/ranking.ts'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const keyCount = (v: unknown) => (isObject(v) ? Object.keys(v).length : 0)

function parseObject(body: string): Record<string, unknown> | null {
  const text = body.replace(/^\uFEFF/, '').trim()
  if (!text.startsWith('{')) return null
  try {
    const value: unknown = JSON.parse(text)
    return isObject(value) ? value : null
  } catch {
    return null
  }
}

export interface ManifestShape {
  kind: 'npm' | 'composer'
  name: string | null
  version: string | null
  dependencies: number
  devDependencies: number
}

/** package.json: an identity (name, version or private) and dependencies, scripts or workspaces. */
export function readPackageJson(body: string): ManifestShape | null {
  const pkg = parseObject(body)
  if (!pkg) return null
  const identity = typeof pkg.name === 'string' || typeof pkg.version === 'string' || typeof pkg.private === 'boolean'
  const content =
    ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies', 'scripts'].some((k) => isObject(pkg[k])) ||
    pkg.workspaces !== undefined
  if (!identity || !content) return null
  return {
    kind: 'npm',
    name: typeof pkg.name === 'string' ? clip(pkg.name, 100) : null,
    version: typeof pkg.version === 'string' ? clip(pkg.version, 40) : null,
    dependencies: keyCount(pkg.dependencies) + keyCount(pkg.peerDependencies) + keyCount(pkg.optionalDependencies),
    devDependencies: keyCount(pkg.devDependencies),
  }
}

/** composer.json: require or require-dev, and a name, type, autoload or config section. */
export function readComposerJson(body: string): ManifestShape | null {
  const pkg = parseObject(body)
  if (!pkg) return null
  const requires = isObject(pkg.require) || isObject(pkg['require-dev'])
  const identity =
    typeof pkg.name === 'string' ||
    typeof pkg.type === 'string' ||
    isObject(pkg.autoload) ||
    isObject(pkg.config) ||
    typeof pkg['minimum-stability'] === 'string'
  if (!requires || !identity) return null
  return {
    kind: 'composer',
    name: typeof pkg.name === 'string' ? clip(pkg.name, 100) : null,
    version: typeof pkg.version === 'string' ? clip(pkg.version, 40) : null,
    dependencies: keyCount(pkg.require),
    devDependencies: keyCount(pkg['require-dev']),
  }
}

export interface NpmrcShape {
  kind: 'npmrc'
  settings: string[]
  registries: string[]
  /** Auth values written into the file, redacted. */
  tokens: Array<{ key: string; redacted: string }>
  /** Auth settings that read an environment variable (${NPM_TOKEN}): no secret in the file. */
  tokensFromEnvironment: number
}

const NPMRC_LINE = /^([^\s=]{1,300})\s*=\s*(.*)$/
/** A setting name, or a per-registry one (//registry.example.com/:_authToken). */
const NPMRC_NAME = /^(?:\/\/|[@A-Za-z_])[\w.:@/-]*$/
const NPMRC_KEY =
  /(?:^|:)(?:registry|_authToken|_auth|_password|username|email|always-auth|certfile|keyfile|cafile|ca|strict-ssl|save-exact|save-prefix|engine-strict|legacy-peer-deps|auto-install-peers|shamefully-hoist|strict-peer-dependencies|node-linker|package-lock|fund|audit|loglevel|progress|prefer-offline|ignore-scripts|provenance|init-[a-z-]+)$/
const AUTH_KEY = /(?:^|:)(?:_authToken|_auth|_password)$/
const FROM_ENV = /^["']?\$\{[A-Za-z_][A-Za-z0-9_]*\}["']?$/

/** .npmrc: key=value lines, mostly, with at least one npm setting among the keys. */
export function readNpmrc(body: string): NpmrcShape | null {
  const lines = body
    .split(/\r?\n/, 2_000)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'))
  if (lines.length === 0) return null
  const pairs = lines
    .map((l) => (l.length <= 4_000 ? NPMRC_LINE.exec(l) : null))
    .filter((m): m is RegExpExecArray => m !== null && NPMRC_NAME.test(m[1]!))
  if (pairs.length * 2 < lines.length || !pairs.some((m) => NPMRC_KEY.test(m[1]!))) return null
  const shape: NpmrcShape = { kind: 'npmrc', settings: [], registries: [], tokens: [], tokensFromEnvironment: 0 }
  for (const m of pairs) {
    const key = m[1]!
    const value = m[2]!.trim()
    if (shape.settings.length < 30) shape.settings.push(clip(key, 120))
    if (AUTH_KEY.test(key)) {
      if (FROM_ENV.test(value)) shape.tokensFromEnvironment++
      else if (value.replace(/^["']|["']$/g, '').length > 0 && shape.tokens.length < 10)
        shape.tokens.push({ key: clip(key, 120), redacted: redact(value.replace(/^["']|["']$/g, '')) })
    } else if (/(?:^|:)registry$/.test(key) && shape.registries.length < 10) {
      shape.registries.push(clip(redactUrlCredentials(value), 200))
    }
  }
  return shape
}

type Found = ManifestShape | NpmrcShape

/** A composer.json probed under a base path: "/<dirs>/composer.json" (BASE_PATH_PROBES). */
const BASE_COMPOSER = /^\/(?:[^/?#]+\/){1,8}composer\.json$/

function readManifest(path: string, body: string): Found | null {
  if (path.endsWith('/.npmrc')) return readNpmrc(body)
  if (path.endsWith('/composer.json')) return readComposerJson(body)
  return readPackageJson(body)
}

export const exposedPackageManifest = defineCheck({
  id: 'exposed-package-manifest',
  category: 'exposure',
  title: 'No package manifests or npm config are served',
  failTitle: 'Package manifests or npm config are served',
  description: `Reads what the site returns for ${MANIFEST_PROBES.join(', ')}, and for composer.json under the scanned URL's base path when it has one, and judges whether each is a package manifest or npm config.`,
  why:
    'A package manifest lists every dependency and version, so known vulnerabilities can be matched without probing; it also reveals ' +
    'internal package names and scripts. An .npmrc may hold a registry token that lets anyone read or publish your private packages.',
  confirmation:
    'Confirmed by content, never by status code: package.json must parse as a JSON object with a name, version or private flag and ' +
    'dependencies, scripts or workspaces; composer.json must parse with require or require-dev and a name, type, autoload or config; ' +
    '.npmrc must be key=value lines with npm settings (registry, _authToken, always-auth, ...). None may be an HTML page or the same ' +
    'answer as a path that cannot exist. Not findings: a single-page app answering index.html, a JSON error such as {"error":"not ' +
    'found"}, a web app manifest. Medium; critical when a provider secret appears in a manifest, and for an .npmrc with a literal ' +
    '_authToken/_auth/_password (an ${NPM_TOKEN} placeholder is not a secret). Evidence: path, package name, dependency counts, ' +
    'registries, redacted tokens.',
  severity: 'medium',
  fix: {
    generic:
      'Deploy the build output, not the project root: remove package.json, composer.json and .npmrc from the served directory. Revoke ' +
      'any token found in .npmrc (npm token revoke, or in the registry\u2019s UI) and read it from ${NPM_TOKEN} in CI instead.',
    vercel:
      'Set the Output Directory to the build output (dist, out, build) instead of the repository root; Vercel\u2019s own build never ' +
      'serves package.json from a framework preset. Revoke any exposed npm token and set NPM_TOKEN as an Environment Variable ' +
      'referenced from .npmrc as ${NPM_TOKEN}.',
    netlify:
      'Point the publish directory at the build output. Until fixed, in netlify.toml:\n[[redirects]]\n  from = "/package.json"\n  to = ' +
      '"/404.html"\n  status = 404\n  force = true\n(repeat for /composer.json and /.npmrc). Revoke any exposed token and use an ' +
      'NPM_TOKEN environment variable.',
    nextjs: 'Never copy package.json or .npmrc into public/; Next.js serves public/ as is. Remove the copies and redeploy.',
    nginx:
      'Serve the build directory as root; until then, in the server block:\nlocation ~ ^/(?:package(?:-lock)?\\.json|composer\\' +
      '.(?:json|lock)|\\.npmrc)$ {\n  return 404;\n}',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (http.request.uri.path in {"/package.json" "/composer.json" "/.npmrc"}) -> Block. ' +
      'Then remove the files at the origin and revoke any exposed token.',
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    // Besides the root: composer.json under the scanned URL's base path (an application under /mediawiki/).
    const underBase = Object.keys(probes).filter((p) => p !== '/composer.json' && BASE_COMPOSER.test(p))
    const judgements = [...MANIFEST_PROBES, ...underBase].map((path) =>
      confirmByContent(path, probes, 'a package manifest', (body) => readManifest(path, body)),
    )
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'package manifests')
    let severity: Severity = 'medium'
    const raise = (s: Severity) => {
      severity = worseSeverity(severity, s)
    }
    const files = served.map(({ path, probe, found }) => {
      if (found.kind === 'npmrc') {
        if (found.tokens.length > 0) raise('critical')
        const { kind: _kind, ...npmrc } = found
        return { path, ...probeEvidence(probe), ...npmrc }
      }
      const secrets = scanScripts([{ url: probe.url, inline: false, body: probe.body }])
        .filter((f) => f.exposure === 'secret')
        .slice(0, 10)
        .map((f) => ({ kind: f.kind, redacted: f.redacted }))
      if (secrets.length > 0) raise('critical')
      return {
        path,
        ...probeEvidence(probe),
        name: found.name,
        version: found.version,
        dependencies: found.dependencies,
        devDependencies: found.devDependencies,
        ...(secrets.length > 0 ? { secrets } : {}),
      }
    })
    const paths = files.map((f) => f.path)
    const token = served.find((s) => s.found.kind === 'npmrc' && s.found.tokens.length > 0)
    const manifest = served.find((s) => s.found.kind !== 'npmrc')?.found as ManifestShape | undefined
    const withSecret = files.find((f) => 'secrets' in f && f.secrets !== undefined)
    const secret = withSecret && 'secrets' in withSecret ? withSecret.secrets?.[0] : undefined
    const detail = token
      ? ` (${token.path} holds a registry token ${(token.found as NpmrcShape).tokens[0]!.redacted})`
      : secret && withSecret
        ? ` (${withSecret.path} holds a credential: ${secret.kind} ${secret.redacted})`
        : manifest
          ? ` (${manifest.name ?? 'unnamed package'}, ${manifest.dependencies + manifest.devDependencies} dependencies)`
          : ''
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary: `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served${detail}.`,
    }
  },
})
