// Database dumps, site archives and backup copies of config files left in the web root, recognised by what
// they hold: a dump's header and statements, an archive's magic bytes, a config file's own syntax.

import { BACKUP_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { clip } from '../util/http.ts'
import { confirmByContent, confirmedOnly, hasBytes, headBytes, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { worseSeverity } from '../../report/ranking.ts'
import type { ProbeResult } from '../types.ts'

const MAX_NAMES = 15
const SCAN = 65_536

export interface SqlDumpShape {
  kind: 'sql-dump'
  dialect: 'MySQL' | 'MariaDB' | 'PostgreSQL' | 'SQLite' | 'SQL'
  tables: string[]
  /** INSERT or COPY statements in the part read: rows of data, not just a schema. */
  dataStatements: number
  /** Tables or columns that hold accounts or credentials (users, password, token, ...). */
  credentialColumns: boolean
}

const DUMP_HEADER: Array<[SqlDumpShape['dialect'], RegExp]> = [
  ['MariaDB', /^-- MariaDB dump \d/m],
  ['MySQL', /^-- MySQL dump \d/m],
  ['PostgreSQL', /^-- PostgreSQL database dump\b/m],
  ['SQLite', /^PRAGMA foreign_keys\s*=\s*OFF;\s*\n\s*BEGIN TRANSACTION;/m],
]
const STATEMENT = /^\s*(CREATE TABLE|INSERT INTO|DROP TABLE|LOCK TABLES|COPY [\w."]+ \(|ALTER TABLE|CREATE DATABASE)\b/gim
const TABLE_NAME = /^\s*CREATE TABLE\s+(?:IF NOT EXISTS\s+)?((?:[`"[]?[\w$]{1,64}[`"\]]?\.)?[`"[]?[\w$]{1,64}[`"\]]?)/gim
const DATA = /^\s*(?:INSERT INTO|COPY [\w."]+ \()/gim
const CREDENTIAL = /\b(?:password|passwd|pass_hash|password_hash|hashed_password|api_key|apikey|secret|token|auth_token|users?)\b/i

/** A SQL dump: a dump tool's header, or at least three statements of a dump at line starts. */
export function readSqlDump(body: string): SqlDumpShape | null {
  const text = body.slice(0, SCAN)
  const header = DUMP_HEADER.find(([, re]) => re.test(text))
  const statements = [...text.matchAll(STATEMENT)]
  const kinds = new Set(statements.map((m) => m[1]!.toUpperCase().split(' ')[0]))
  if (!header && !(statements.length >= 3 && kinds.size >= 2)) return null
  const tables: string[] = []
  for (const m of text.matchAll(TABLE_NAME)) {
    const name = m[1]!.replace(/[`"[\]]/g, '')
    if (!tables.includes(name)) tables.push(clip(name, 64))
    if (tables.length >= MAX_NAMES) break
  }
  const dataStatements = [...text.matchAll(DATA)].length
  return {
    kind: 'sql-dump',
    dialect: header?.[0] ?? 'SQL',
    tables,
    dataStatements,
    credentialColumns: CREDENTIAL.test(text.replace(/^--.*$/gm, '')),
  }
}

export interface ArchiveShape {
  kind: 'archive'
  format: 'zip' | 'gzip' | 'tar' | '7z' | 'rar' | 'bzip2' | 'xz'
  /** The first entry's name, where the header holds it in the bytes kept. */
  firstEntry: string | null
}

const MAGIC: Array<[ArchiveShape['format'], number[]]> = [
  ['zip', [0x50, 0x4b, 0x03, 0x04]],
  ['gzip', [0x1f, 0x8b, 0x08]],
  ['7z', [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]],
  ['rar', [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07]],
  ['bzip2', [0x42, 0x5a, 0x68]],
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
]
const USTAR = [0x75, 0x73, 0x74, 0x61, 0x72]

const printable = (bytes: Uint8Array) => /^[\x20-\x7e]{1,200}$/.test(Buffer.from(bytes).toString('latin1'))

/** An archive by its magic bytes: zip, gzip (a .tar.gz), tar (ustar), 7z, rar, bzip2 or xz. */
export function readArchive(bytes: Uint8Array): ArchiveShape | null {
  for (const [format, magic] of MAGIC) {
    if (!hasBytes(bytes, magic)) continue
    let firstEntry: string | null = null
    if (format === 'zip' && bytes.length >= 30) {
      const length = bytes[26]! | (bytes[27]! << 8)
      const name = bytes.subarray(30, 30 + length)
      if (length > 0 && name.length === length && printable(name)) firstEntry = Buffer.from(name).toString('latin1')
    }
    if (format === 'gzip' && bytes.length > 10 && (bytes[3]! & 0x08) !== 0) {
      // FNAME: the original file name, NUL-terminated, right after the 10-byte header (no FEXTRA in practice).
      const end = bytes.indexOf(0, 10)
      const name = bytes.subarray(10, end === -1 ? 10 : end)
      if (name.length > 0 && printable(name)) firstEntry = Buffer.from(name).toString('latin1')
    }
    return { kind: 'archive', format, firstEntry }
  }
  if (hasBytes(bytes, USTAR, 257)) {
    const end = bytes.indexOf(0)
    const name = bytes.subarray(0, end === -1 || end > 100 ? 100 : end)
    return { kind: 'archive', format: 'tar', firstEntry: name.length > 0 && printable(name) ? Buffer.from(name).toString('latin1') : null }
  }
  return null
}

export interface ConfigBackupShape {
  kind: 'config-backup'
  language: 'PHP' | 'Django settings' | 'web.config'
  /** Setting names found (never values). */
  names: string[]
  /** A password, secret key or connection string with a literal, non-placeholder value. */
  credentials: boolean
}

const PLACEHOLDER = /^(?:|x+|\*+|changeme|change[-_ ]?me|password|secret|your[-_ ].*|<.*>|\{.*\}|\$\{.*\}|%.*%|null|none|todo|example.*)$/i

const literal = (value: string | undefined) => value !== undefined && !PLACEHOLDER.test(value.trim())

const PHP_DEFINE = /\bdefine\s*\(\s*['"]([A-Z][A-Z0-9_]{1,60})['"]\s*,\s*['"]([^'"\n]{0,300})['"]/g
const PHP_ASSIGN = /(?:\$|['"])([A-Za-z_][\w]{0,60})['"]?\s*(?:=|=>)\s*['"]([^'"\n]{0,300})['"]/g
const SECRETISH = /pass(?:word|wd)?|pwd|secret|(?:api|auth|private)_?key|token|salt|dsn/i

function readPhpConfig(body: string): ConfigBackupShape | null {
  if (!/^\s*(?:\uFEFF)?<\?php\b/.test(body)) return null
  const names: string[] = []
  let credentials = false
  for (const re of [PHP_DEFINE, PHP_ASSIGN]) {
    for (const m of body.slice(0, SCAN).matchAll(re)) {
      if (!names.includes(m[1]!) && names.length < MAX_NAMES) names.push(m[1]!)
      if (SECRETISH.test(m[1]!) && literal(m[2])) credentials = true
    }
  }
  // A config sets things: database settings, or several named values.
  if (!names.some((n) => /^(?:DB_|db|database|host|user)/i.test(n)) && names.length < 3) return null
  return { kind: 'config-backup', language: 'PHP', names, credentials }
}

const PY_SETTING = /^([A-Z][A-Z0-9_]{1,60})\s*=\s*(?:['"]([^'"\n]{0,300})['"])?/gm
const DJANGO_MARKERS = ['INSTALLED_APPS', 'DATABASES', 'SECRET_KEY', 'MIDDLEWARE', 'ROOT_URLCONF', 'ALLOWED_HOSTS']

function readDjangoSettings(body: string): ConfigBackupShape | null {
  const text = body.slice(0, SCAN)
  const markers = DJANGO_MARKERS.filter((m) => new RegExp(`^${m}\\s*=`, 'm').test(text))
  if (markers.length < 2) return null
  const names: string[] = []
  let credentials = false
  for (const m of text.matchAll(PY_SETTING)) {
    if (!names.includes(m[1]!) && names.length < MAX_NAMES) names.push(m[1]!)
    if (SECRETISH.test(m[1]!) && literal(m[2]) && (m[2]?.length ?? 0) >= 8) credentials = true
  }
  if (
    /['"]PASSWORD['"]\s*:\s*['"]([^'"\n]{1,300})['"]/.test(text) &&
    literal(/['"]PASSWORD['"]\s*:\s*['"]([^'"\n]{1,300})['"]/.exec(text)![1])
  )
    credentials = true
  return { kind: 'config-backup', language: 'Django settings', names, credentials }
}

const WEB_CONFIG_SECTIONS = /<(connectionStrings|appSettings|system\.web|system\.webServer|location|runtime)\b/g

function readWebConfig(body: string): ConfigBackupShape | null {
  const text = body.slice(0, SCAN)
  if (!/<configuration\b[^>]*>/i.test(text)) return null
  const names = [...new Set([...text.matchAll(WEB_CONFIG_SECTIONS)].map((m) => m[1]!))].slice(0, MAX_NAMES)
  if (names.length === 0) return null
  const password = /\b(?:password|pwd)\s*=\s*([^;"'\s]{1,200})/i.exec(text)
  const secretSetting = /<add\s+key\s*=\s*"[^"]*(?:secret|password|apikey|api_key|token)[^"]*"\s+value\s*=\s*"([^"]{1,300})"/i.exec(text)
  return { kind: 'config-backup', language: 'web.config', names, credentials: literal(password?.[1]) || literal(secretSetting?.[1]) }
}

type Found = SqlDumpShape | ArchiveShape | ConfigBackupShape

function readBackup(path: string, body: string, probe: ProbeResult): Found | null {
  if (path.endsWith('.sql')) return readSqlDump(body)
  if (/\.(?:zip|tar\.gz|tgz)$/.test(path)) return readArchive(headBytes(probe))
  if (path.startsWith('/config.php')) return readPhpConfig(body)
  if (path.startsWith('/settings.py')) return readDjangoSettings(body)
  if (path.startsWith('/web.config')) return readWebConfig(body)
  return null
}

function severityOf(found: Found): Severity {
  if (found.kind === 'sql-dump') return found.dataStatements > 0 ? 'critical' : 'high'
  if (found.kind === 'config-backup') return found.credentials ? 'critical' : 'high'
  return 'high'
}

export const exposedBackupFiles = defineCheck({
  id: 'exposed-backup-files',
  category: 'exposure',
  title: 'No database dumps, site archives or config backups are served',
  failTitle: 'Database dumps, site archives or config backups are served',
  description: `Reads what the site returns for ${BACKUP_PROBES.join(', ')} and judges whether each is a dump, an archive or a config backup.`,
  why:
    'A SQL dump hands out every row of the database: accounts, password hashes, personal data. A site archive holds the source and ' +
    'its config files. A backup copy of a config file (config.php.bak, settings.py.bak) is served as text instead of being run, with ' +
    'the database password and secret keys in it.',
  confirmation:
    'Confirmed by content, never by status code or file name: a SQL dump must carry a dump tool\u2019s header (-- MySQL dump, -- ' +
    'MariaDB dump, -- PostgreSQL database dump) or at least three dump statements of two kinds at line starts (CREATE TABLE, INSERT ' +
    'INTO, DROP TABLE, LOCK TABLES, COPY); an archive must start with the magic bytes of zip, gzip, 7z, rar, bzip2 or xz, or be a tar' +
    ' (ustar at byte 257); config.php backups must be PHP source setting database or several values, settings.py backups at least ' +
    'two Django settings (INSTALLED_APPS, DATABASES, SECRET_KEY, ...), web.config backups a <configuration> document with its ' +
    'sections. None may be an HTML page or the answer for a path that cannot exist. Not findings: an SPA\u2019s index.html, a 404 ' +
    'page, a text file that mentions SQL. High; critical when a dump holds rows (INSERT or COPY) or a config backup sets a password ' +
    'or secret to a literal value. Evidence: path, format, table and setting names, never values.',
  severity: 'high',
  fix: {
    generic:
      'Delete the dumps, archives and backup copies from the served directory and keep backups outside the web root. If a dump or ' +
      'config backup was served, treat what it holds as leaked: change the database password and the secret keys, and tell users ' +
      'whose data was in it.',
    vercel:
      'Remove the files from the repository and the Output Directory (they are served as static files) and list backups in ' +
      '.vercelignore:\n*.sql\n*.bak\n*.zip\n*.tar.gz',
    netlify:
      'Remove the files from the publish directory. Until a deploy without them, in netlify.toml:\n[[redirects]]\n  from = ' +
      '"/backup.sql"\n  to = "/404.html"\n  status = 404\n  force = true\n(repeat for each file).',
    nextjs: 'Next.js serves everything in public/ as is: remove the dumps, archives and backups from public/ and redeploy.',
    nginx:
      'Remove the files; until then, in the server block:\nlocation ~* \\.(?:sql|bak|old|orig|save|swp|tar\\.gz|tgz|zip|7z|rar)$ {\n  ' +
      'return 404;\n}\nlocation ~ ~$ {\n  return 404;\n}',
    cloudflare:
      'Remove the files at the origin. Meanwhile: Security > WAF > Custom rules > (http.request.uri.path matches ' +
      '"\\\\.(sql|bak|zip|tar\\\\.gz)$" or ends_with(http.request.uri.path, "~")) -> Block.',
    apache:
      'Remove the files; until then, in .htaccess or the <Directory> block:\n<FilesMatch "(\\.(sql|bak|old|orig|save|swp|zip|tgz|7z|rar)|\\.tar\\.gz|~)$">\n  Require all denied\n</FilesMatch>',
    express: "Do not serve the project root: express.static('public') with only built assets in public/, and keep backups elsewhere.",
    django: 'Serve only STATIC_ROOT and MEDIA_ROOT; never point a web server at the project folder where settings.py.bak lies.',
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = BACKUP_PROBES.map((path) =>
      confirmByContent(path, probes, 'a dump, archive or config backup', (body, probe) => readBackup(path, body, probe)),
    )
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'dumps, archives or config backups')
    let severity: Severity = 'high'
    const files = served.map(({ path, probe, found }) => {
      severity = worseSeverity(severity, severityOf(found))
      const base = { path, ...probeEvidence(probe) }
      if (found.kind === 'sql-dump')
        return {
          ...base,
          kind: found.kind,
          dialect: found.dialect,
          tables: found.tables,
          dataStatements: found.dataStatements,
          accountData: found.credentialColumns,
        }
      if (found.kind === 'archive') return { ...base, kind: found.kind, format: found.format, firstEntry: found.firstEntry }
      return { ...base, kind: found.kind, language: found.language, names: found.names, credentials: found.credentials, values: 'redacted' }
    })
    const paths = files.map((f) => f.path)
    const dump = served.find((s) => s.found.kind === 'sql-dump' && s.found.dataStatements > 0)
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary: `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served${dump ? `, including a SQL dump with data (${dump.path})` : ''}.`,
    }
  },
})
