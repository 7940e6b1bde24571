// Log files served with the site: package managers' crash logs, framework and PHP error logs, web server
// logs. Recognised by their content (a log's own line format), never by their name.

import { LOG_PROBES } from '../probe-paths.ts'
import { defineCheck, type Severity } from '../types.ts'
import { confirmByContent, confirmedOnly, listPaths, notServedOutcome, probeEvidence } from '../util/probe.ts'
import { scanScripts } from '../util/secrets.ts'
import { findDebugPage } from './debug-error-page.ts'
import { worseSeverity } from '../../report/ranking.ts'

const MAX_LINES = 5_000
/** Lines of a format needed before a body counts as that log. */
const MIN_LINES = 3

interface LogFormat {
  kind: string
  /** A line of this log; a body is this log when MIN_LINES lines match (or its header does). */
  line: RegExp
  /** A header that alone proves the format (npm and yarn write one). */
  header?: RegExp
}

const LOG_FORMATS: readonly LogFormat[] = [
  {
    kind: 'npm-debug',
    header: /^0 (?:verbose|info) (?:cli|it worked if it ends with ok)/m,
    line: /^\d+ (?:verbose|info|silly|error|warn|timing) /m,
  },
  { kind: 'yarn-error', header: /^Arguments:\s*\n\s+\S*node\S* \S*yarn/m, line: /^(?:Yarn version|Node version|Platform|Trace|PATH):/m },
  // [2026-11-01 12:00:00] production.ERROR: message {"exception":"[object] (...)"}
  {
    kind: 'laravel',
    line: /^\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:?\d{2})?\] \w{1,40}\.(?:DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY):/m,
  },
  // [01-Nov-2026 12:00:00 UTC] PHP Warning:  ...
  {
    kind: 'php-error',
    line: /^\[\d{2}-[A-Z][a-z]{2}-\d{4} \d{2}:\d{2}:\d{2}(?: [A-Za-z/_+-]{1,40})?\] PHP (?:Fatal error|Parse error|Warning|Notice|Deprecated|Stack trace)/m,
  },
  // [Sun Nov 01 12:00:00.123456 2026] [php:error] [pid 123] ...
  { kind: 'apache-error', line: /^\[[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \d{4}\] \[[\w:]{1,40}\] /m },
  // 2026/11/01 12:00:00 [error] 123#123: *1 ...
  { kind: 'nginx-error', line: /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} \[(?:debug|info|notice|warn|error|crit|alert|emerg)\] \d+#\d+: /m },
  // 127.0.0.1 - - [01/Nov/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 123
  {
    kind: 'access-log',
    line: /^[\d.:a-f]{3,45} \S{1,100} \S{1,100} \[\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] "[A-Z]{3,10} /m,
  },
  // 2026-11-01T12:00:00.000Z ERROR something / 2026-11-01 12:00:00,123 WARN [main] ...
  {
    kind: 'application-log',
    line: /^\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\]?\s{1,4}\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\]?\b/im,
  },
]

export interface LogFile {
  kind: string
  lines: number
  errorLines: number
  /** Stack traces in it (a framework's or a runtime's), by the debug-error-page rules. */
  stackTrace: string | null
  /** Provider secrets and connection strings in it, redacted. */
  secrets: Array<{ kind: string; redacted: string }>
}

/** The log format a body is written in, by its lines; null when it is not a log. */
export function readLog(body: string): LogFile | null {
  const lines = body.split('\n', MAX_LINES)
  for (const format of LOG_FORMATS) {
    const lineOnly = new RegExp(format.line.source, format.line.flags.replace('m', ''))
    const matching = lines.filter((l) => lineOnly.test(l)).length
    if (matching < MIN_LINES && !(format.header?.test(body) && matching >= 1)) continue
    const trace = findDebugPage({ url: '', status: 500, body })
    return {
      kind: format.kind,
      lines: lines.length,
      errorLines: lines.filter((l) => /\b(?:ERROR|error|Fatal error|CRITICAL|crit|emerg|ERR!)\b/.test(l)).length,
      stackTrace: trace?.framework ?? null,
      secrets: scanScripts([{ url: '', inline: false, body }])
        .filter((f) => f.exposure === 'secret')
        .slice(0, 5)
        .map((f) => ({ kind: f.kind, redacted: f.redacted })),
    }
  }
  return null
}

export const exposedLogFiles = defineCheck({
  id: 'exposed-log-files',
  category: 'exposure',
  title: 'No log files are served',
  failTitle: 'Log files are served',
  description: `Reads what the site returns for ${LOG_PROBES.join(', ')} and judges by the lines whether each is a log.`,
  why:
    'Logs record what the app did and what went wrong: server paths, stack traces, user emails and IP addresses, request URLs with ' +
    'tokens, and at times passwords or connection strings printed by a failing command.',
  confirmation:
    'Confirmed by content, never by name or status: npm-debug.log by its "0 verbose cli" header, yarn-error.log by "Arguments:" and ' +
    'its Yarn/Node version lines, otherwise at least three lines in one log format (Laravel "[date] env.LEVEL:", PHP "[date] PHP ' +
    'Warning:", Apache and nginx error logs, access logs, "date LEVEL" application logs). None may be an HTML page or the answer for a ' +
    'path that cannot exist. Medium; high when it holds a stack trace; critical when it holds a credential (a provider key or a ' +
    'connection string with a password). Evidence: path, log format, line counts, the trace\u2019s framework, credentials by kind and ' +
    'redacted, never log lines.',
  severity: 'medium',
  fix: {
    generic:
      'Write logs outside the served directory and delete the ones there; if a log held a credential, rotate it. Block *.log at the ' +
      'web server.',
    vercel: 'Remove the log files from the repository and the output directory (add *.log to .gitignore and .vercelignore).',
    netlify: 'Remove the log files from the publish directory and add *.log to .gitignore so builds never publish them.',
    nextjs: 'Next.js serves public/ as is: delete the logs from public/ and keep npm and app logs out of it (*.log in .gitignore).',
    nginx: 'Remove the files and deny logs in the server block:\nlocation ~* \\.log$ {\n  return 404;\n}',
    cloudflare:
      'Remove the files at the origin; meanwhile Security > WAF > Custom rules: (ends_with(http.request.uri.path, ".log")) -> Block.',
    apache: 'Remove the files; in .htaccess or <Directory>:\n<FilesMatch "\\.log$">\n  Require all denied\n</FilesMatch>',
    express: "Serve only the build output (express.static('dist')), never the project root where npm and yarn write their logs.",
  },
  fixTarget: { kind: 'served-file' },
  requires: ['probes'],
  run: ({ probes }) => {
    const judgements = LOG_PROBES.map((path) => confirmByContent(path, probes, 'a log file', (body) => readLog(body)))
    const served = confirmedOnly(judgements)
    if (served.length === 0) return notServedOutcome(judgements, 'log files')
    let severity: Severity = 'medium'
    const files = served.map(({ path, probe, found }) => {
      if (found.stackTrace) severity = worseSeverity(severity, 'high')
      if (found.secrets.length > 0) severity = worseSeverity(severity, 'critical')
      return { path, ...probeEvidence(probe), ...found }
    })
    const paths = files.map((f) => f.path)
    const secret = files.find((f) => f.secrets.length > 0)
    const trace = files.find((f) => f.stackTrace)
    const detail = secret
      ? `, with a credential in ${secret.path}: ${secret.secrets[0]!.kind} ${secret.secrets[0]!.redacted}`
      : trace
        ? ` (${trace.path} holds a ${trace.stackTrace} stack trace)`
        : ''
    return {
      status: 'fail',
      severity,
      evidence: { url: served[0]!.probe.url, path: served[0]!.path, files },
      summary: `${listPaths(paths)} ${paths.length === 1 ? 'is' : 'are'} served${detail}.`,
    }
  },
})
