// What operating systems, editors and version control systems other than Git leave next to the files they
// touch: macOS .DS_Store, Subversion, Mercurial and Bazaar working copies, JetBrains and VS Code project
// folders, vim swap files. Each recognised by its own format.

import { METADATA_PROBES } from '../probe-paths.ts'
import { defineCheck, type ProbeResult, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, hasBytes, headBytes, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { redactUrlCredentials } from '../util/redact.ts'
import { worseSeverity } from '../../report/ranking.ts'

const MAX_NAMES = 12
const SCAN = 65_536

export interface MetadataFile {
  tool: string
  severity: Severity
  details: Record<string, unknown>
}

const BUD1 = [0x00, 0x00, 0x00, 0x01, 0x42, 0x75, 0x64, 0x31]
/** Record types of .DS_Store entries, which follow each file name. */
const DS_TYPES =
  'Iloc|bwsp|lsvo|lsvp|lsvP|icvp|icvo|dilc|lg1S|logS|modD|moDD|ph1S|pBBk|vSrn|vstl|BKGD|cmmt|extn|fwi0|fwsw|fwvh|ICVO|icgo|icsp|info|LSVO|lssp|lsvC|lsvt|pict'
/** A UTF-16BE name (a NUL byte before each ASCII character), then its record type. */
const DS_RECORD = new RegExp(`((?:${String.fromCharCode(0)}[ -~]){1,255})(?:${DS_TYPES})`, 'g')

/** File and folder names a .DS_Store lists: UTF-16BE names, each before its record type. */
export function dsStoreNames(body: string): string[] {
  const names: string[] = []
  for (const m of body.slice(0, SCAN).matchAll(DS_RECORD)) {
    const name = m[1]!.replaceAll('\u0000', '')
    if (name !== '.' && !names.includes(name)) names.push(clip(name, 100))
    if (names.length >= MAX_NAMES) break
  }
  return names
}

const SQLITE = [...Buffer.from('SQLite format 3\u0000', 'latin1')]
const HG_REQUIREMENTS = new Set([
  'revlogv1',
  'revlogv2',
  'store',
  'fncache',
  'dotencode',
  'generaldelta',
  'sparserevlog',
  'share-safe',
  'persistent-nodemap',
  'revlog-compression-zstd',
  'treemanifest',
  'shared',
  'relshared',
  'largefiles',
  'lfs',
  'exp-sparse',
  'internal-phase',
  'changelogv2',
  'dirstate-v2',
  'bookmarksinstore',
  'narrowhg-experimental',
])
const CRED_KEYS = /"(password|passphrase|privateKeyPath|privateKey)"\s*:\s*"([^"]{1,400})"/g

function readVim(bytes: Uint8Array): MetadataFile | null {
  // struct block0: b0_id "b0", b0_version[10] "VIM 9.0", page size, mtime, inode, pid, then user (40), host (40), file (900).
  if (!hasBytes(bytes, [0x62, 0x30, 0x56, 0x49, 0x4d, 0x20])) return null
  const field = (at: number, len: number) => {
    const raw = bytes.subarray(at, at + len)
    const end = raw.indexOf(0)
    const text = Buffer.from(raw.subarray(0, end === -1 ? raw.length : end)).toString('latin1')
    return /^[\x20-\x7e]{1,900}$/.test(text) ? clip(text, 200) : null
  }
  return {
    tool: 'vim swap file',
    severity: 'medium',
    details: { vim: field(2, 10), user: field(28, 40), file: field(108, 400) },
  }
}

function readMetadata(path: string, body: string, probe: ProbeResult): MetadataFile | null {
  const bytes = headBytes(probe)
  const text = body.slice(0, SCAN)
  switch (path) {
    case '/.DS_Store': {
      if (!hasBytes(bytes, BUD1)) return null
      return { tool: 'macOS Finder (.DS_Store)', severity: 'medium', details: { names: dsStoreNames(body) } }
    }
    case '/.svn/entries': {
      // Subversion 1.6 and older: a format number, a blank line, then "dir" and the revision and URL.
      const m = /^(?:8|9|10)\n\ndir\n\d{1,10}\n([a-z+]{2,10}:\/\/[^\n]{1,500})\n/.exec(text)
      return m ? { tool: 'Subversion', severity: 'high', details: { repository: redactUrlCredentials(m[1]!) } } : null
    }
    case '/.svn/wc.db': {
      if (!hasBytes(bytes, SQLITE) || !/REPOSITORY|WCROOT|NODES/.test(text)) return null
      const root = /(?:svn|https?|svn\+ssh):\/\/[\x21-\x7e]{1,300}/.exec(text)
      return { tool: 'Subversion', severity: 'high', details: { repository: root ? redactUrlCredentials(root[0]) : null } }
    }
    case '/.hg/requires': {
      const lines = text
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
      if (lines.length < 2 || lines.length > 40 || !lines.every((l) => HG_REQUIREMENTS.has(l) || /^exp-[a-z0-9-]{1,40}$/.test(l)))
        return null
      return { tool: 'Mercurial', severity: 'high', details: { requirements: lines.slice(0, MAX_NAMES) } }
    }
    case '/.hg/hgrc': {
      const m = /^\[paths\]\s*\n(?:[^\n[]*\n){0,20}?\s*default\s*=\s*(\S{1,500})/m.exec(text)
      return m ? { tool: 'Mercurial', severity: 'high', details: { remote: redactUrlCredentials(m[1]!) } } : null
    }
    case '/.bzr/branch-format':
      return /^Bazaar(?:-NG)? meta directory, format \d/.test(text) ? { tool: 'Bazaar', severity: 'high', details: {} } : null
    case '/.idea/workspace.xml': {
      if (!/<project version="\d+">/.test(text) || !/<component name="[A-Za-z]{2,80}"/.test(text)) return null
      const components = [...new Set([...text.matchAll(/<component name="([A-Za-z]{2,80})"/g)].map((m) => m[1]!))].slice(0, MAX_NAMES)
      return { tool: 'JetBrains IDE', severity: 'low', details: { components } }
    }
    case '/.vscode/sftp.json': {
      if (!/^\s*\{/.test(text) || !/"host"\s*:/.test(text) || !/"(?:protocol|remotePath|uploadOnSave|username)"\s*:/.test(text)) return null
      const credentials = [...text.matchAll(CRED_KEYS)].filter((m) => m[2]!.trim() !== '').map((m) => m[1]!)
      return {
        tool: 'VS Code SFTP extension',
        severity: credentials.includes('password') || credentials.includes('passphrase') ? 'critical' : 'high',
        details: { host: first(/"host"\s*:\s*"([^"]{1,200})"/, text), credentials: [...new Set(credentials)], values: 'redacted' },
      }
    }
    case '/.vscode/settings.json': {
      let parsed: unknown
      try {
        parsed = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''))
      } catch {
        return null
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null
      const keys = Object.keys(parsed)
      if (keys.length === 0 || !keys.every((k) => /^\[?[a-z][\w-]*(?:\.[\w-]+)+\]?$|^\[[\w-]+\]$/.test(k))) return null
      return { tool: 'VS Code', severity: 'low', details: { settings: keys.slice(0, MAX_NAMES) } }
    }
    case '/.index.php.swp':
    case '/.index.html.swp': {
      const vim = readVim(bytes)
      if (vim && path.endsWith('.php.swp')) vim.severity = 'high'
      return vim
    }
  }
  return null
}

function first(re: RegExp, text: string): string | null {
  const m = re.exec(text)
  return m ? clip(m[1]!, 200) : null
}

export const exposedMetadataFiles = defineCheck({
  id: 'exposed-metadata-files',
  category: 'exposure',
  title: 'No editor, OS or version-control metadata is served',
  failTitle: 'Editor, OS or version-control metadata is served',
  description: `Reads what the site returns for ${METADATA_PROBES.join(', ')} and judges whether each is that tool\u2019s file.`,
  why:
    'These files map the site for an attacker: a .DS_Store lists every file in the folder, backups and unlinked files included; a ' +
    'Subversion, Mercurial or Bazaar folder lets anyone download the source and its history; an SFTP settings file can hold the ' +
    'deploy password; a vim swap file of a PHP page is its source code, served as text.',
  confirmation:
    'Confirmed by each format, never by status code: .DS_Store by its "Bud1" header bytes (the file names it lists are shown), ' +
    '.svn/wc.db by the SQLite header and Subversion\u2019s tables, .svn/entries in the pre-1.7 format with its repository URL, ' +
    '.hg/requires by Mercurial\u2019s requirement names only, .hg/hgrc by a [paths] default entry, .bzr/branch-format by its first ' +
    'line, .idea/workspace.xml by <project version> with components, .vscode/sftp.json by host plus protocol or remote path (critical ' +
    'with a password), .vscode/settings.json by dotted setting keys, swap files by vim\u2019s "b0VIM" header. None may be an HTML page ' +
    'or the answer for a path that cannot exist. Evidence: the path, the tool, names and remotes with credentials removed.',
  severity: 'medium',
  fix: {
    generic:
      'Deploy the build output, not a working folder: remove .DS_Store, .svn, .hg, .bzr, .idea, .vscode and swap files from the ' +
      'served directory, and make the web server refuse every path segment that starts with a dot (except .well-known).',
    vercel: 'List them in .vercelignore so they are not uploaded:\n.DS_Store\n.svn\n.hg\n.bzr\n.idea\n.vscode\n*.swp',
    netlify:
      'Publish the build folder only. Until then, in netlify.toml:\n[[redirects]]\n  from = "/.svn/*"\n  to = "/404.html"\n  status ' +
      '= 404\n  force = true\n(repeat for .hg, .bzr, .idea, .vscode and /.DS_Store).',
    nextjs: 'Next.js serves public/ as is: delete the metadata from public/ and add them to .gitignore so they do not come back.',
    nginx: 'In the server block:\nlocation ~ /\\.(?!well-known) {\n  return 404;\n}\nlocation ~ \\.swp$ {\n  return 404;\n}',
    apache: 'In the vhost or .htaccess:\nRedirectMatch 404 "/\\.(?!well-known)"\nRedirectMatch 404 "\\.swp$"',
    cloudflare:
      'Security > WAF > Custom rules > (http.request.uri.path contains "/." and not starts_with(http.request.uri.path, ' +
      '"/.well-known/")) -> Block. Then remove the files at the origin.',
    express:
      "express.static ignores dot files by default (dotfiles: 'ignore'): do not set dotfiles: 'allow', and serve a build folder only.",
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = METADATA_PROBES.map((path) =>
      confirmByContent(path, probes, 'that metadata file', (body, probe) => readMetadata(path, body, probe)),
    )
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'metadata files')
    const severity = served.reduce<Severity>((s, f) => worseSeverity(s, f.found.severity), 'low')
    const files = served.map(({ path, probe, found }) => ({ path, ...probeEvidence(probe), tool: found.tool, ...found.details }))
    const paths = files.map((f) => f.path)
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary: `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served (${[...new Set(served.map((s) => s.found.tool))].join(', ')}).`,
    }
  },
})
