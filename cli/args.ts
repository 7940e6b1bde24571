// The command line: node:util parseArgs, then every rule a flag must meet, checked before anything is sent
// so a typo costs neither a scan nor an audit from the weekly allowance. Breaking a rule is exit 2.
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { usage } from './client.ts'
import { FAIL_ON_LEVELS, type FailOn } from './gates.ts'
import { errorMessage } from '../shared/errors.ts'
import { repositoryPathOf } from '../shared/report/export/sarif.ts'

export const FORMATS = ['sarif', 'junit', 'markdown', 'html'] as const
export type Format = (typeof FORMATS)[number]

export const DEFAULT_TIMEOUT_S = { scan: 120, audit: 1200 } as const

export const HELP = `appaudit: gate a build on an App Audit scan or whole-site audit.

Usage:
  appaudit scan <url> [options]     scan one page (seconds)
  appaudit audit <url> [options]    crawl the whole site (minutes); add --wait to gate on the result
  appaudit --help | --version

Service:
  --url URL            the service's base URL (default $APPAUDIT_URL); /api/mcp is appended
  --key KEY            an act_ API key or mca_ token (default $APPAUDIT_KEY; prefer the variable:
                       a flag shows in process lists)

Gates (findings are the checks that failed or warned, each with its check's severity):
  --min-score N        fail when the score is below N (0-100)
  --fail-on LEVEL      fail on a finding at or above LEVEL: critical, high, medium or low
  --baseline REF       count only findings that are new since REF: a scan or audit id (scn_..., aud_...;
                       compared by the service's compare_scans, Launch plan) or a file written by
                       --save-baseline (any plan). With a baseline and no --fail-on, any new finding of
                       low severity or above fails. The score stays absolute.
  --save-baseline FILE write this run's id, URL and findings to FILE for a later --baseline FILE

Reports (any plan: written by the command from the report it already has; html: export_report, Launch):
  --format FORMAT      sarif, junit, markdown or html
  --output FILE        where to write it (default appaudit-<id>.<format>); without --format the format
                       follows from .sarif, .xml, .md or .html
  --sarif-path PATH    SARIF: the repository file (from its root) to locate every result at, e.g.
                       vercel.json; default, a path made of the page's host and path (see docs/ci.md)
  --json               print the result as JSON on stdout (progress stays on stderr)

Audits:
  --max-pages N        most pages to crawl (1-500, service default 50)
  --max-depth N        most link hops from the URL (0-10, service default 3)
  --wait               wait for the result; needed for gates, reports and baselines. Without it the
                       command prints the audit id and the live-view link and exits 0
  --timeout SECONDS    longest wait (default ${DEFAULT_TIMEOUT_S.audit} for an audit, ${DEFAULT_TIMEOUT_S.scan} for a scan)

Output is a progress line on a terminal, plain lines in CI (CI=true, or stderr not a terminal).

Exit codes:
  0  passed, or no threshold was given
  1  a threshold failed: the score is below --min-score, or a finding is at or above --fail-on
     (with --baseline, only new findings count)
  2  usage or configuration error: a bad flag, no service URL or key, an unreadable baseline file, a
     target URL the service rejects, a tool the key's plan lacks (plan_required: --format html and
     --baseline SCAN_ID need the Launch plan)
  3  the service or the target failed: service unreachable, key refused (401), target_blocked,
     target_unreachable, scan_failed, scanner_unavailable, audit failed or cancelled, rate_limited
     after 3 retries, no answer within --timeout
`

export interface Options {
  command: 'scan' | 'audit'
  target: string
  serviceUrl: string
  key: string
  minScore?: number
  failOn?: FailOn
  format?: Format
  output?: string
  /** SARIF: the repository path every result is located at. */
  sarifPath?: string
  baseline?: { kind: 'id'; id: string } | { kind: 'file'; path: string }
  saveBaseline?: string
  json: boolean
  maxPages?: number
  maxDepth?: number
  wait: boolean
  timeoutS: number
}

export type CommandLine = { kind: 'help' } | { kind: 'version' } | { kind: 'run'; options: Options }

const FLAGS = {
  url: { type: 'string' },
  key: { type: 'string' },
  'min-score': { type: 'string' },
  'fail-on': { type: 'string' },
  format: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'sarif-path': { type: 'string' },
  baseline: { type: 'string' },
  'save-baseline': { type: 'string' },
  json: { type: 'boolean' },
  'max-pages': { type: 'string' },
  'max-depth': { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const

const ID = /^(scn|aud)_[0-9A-Za-z]+$/
const FORMAT_BY_EXTENSION: ReadonlyArray<readonly [RegExp, Format]> = [
  [/\.sarif(\.json)?$/i, 'sarif'],
  [/\.xml$/i, 'junit'],
  [/\.(md|markdown)$/i, 'markdown'],
  [/\.html?$/i, 'html'],
]

const parse = (args: string[]) => parseArgs({ args, options: FLAGS, allowPositionals: true, strict: true })

/** Throws a usage Failure (exit 2) naming the first rule broken. */
export function parseCommandLine(argv: string[], env: Record<string, string | undefined>): CommandLine {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (e) {
    throw usage(errorMessage(e))
  }
  const v = parsed.values
  if (v.help) return { kind: 'help' }
  if (v.version) return { kind: 'version' }

  const { command, target } = commandAndTarget(parsed.positionals)
  const serviceUrl = v.url ?? env.APPAUDIT_URL ?? ''
  const key = v.key ?? env.APPAUDIT_KEY ?? ''
  if (!serviceUrl) throw usage('no service URL: set APPAUDIT_URL (the service base URL) or pass --url')
  if (!key) throw usage('no key: set APPAUDIT_KEY (an act_ key or mca_ token) or pass --key')

  if (command === 'scan') {
    for (const flag of ['max-pages', 'max-depth', 'wait'] as const) {
      if (v[flag] !== undefined) throw usage(`--${flag} is for audit, not scan`)
    }
  }

  const format = formatOf(v.format, v.output)
  const failOn = failOnOf(v['fail-on'])
  const baseline = baselineOf(v.baseline)
  const options: Options = {
    command,
    target,
    serviceUrl,
    key,
    minScore: integer(v['min-score'], 'min-score', 0, 100),
    failOn,
    format,
    output: v.output,
    sarifPath: sarifPathOf(v['sarif-path'], format),
    baseline,
    saveBaseline: v['save-baseline'],
    json: v.json ?? false,
    maxPages: integer(v['max-pages'], 'max-pages', 1, 500),
    maxDepth: integer(v['max-depth'], 'max-depth', 0, 10),
    wait: command === 'scan' || (v.wait ?? false),
    timeoutS: integer(v.timeout, 'timeout', 1, 86_400) ?? DEFAULT_TIMEOUT_S[command],
  }
  if (command === 'audit' && !options.wait) refuseGatesWithoutWait(options)
  return { kind: 'run', options }
}

function commandAndTarget(positionals: string[]): { command: Options['command']; target: string } {
  const [command, target, ...extra] = positionals
  if (command === undefined) throw usage('no command: use appaudit scan <url> or appaudit audit <url> (see --help)')
  if (command !== 'scan' && command !== 'audit') throw usage(`unknown command ${JSON.stringify(command)}: use scan or audit`)
  if (target === undefined) throw usage(`no URL to ${command}: appaudit ${command} <url>`)
  if (extra.length > 0) throw usage(`unexpected argument ${JSON.stringify(extra[0])}`)
  if (!isHttpUrl(target)) throw usage(`${JSON.stringify(target)} is not an absolute http or https URL`)
  return { command, target }
}

/** --format, else the one --output's extension names. */
function formatOf(raw: string | undefined, output: string | undefined): Format | undefined {
  if (raw !== undefined) {
    if (!(FORMATS as readonly string[]).includes(raw)) throw usage(`--format must be one of ${FORMATS.join(', ')}`)
    return raw as Format
  }
  if (output === undefined) return undefined
  const format = FORMAT_BY_EXTENSION.find(([re]) => re.test(output))?.[1]
  if (!format) throw usage(`--output ${output}: give --format (${FORMATS.join(', ')}); the extension does not say which`)
  return format
}

function sarifPathOf(raw: string | undefined, format: Format | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (format !== 'sarif') throw usage('--sarif-path is for --format sarif')
  if (!repositoryPathOf(raw)) throw usage(`--sarif-path ${raw}: give a path inside the repository, relative to its root (e.g. vercel.json)`)
  return raw
}

function failOnOf(raw: string | undefined): FailOn | undefined {
  if (raw === undefined) return undefined
  if (!(FAIL_ON_LEVELS as readonly string[]).includes(raw)) throw usage(`--fail-on must be one of ${FAIL_ON_LEVELS.join(', ')}`)
  return raw as FailOn
}

function baselineOf(raw: string | undefined): Options['baseline'] {
  if (raw === undefined) return undefined
  // A file wins over an id-shaped name, so a file called scn_x is still read as a file.
  if (existsSync(raw)) return { kind: 'file', path: raw }
  if (ID.test(raw)) return { kind: 'id', id: raw }
  throw usage(`--baseline ${raw}: no such file, and not a scan or audit id (scn_..., aud_...)`)
}

/** Gating on an audit that was only started would pass every build: refuse rather than pass silently. */
function refuseGatesWithoutWait(options: Options): void {
  const needsResult = [
    ['--min-score', options.minScore],
    ['--fail-on', options.failOn],
    ['--baseline', options.baseline],
    ['--save-baseline', options.saveBaseline],
    ['--format/--output', options.format],
  ].find(([, value]) => value !== undefined)
  if (needsResult) throw usage(`${needsResult[0]} needs the audit's result: add --wait`)
}

function integer(raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max)
    throw usage(`--${flag} must be a whole number from ${min} to ${max}`)
  return Number(raw)
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s)
    return u.protocol === 'http:' || u.protocol === 'https:'
  } catch {
    return false
  }
}
