// What the command prints. Two audiences: a person at a terminal gets one progress line redrawn in place;
// a CI log (not a TTY, or CI=true) gets plain lines, one per change, because carriage returns and escape
// codes turn a build log into noise. Progress and notices go to stderr, the result to stdout, so
// `--json > result.json` still shows progress.
import type { Finding, Verdict } from './gates.ts'

export const EXIT = { passed: 0, thresholdFailed: 1, usage: 2, serviceFailed: 3 } as const
export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

export interface Stream {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

export type Mode = 'terminal' | 'ci'

/** CI mode unless stderr is a terminal and CI is unset or false. */
export function modeOf(env: Record<string, string | undefined>, stderr: Stream): Mode {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0'
  return !ci && stderr.isTTY ? 'terminal' : 'ci'
}

export interface Progress {
  /** A progress update: redrawn in place on a terminal; in CI a line, only when the text changed. */
  update(text: string): void
  /** A line that stays: the viewer link, a retry, a warning. */
  note(text: string): void
  /** Clears the progress line before the result is printed. */
  end(): void
}

export function createProgress(stream: Stream, mode: Mode, now: () => number = Date.now): Progress {
  const started = now()
  let last = ''
  let drawn = false
  const elapsed = () => `${Math.round((now() - started) / 1000)}s`
  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K')
    drawn = false
  }
  const update = (text: string) => {
    if (text === last) return
    last = text
    if (mode === 'ci') {
      stream.write(`[${elapsed()}] ${text}\n`)
      return
    }
    // Cut to the terminal's width so the line never wraps (a wrapped line cannot be redrawn with \r).
    // A pseudo-terminal without a size reports 0 columns: assume 80 then.
    const width = Math.max(20, (stream.columns || 80) - 1)
    const line = `${text} (${elapsed()})`
    clear()
    stream.write(line.length > width ? `${line.slice(0, width - 1)}…` : line)
    drawn = true
  }
  return {
    update,
    note(text) {
      clear()
      stream.write(mode === 'ci' ? `[${elapsed()}] ${text}\n` : `${text}\n`)
      if (mode === 'terminal' && last) {
        // Put the progress line back under the note.
        const again = last
        last = ''
        update(again)
      }
    },
    end: clear,
  }
}

/** A progress bar for a fraction, e.g. [######----] 60%. */
export function bar(fraction: number, width = 20): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0))
  const full = Math.round(f * width)
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}] ${String(Math.round(f * 100)).padStart(3)}%`
}

/** Everything the command found out, for the closing summary or --json. */
export interface Outcome {
  exitCode: ExitCode
  command?: 'scan' | 'audit'
  id?: string
  url?: string
  status?: string
  score?: number
  grade?: string
  findings?: Finding[]
  thresholds?: { minScore?: number; failOn?: string }
  verdict?: Verdict
  /** Said beside a pass that no threshold guarded (gates.ts unguardedNotice). */
  notice?: string
  baseline?: { source: 'scan' | 'file'; ref: string; new: Finding[]; fixed: number; unchanged: number; scoreDelta?: number }
  report?: { format: string; path: string; bytes: number }
  savedBaseline?: string
  browserViewer?: string
  error?: { code: string; message: string }
}

const RESULT_WORD: Record<ExitCode, string> = {
  0: 'passed',
  1: 'threshold failed',
  2: 'usage or configuration error',
  3: 'service or target failed',
}

export function summaryText(o: Outcome, color: boolean): string {
  const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s)
  const lines: string[] = []
  if (o.id) {
    const counts = o.findings ? countBySeverity(o.findings) : ''
    const score = o.score !== undefined ? `score ${o.score} (${o.grade ?? '?'})` : (o.status ?? '')
    lines.push(`${o.command ?? 'scan'} ${o.id} of ${o.url ?? '?'}: ${score}${counts ? `, ${counts}` : ''}`)
  }
  if (o.browserViewer && o.score === undefined) lines.push(`live view: ${o.browserViewer}`)
  if (o.baseline) {
    const b = o.baseline
    const delta = b.scoreDelta !== undefined ? `, score ${b.scoreDelta >= 0 ? '+' : ''}${b.scoreDelta}` : ''
    lines.push(`baseline ${b.ref} (${b.source}): ${b.new.length} new, ${b.fixed} fixed, ${b.unchanged} unchanged${delta}`)
    for (const f of b.new) lines.push(`  new: ${f.checkId} (${f.severity}, ${f.status}) ${f.title}`)
  }
  if (o.verdict) {
    for (const f of o.verdict.failures) lines.push(`${paint('31', 'FAIL')} ${f}`)
    if (o.verdict.passed && (o.thresholds?.minScore !== undefined || o.thresholds?.failOn || o.baseline)) {
      lines.push(`${paint('32', 'PASS')} ${describeThresholds(o)}`)
    }
  }
  if (o.notice) lines.push(`${paint('33', 'NOTE')} ${o.notice}`)
  if (o.report) lines.push(`report: ${o.report.path} (${o.report.format}, ${o.report.bytes} bytes)`)
  if (o.savedBaseline) lines.push(`baseline saved: ${o.savedBaseline}`)
  if (o.error) lines.push(`${paint('31', 'error')} ${o.error.code}: ${o.error.message}`)
  const word = RESULT_WORD[o.exitCode]
  lines.push(`result: ${o.exitCode === 0 ? paint('32', word) : paint('31', word)} (exit ${o.exitCode})`)
  return `${lines.join('\n')}\n`
}

function describeThresholds(o: Outcome): string {
  const parts: string[] = []
  if (o.thresholds?.minScore !== undefined) parts.push(`score ${o.score} >= ${o.thresholds.minScore}`)
  const failOn = o.thresholds?.failOn ?? (o.baseline ? 'low' : undefined)
  if (failOn) parts.push(`no ${o.baseline ? 'new ' : ''}finding at or above ${failOn}`)
  return parts.join('; ')
}

function countBySeverity(findings: Finding[]): string {
  if (findings.length === 0) return 'no findings'
  const by = new Map<string, number>()
  for (const f of findings) by.set(f.severity, (by.get(f.severity) ?? 0) + 1)
  const order = ['critical', 'high', 'medium', 'low', 'info'].filter((s) => by.has(s))
  return `${findings.length} finding${findings.length === 1 ? '' : 's'} (${order.map((s) => `${by.get(s)} ${s}`).join(', ')})`
}

/** The --json document: the outcome with the result spelt out. */
export function summaryJson(o: Outcome): string {
  return `${JSON.stringify({ result: RESULT_WORD[o.exitCode], ...o }, null, 2)}\n`
}
