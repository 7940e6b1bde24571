// A Git working copy served over HTTP (/.git/config, /.git/HEAD): the whole repository is usually downloadable then.

import { GIT_PROBES } from '../probe-paths.ts'
import { defineCheck } from '../types.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { redact, redactUrlCredentials } from '../util/redact.ts'
import { scanScripts } from '../util/secrets.ts'

export const GIT_CONFIG_PATH = '/.git/config'
export const GIT_HEAD_PATH = '/.git/HEAD'

export function looksLikeGitConfig(body: string): boolean {
  return /^\s*\[core\]\s*$/m.test(body) && /^\s*(?:repositoryformatversion|bare|filemode)\s*=/m.test(body)
}

/** [remote "name"] sections and their url, credentials redacted. */
export function gitRemotes(body: string): Array<{ name: string; url: string }> {
  const remotes: Array<{ name: string; url: string }> = []
  let current: string | null = null
  for (const line of body.split(/\r?\n/, 5_000)) {
    const section = /^\s*\[\s*remote\s+"([^"]*)"\s*\]/.exec(line)
    if (section) {
      current = section[1]!
      continue
    }
    if (/^\s*\[/.test(line)) {
      current = null
      continue
    }
    const url = current !== null ? /^\s*url\s*=\s*(.+?)\s*$/.exec(line) : null
    if (url && current !== null) remotes.push({ name: current, url: redactUrlCredentials(url[1]!) })
  }
  return remotes.slice(0, 10)
}

export interface GitCredential {
  /** Where in the file: `remote "origin" url`, `http.extraheader`, or `line N`. */
  where: string
  kind: string
  /** Redacted: enough to recognise, never to use. */
  value: string
}

const MAX_CREDENTIALS = 5

/**
 * Credentials a .git/config holds: a password or a token in a remote's URL (https://user:token@host,
 * https://ghp_...@github.com), an http.extraheader with an Authorization value (what CI checkouts leave),
 * and any provider token elsewhere in the file.
 */
export function gitCredentials(body: string): GitCredential[] {
  const found: GitCredential[] = []
  const seen = new Set<string>()
  const add = (where: string, kind: string, value: string) => {
    if (seen.has(value) || found.length >= MAX_CREDENTIALS) return
    seen.add(value)
    found.push({ where, kind, value })
  }
  let section = ''
  for (const line of body.split(/\r?\n/, 5_000)) {
    const head = /^\s*\[\s*([^\]]{1,200})\]/.exec(line)
    if (head) {
      section = head[1]!.trim()
      continue
    }
    const url = /^\s*(?:url|pushurl)\s*=\s*[a-z][a-z0-9+.-]*:\/\/([^@/\s]{1,300})@/i.exec(line)
    if (url) {
      const userinfo = decodeURIComponentSafe(url[1]!)
      const colon = userinfo.indexOf(':')
      const password = colon === -1 ? '' : userinfo.slice(colon + 1)
      const token = scanScripts([{ url: '', inline: false, body: userinfo }]).find((f) => f.exposure === 'secret')
      if (token) add(`${section} url`, token.kind, token.redacted)
      else if (password.length > 0) add(`${section} url`, 'password-in-remote-url', redact(password))
      else if (userinfo.length >= 20 && new Set(userinfo).size >= 10) add(`${section} url`, 'token-in-remote-url', redact(userinfo))
    }
    const header = /^\s*extraheader\s*=\s*(?:AUTHORIZATION|Authorization|authorization)\s*:\s*(?:basic|bearer|token)\s+(\S{8,2000})/i.exec(
      line,
    )
    if (header) add(`${section}.extraheader`, 'authorization-header', redact(header[1]!))
  }
  for (const f of scanScripts([{ url: '', inline: false, body }])) {
    if (f.exposure === 'secret' && f.kind !== 'url-with-password') add(`line ${f.line}`, f.kind, f.redacted)
  }
  return found
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

export type GitHead = { ref: string } | { detached: string }

/** .git/HEAD: "ref: refs/heads/main", or a detached commit id (40 hex, 64 for SHA-256 repositories). */
export function readGitHead(body: string): GitHead | null {
  const text = body.trim()
  if (text.length > 300) return null
  const ref = /^ref:\s*(refs\/[^\s]{1,250})$/.exec(text)
  if (ref) return { ref: ref[1]! }
  const sha = /^([0-9a-f]{40}(?:[0-9a-f]{24})?)$/.exec(text)
  return sha ? { detached: sha[1]!.slice(0, 12) } : null
}

type GitFile =
  | { kind: 'config'; remotes: Array<{ name: string; url: string }>; credentials: GitCredential[] }
  | { kind: 'head'; head: GitHead }

function readGitFile(path: string, body: string): GitFile | null {
  if (path === GIT_HEAD_PATH) {
    const head = readGitHead(body)
    return head ? { kind: 'head', head } : null
  }
  return looksLikeGitConfig(body) ? { kind: 'config', remotes: gitRemotes(body), credentials: gitCredentials(body) } : null
}

export const exposedGitConfig = defineCheck({
  id: 'exposed-git-config',
  category: 'exposure',
  title: 'No .git directory is served',
  failTitle: 'The .git directory is served',
  failTitleOf: (evidence) =>
    Array.isArray(evidence.credentials) && evidence.credentials.length > 0 ? 'The .git directory is served, with a credential in it' : null,
  description: `Reads what the site returns for ${GIT_PROBES.join(' and ')} and judges whether they are Git repository files.`,
  why: 'A served .git directory lets anyone rebuild the source code and its history, including secrets committed at any time.',
  confirmation:
    'Confirmed by content, never by status code: /.git/config must contain a [core] section with repositoryformatversion, bare or ' +
    'filemode; /.git/HEAD must be exactly "ref: refs/..." or a 40- (or 64-) character hex commit id. Either must not be an HTML page ' +
    'and must differ from what the site returns for a path that cannot exist. Not findings: a single-page app answering index.html ' +
    'everywhere, a 404 page, text that mentions [core] without Git keys. Evidence shows remote URLs with credentials redacted ' +
    '(https://***@host) and the checked-out branch. Critical when the config holds a credential (a password or token in a remote ' +
    'URL, an http.extraheader Authorization value as CI checkouts leave it, or a provider token anywhere in it), named by kind and ' +
    'redacted.',
  severity: 'high',
  fix: {
    generic:
      'Deploy build output, not the working copy: remove .git from the served directory, block dot-paths at the web server, and rotate ' +
      'any secret ever committed to the repository.',
    vercel: 'Vercel does not upload .git; if /.git is served, a build step copies it into the output directory: remove that copy.',
    netlify:
      'Check that the publish directory is the build output, not the repository root. Until fixed, in netlify.toml:\n[[redirects]]\n  ' +
      'from = "/.git/*"\n  to = "/404.html"\n  status = 404\n  force = true',
    nextjs: 'Make sure no .git directory ends up in public/ or in the exported out/ directory.',
    nginx: 'In the server block:\nlocation ~ /\\.(?!well-known) {\n  deny all;\n  return 404;\n}',
    cloudflare:
      'Security > WAF > Custom rules > Create rule: (starts_with(http.request.uri.path, "/.git")) -> Block. Then remove the directory ' +
      'at the origin.',
    express: 'Serve a build or public directory with express.static, never the repository root.',
    django: 'Serve STATIC_ROOT (the collectstatic output), never the repository root, from the web server.',
    rails: 'Make sure no .git directory is inside public/.',
    apache: 'Deploy without .git, or in .htaccess (or the <VirtualHost>):\nRedirectMatch 404 /\\.git',
    caddy: 'In the site block, before file_server:\n@git path /.git /.git/*\nrespond @git 404',
    iis: 'In web.config, inside <system.webServer><security><requestFiltering>:\n<hiddenSegments>\n  <add segment=".git" />\n</hiddenSegments>',
  },
  fixTarget: {
    kind: 'served-file',
    path: '/.git/config',
    where: { vercel: 'the build step that copies .git into the output directory (Vercel itself never uploads .git)' },
  },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = GIT_PROBES.map((path) => confirmByContent(path, probes, 'a Git repository file', (body) => readGitFile(path, body)))
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, '.git files')
    const files = served.map(({ path, probe, found }) =>
      found.kind === 'config'
        ? { path, ...probeEvidence(probe), remotes: found.remotes }
        : { path, ...probeEvidence(probe), ...found.head },
    )
    const remotes = served.flatMap((s) => (s.found.kind === 'config' ? s.found.remotes : []))
    const credentials = served.flatMap((s) => (s.found.kind === 'config' ? s.found.credentials : []))
    const paths = files.map((f) => f.path)
    const served_ = `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served`
    if (credentials.length > 0) {
      const first = credentials[0]!
      return {
        status: 'fail',
        severity: 'critical',
        evidence: { url: served[0]!.probe.url, path: served[0]!.path, files, remotes, credentials },
        summary: `${served_} with a credential in it: ${first.kind} ${first.value} in ${first.where}. Revoke it.`,
      }
    }
    return {
      status: 'fail',
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files, remotes },
      summary: `${served_}${remotes.length > 0 ? ` (remote ${remotes[0]!.url})` : ''}.`,
    }
  },
})
