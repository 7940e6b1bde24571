// Container and CI definitions, cloud and cluster credentials, password files and private keys served with
// the site, each recognised by its own syntax. Secret values never reach the evidence: names only.

import { INFRA_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { worseSeverity } from '../../report/ranking.ts'
import { scanScripts } from '../util/secrets.ts'
import { secretNames } from './exposed-env-file.ts'

const SCAN = 65_536
const MAX_LINES = 2_000
const MAX_NAMES = 20

export interface InfraFile {
  kind: string
  severity: Severity
  details: Record<string, unknown>
}

const lines = (text: string) => text.split(/\r?\n/, MAX_LINES)
const FROM_ENV = /^["']?(?:\$\{?[A-Za-z_]|\$\(|<[^>]*>$|\*+$|x{3,}$)/
const literalValue = (raw: string) => {
  const v = raw.trim().replace(/^["']|["']$/g, '')
  return v !== '' && !FROM_ENV.test(v) && !/^(?:true|false|\d{1,6}|null|~)$/i.test(v)
}

/** Names of YAML `NAME: value` / Dockerfile `ENV NAME=value` entries whose name looks secret and whose value is a literal. */
function literalSecretNames(text: string, entry: RegExp): string[] {
  const found = new Set<string>()
  for (const line of lines(text)) {
    const m = entry.exec(line.length <= 4_000 ? line : '')
    if (m && literalValue(m[2] ?? '') && secretNames([m[1]!]).length > 0) found.add(m[1]!)
    if (found.size >= MAX_NAMES) break
  }
  return [...found]
}

const YAML_ENTRY = /^\s*(?:-\s+)?["']?([A-Za-z][A-Za-z0-9_]{1,100})["']?\s*[:=]\s*(.*)$/
const INSTRUCTION =
  /^\s*(FROM|RUN|COPY|ADD|CMD|ENTRYPOINT|ENV|ARG|WORKDIR|EXPOSE|USER|LABEL|VOLUME|HEALTHCHECK|SHELL|STOPSIGNAL|ONBUILD)\s/i

/** NAME=value pairs of ENV and ARG instructions (continuation lines joined), and the legacy `ENV NAME value`. */
function dockerfileSecretNames(content: string[]): string[] {
  const found = new Set<string>()
  for (const line of content) {
    const m = /^\s*(?:ENV|ARG)\s+(.*)$/i.exec(line.length <= 8_000 ? line : '')
    if (!m) continue
    const rest = m[1]!
    const pairs = [...rest.matchAll(/([A-Za-z_][A-Za-z0-9_]{0,100})=("[^"]*"|'[^']*'|\S*)/g)]
    const legacy = pairs.length === 0 ? /^([A-Za-z_][A-Za-z0-9_]{0,100})\s+(\S.*)$/.exec(rest) : null
    for (const [, name, value] of legacy ? [legacy] : pairs) {
      if (literalValue(value ?? '') && secretNames([name!]).length > 0) found.add(name!)
      if (found.size >= MAX_NAMES) break
    }
  }
  return [...found]
}

function readDockerfile(text: string): InfraFile | null {
  const content = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/, MAX_LINES)
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))
  const firstReal = content.find((l) => !/^\s*ARG\s/i.test(l))
  if (!firstReal || !/^\s*FROM\s+\S/i.test(firstReal)) return null
  const instructions = content.filter((l) => INSTRUCTION.test(l))
  if (instructions.length < 2) return null
  const secrets = dockerfileSecretNames(content)
  return {
    kind: 'Dockerfile',
    severity: secrets.length > 0 ? 'high' : 'medium',
    details: { baseImage: clip(/^\s*FROM\s+(\S+)/i.exec(firstReal)![1]!, 120), secretNames: secrets },
  }
}

/** A YAML CI definition: its top-level keys must include the tool's own, its secrets are literal variables. */
function readCi(kind: string, text: string, topLevel: RegExp[], needed: number): InfraFile | null {
  if (/^\s*[{<[]/.test(text)) return null
  const hits = topLevel.filter((re) => re.test(text)).length
  if (hits < needed) return null
  const secrets = literalSecretNames(text, YAML_ENTRY)
  return { kind, severity: secrets.length > 0 ? 'high' : 'medium', details: { secretNames: secrets } }
}

function readJenkinsfile(text: string): InfraFile | null {
  const declarative = /^\s*pipeline\s*\{/m.test(text) && /\bagent\b/.test(text) && /\bstages\s*\{/.test(text)
  const scripted = /^\s*node\s*(?:\([^)]{0,200}\))?\s*\{/m.test(text) && /\bstage\s*\(/.test(text)
  if (!declarative && !scripted) return null
  const secrets = literalSecretNames(text, /^\s*([A-Za-z_][A-Za-z0-9_]{0,100})\s*=\s*(["'][^"'\n]*["'])\s*$/)
  return {
    kind: 'Jenkinsfile',
    severity: secrets.length > 0 ? 'high' : 'medium',
    details: { style: declarative ? 'declarative' : 'scripted', secretNames: secrets },
  }
}

function readAwsCredentials(text: string): InfraFile | null {
  const profiles = [...text.matchAll(/^\s*\[([\w .@-]{1,80})\]\s*$/gm)].map((m) => m[1]!.trim())
  const keyId = /^\s*aws_access_key_id\s*=\s*((?:AKIA|ASIA)[A-Z0-9]{16})\s*$/im.exec(text)
  if (profiles.length === 0 || !keyId) return null
  const secret = /^\s*aws_secret_access_key\s*=\s*\S{20,}/im.test(text)
  return {
    kind: 'AWS credentials file',
    severity: secret && !keyId[1]!.endsWith('EXAMPLE') ? 'critical' : 'high',
    details: { profiles: profiles.slice(0, MAX_NAMES), secretAccessKey: secret, values: 'redacted' },
  }
}

function readDockerConfig(text: string): InfraFile | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  const auths = (parsed as { auths?: unknown } | null)?.auths
  if (!auths || typeof auths !== 'object' || Array.isArray(auths)) return null
  const registries = Object.keys(auths).slice(0, MAX_NAMES)
  const withAuth = Object.values(auths).filter(
    (a) => a && typeof a === 'object' && typeof (a as { auth?: unknown }).auth === 'string' && (a as { auth: string }).auth !== '',
  )
  return {
    kind: 'Docker client config',
    severity: withAuth.length > 0 ? 'critical' : 'medium',
    details: { registries, registriesWithPassword: withAuth.length, values: 'redacted' },
  }
}

function readKubeconfig(text: string): InfraFile | null {
  if (!/^kind:\s*Config\s*$/m.test(text) || !/^clusters:\s*$/m.test(text) || !/^apiVersion:\s*v1\s*$/m.test(text)) return null
  const clusters = [...text.matchAll(/^\s+server:\s*(\S{1,300})/gm)].map((m) => m[1]!).slice(0, MAX_NAMES)
  const credentials = /^\s+(?:token|client-key-data|password):\s*\S/m.test(text)
  return {
    kind: 'kubeconfig',
    severity: credentials ? 'critical' : 'high',
    details: { servers: clusters, credentials, values: 'redacted' },
  }
}

function readTfState(text: string): InfraFile | null {
  if (!/^\s*\{/.test(text) || !/"terraform_version"\s*:\s*"[\d.]+"/.test(text) || !/"(?:resources|modules)"\s*:\s*\[/.test(text))
    return null
  const types = [...new Set([...text.slice(0, SCAN).matchAll(/"type"\s*:\s*"([a-z][a-z0-9_]{1,80})"/g)].map((m) => m[1]!))].slice(
    0,
    MAX_NAMES,
  )
  return {
    kind: 'Terraform state',
    severity: /"(?:password|secret|private_key|access_key|token)[a-z_]*"\s*:\s*"[^"]/i.test(text) ? 'critical' : 'high',
    details: { resourceTypes: types },
  }
}

const HTPASSWD_LINE =
  /^([^:\s]{1,64}):(\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}|\$2[aby]\$\d{2}\$[./0-9A-Za-z]{53}|\{SHA\}[A-Za-z0-9+/]{27}=|\$[56]\$[^\s:]{10,200}|[./0-9A-Za-z]{13})$/

function readHtpasswd(text: string): InfraFile | null {
  const content = lines(text).filter((l) => l.trim() !== '')
  if (content.length === 0 || content.length > 1_000 || !content.every((l) => HTPASSWD_LINE.test(l.trim()))) return null
  const users = content.map((l) => l.split(':')[0]!)
  return { kind: '.htpasswd', severity: 'high', details: { users: users.slice(0, MAX_NAMES), count: users.length, hashes: 'redacted' } }
}

const PEM_KEY =
  /-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY)-----\r?\n(?:[A-Za-z-]+:[^\n]*\n)*\r?\n?([A-Za-z0-9+/=\r\n]{64,})-----END \1-----/

function readPrivateKey(text: string): InfraFile | null {
  const m = PEM_KEY.exec(text.slice(0, SCAN))
  if (!m) return null
  const encrypted = m[1] === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(text)
  return { kind: 'private key', severity: encrypted ? 'high' : 'critical', details: { type: m[1], encrypted } }
}

function readInfra(path: string, body: string): InfraFile | null {
  const text = body.slice(0, SCAN)
  switch (path) {
    case '/Dockerfile':
      return readDockerfile(text)
    case '/.gitlab-ci.yml':
      return readCi(
        'GitLab CI',
        text,
        [/^stages:\s*$/m, /^\s+script:/m, /^(?:image|variables|before_script|default|include|workflow):/m],
        2,
      )
    case '/.travis.yml':
      return readCi(
        'Travis CI',
        text,
        [
          /^language:\s*\S/m,
          /^(?:script|install|before_install|after_success|deploy):/m,
          /^(?:dist|os|jobs|matrix|env|node_js|python|php):/m,
        ],
        2,
      )
    case '/.circleci/config.yml':
      return readCi(
        'CircleCI',
        text,
        [/^version:\s*["']?2(?:\.\d)?["']?\s*$/m, /^(?:jobs|workflows):\s*$/m, /^orbs:\s*$|^\s+(?:docker|steps):/m],
        2,
      )
    case '/bitbucket-pipelines.yml':
      return readCi(
        'Bitbucket Pipelines',
        text,
        [/^pipelines:\s*$/m, /^\s+(?:-\s+)?script:/m, /^\s+(?:default|branches|pull-requests|tags|custom):\s*$/m],
        2,
      )
    case '/Jenkinsfile':
      return readJenkinsfile(text)
    case '/.aws/credentials':
      return readAwsCredentials(text)
    case '/.docker/config.json':
      return readDockerConfig(text)
    case '/.kube/config':
      return readKubeconfig(text)
    case '/terraform.tfstate':
      return readTfState(text)
    case '/.htpasswd':
      return readHtpasswd(text)
    case '/id_rsa':
    case '/.ssh/id_rsa':
      return readPrivateKey(text)
  }
  return null
}

export const exposedInfraFiles = defineCheck({
  id: 'exposed-infra-files',
  category: 'exposure',
  title: 'No container, CI, cloud credential or key files are served',
  failTitle: 'Container, CI, cloud credential or key files are served',
  description: `Reads what the site returns for ${INFRA_PROBES.join(', ')} and judges whether each is that file.`,
  why:
    'Cloud credentials, a Docker registry login, a kubeconfig, Terraform state or a private key served from the site give direct ' +
    'access to the infrastructure behind it. Dockerfiles and CI definitions reveal how the app is built and deployed and often carry ' +
    'tokens in their variables; an .htpasswd hands out password hashes to crack offline.',
  confirmation:
    'Confirmed by each format, never by status code: a Dockerfile starts with FROM and has further instructions; CI files must ' +
    'have the tool\u2019s own top-level keys (GitLab stages/script, Travis language/script, CircleCI version 2 with jobs or ' +
    'workflows, Bitbucket pipelines/script) and a Jenkinsfile a pipeline or node block with stages; .aws/credentials a [profile] ' +
    'with an aws_access_key_id; .docker/config.json an auths object; .kube/config kind: Config with clusters; terraform.tfstate its ' +
    'terraform_version and resources; .htpasswd only user:hash lines; id_rsa a PEM private key block. None may be an HTML page or ' +
    'the answer for a path that cannot exist. Medium for build and CI files, high with a literal secret-named variable, a password ' +
    'file or cluster address; critical for usable credentials (an AWS secret key, a registry auth, a cluster token, an unencrypted ' +
    'private key). Evidence: path, kind, names only, never values.',
  severity: 'medium',
  fix: {
    generic:
      'Remove these files from the served directory and serve only the build output. Revoke and replace every credential that was ' +
      'in them (AWS keys, registry passwords, cluster tokens, SSH keys, CI variables), and keep secrets in the CI\u2019s or cloud\u2019s ' +
      'secret store instead of files in the repository.',
    vercel:
      'Set the Output Directory to the build output so the repository root is not deployed, and list the files in .vercelignore:\n' +
      'Dockerfile\n.gitlab-ci.yml\n.aws\n.docker\n.kube\n*.tfstate\n.htpasswd\nid_rsa',
    netlify:
      'Publish the build folder only. Until then, in netlify.toml:\n[[redirects]]\n  from = "/.aws/*"\n  to = "/404.html"\n  status = ' +
      '404\n  force = true\n(repeat for each file).',
    nextjs: 'Next.js serves public/ as is: remove the files from public/, rotate what they held and redeploy.',
    nginx:
      'Point root at the build output; until then, in the server block:\nlocation ~ /\\.(?!well-known) {\n  return 404;\n}\nlocation ~ ' +
      '^/(?:Dockerfile|Jenkinsfile|bitbucket-pipelines\\.yml|terraform\\.tfstate|id_rsa)$ {\n  return 404;\n}',
    apache:
      'In the vhost or .htaccess:\nRedirectMatch 404 "/\\.(?!well-known)"\n<FilesMatch "^(Dockerfile|Jenkinsfile|bitbucket-pipelines\\.yml|terraform\\.tfstate|id_rsa)$">\n  Require all denied\n</FilesMatch>',
    cloudflare:
      'Remove the files at the origin and rotate the credentials. Meanwhile: Security > WAF > Custom rules > (http.request.uri.path ' +
      'in {"/Dockerfile" "/Jenkinsfile" "/terraform.tfstate" "/id_rsa"} or starts_with(http.request.uri.path, "/.aws/") or ' +
      'starts_with(http.request.uri.path, "/.kube/")) -> Block.',
    express: "Serve a build folder (express.static('public')), never the project root, and leave dotfiles: 'ignore' (the default).",
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = INFRA_PROBES.map((path) => confirmByContent(path, probes, 'that file', (body) => readInfra(path, body)))
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'container, CI, credential or key files')
    // Provider keys anywhere in a confirmed file (a Stripe key in a CI variable) make it high at least.
    const withKeys = served.map((f) => ({
      ...f,
      keys: scanScripts([{ url: f.probe.url, inline: false, body: f.probe.body }])
        .filter((k) => k.exposure === 'secret')
        .slice(0, 5)
        .map((k) => ({ kind: k.kind, redacted: k.redacted })),
    }))
    const severity = withKeys.reduce<Severity>(
      (s, f) => worseSeverity(worseSeverity(s, f.found.severity), f.keys.length > 0 ? 'high' : 'low'),
      'low',
    )
    const files = withKeys.map(({ path, probe, found, keys }) => ({
      path,
      ...probeEvidence(probe),
      kind: found.kind,
      ...found.details,
      ...(keys.length > 0 ? { secrets: keys } : {}),
    }))
    const paths = files.map((f) => f.path)
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary: `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served (${[...new Set(served.map((s) => s.found.kind))].join(', ')}).`,
    }
  },
})
