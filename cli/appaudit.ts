#!/usr/bin/env bun
// appaudit: gates a build on an App Audit scan or whole-site audit, over MCP. It is a client of the
// service and nothing more: it imports only shared/ types and the capped body reader, never api/ or
// crawler/. The gate needs only the free tools (scan_app, audit_app, get_audit, get_account); reports
// (export_report) and baselines by id (compare_scans) need the Launch plan, and a baseline file works on
// any plan.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { readCappedBytes } from '../shared/lib/http-body.ts'
import type { Report } from '../shared/report/schema.ts'
import type { AuditResult } from '../shared/report/audit-report.ts'
import pkg from '../package.json' with { type: 'json' }
import { HELP, type Options, parseCommandLine } from './args.ts'
import { connect, Failure, mcpUrlOf, type Service, usage } from './client.ts'
import { baselineOf, compareWithBaseline, type Finding, findingsOfAudit, findingsOfReport, judge, parseBaseline } from './gates.ts'
import {
  bar,
  createProgress,
  EXIT,
  type ExitCode,
  modeOf,
  type Outcome,
  type Progress,
  type Stream,
  summaryJson,
  summaryText,
} from './output.ts'
import { errorMessage } from '../shared/errors.ts'

/** get_audit is polled this often, as the service's docs ask (every 5-10 s). */
const POLL_MS = 5_000
/** A poll that fails (network blip, 5xx) is tolerated this many times in a row during a long audit. */
const POLL_FAILURES_TOLERATED = 3
/** Bounds of the calls that are not the long wait itself. */
const CALL_TIMEOUT_MS = 30_000
const EXPORT_TIMEOUT_MS = 120_000

interface Io {
  stdout: Stream
  stderr: Stream
  sleep?: (ms: number) => Promise<void>
}

export async function main(argv: string[], env: Record<string, string | undefined>, io: Io): Promise<ExitCode> {
  const mode = modeOf(env, io.stderr)
  const wantsJson = argv.includes('--json')
  const outcome: Outcome = { exitCode: EXIT.passed }
  const progress = createProgress(io.stderr, mode)
  let options: Options | undefined
  try {
    const line = parseCommandLine(argv, env)
    if (line.kind === 'help') {
      io.stdout.write(HELP)
      return EXIT.passed
    }
    if (line.kind === 'version') {
      io.stdout.write(`appaudit ${pkg.version}\n`)
      return EXIT.passed
    }
    options = line.options
    await run(options, outcome, progress, io.sleep)
  } catch (e) {
    const failure = e instanceof Failure ? e : new Failure(EXIT.serviceFailed, 'internal', (e as Error).stack ?? String(e))
    outcome.exitCode = failure.exitCode
    outcome.error = { code: failure.code, message: failure.message }
  }
  progress.end()
  if (outcome.exitCode === EXIT.usage && !options && !wantsJson) {
    io.stderr.write(`appaudit: ${outcome.error?.message}\nRun appaudit --help for usage.\n`)
    return outcome.exitCode
  }
  const color = mode === 'terminal' && Boolean(io.stdout.isTTY) && !env.NO_COLOR
  io.stdout.write(wantsJson ? summaryJson(outcome) : summaryText(outcome, color))
  return outcome.exitCode
}

async function run(o: Options, outcome: Outcome, progress: Progress, sleep = defaultSleep): Promise<void> {
  outcome.command = o.command
  outcome.url = o.target
  outcome.thresholds = { minScore: o.minScore, failOn: o.failOn }
  // Read the baseline file before anything is spent: a wrong path is a usage error, not a failed scan.
  const baseFile = o.baseline?.kind === 'file' ? readBaseline(o.baseline.path) : undefined

  const mcpUrl = mcpUrlOf(o.serviceUrl)
  progress.update(`connecting to ${mcpUrl.origin}`)
  const service = await connect(mcpUrl, o.key, { version: pkg.version, timeoutMs: CALL_TIMEOUT_MS, onRetry: progress.note, sleep })
  try {
    await preflight(service, o)
    const head = o.command === 'scan' ? await scan(service, o, progress) : await audit(service, o, outcome, progress, sleep)
    if (!head) return // an audit that was only started
    Object.assign(outcome, { id: head.id, url: head.url, score: head.score, grade: head.grade, findings: head.findings })

    let newFindings: Finding[] | undefined
    if (baseFile && o.baseline?.kind === 'file') {
      if (originOf(baseFile.url) !== originOf(head.url)) {
        progress.note(`warning: the baseline is of ${baseFile.url}, this ${o.command} of ${head.url}`)
      }
      const cmp = compareWithBaseline(baseFile, head.findings)
      newFindings = cmp.new
      outcome.baseline = {
        source: 'file',
        ref: o.baseline.path,
        new: cmp.new,
        fixed: cmp.fixed.length,
        unchanged: cmp.unchanged.length,
        scoreDelta: typeof baseFile.score === 'number' ? head.score - baseFile.score : undefined,
      }
    } else if (o.baseline?.kind === 'id') {
      progress.update(`comparing with ${o.baseline.id}`)
      const cmp = await service.call<Comparison>(
        'compare_scans',
        { baseScanId: o.baseline.id, headScanId: head.id },
        { timeoutMs: CALL_TIMEOUT_MS * 2 },
      )
      newFindings = (cmp.findings?.new ?? []).map(({ fingerprint, checkId, title, severity, status }) => ({
        fingerprint,
        checkId,
        title,
        severity,
        status,
      }))
      outcome.baseline = {
        source: 'scan',
        ref: o.baseline.id,
        new: newFindings,
        // The lists stop at 50 each (highest impact first); counts has the totals.
        fixed: cmp.counts?.fixed ?? cmp.findings?.fixed?.length ?? 0,
        unchanged: cmp.counts?.unchanged ?? cmp.findings?.unchanged?.length ?? 0,
        scoreDelta: cmp.scoreDelta,
      }
    }
    outcome.verdict = judge(head.score, head.findings, { minScore: o.minScore, failOn: o.failOn }, newFindings)
    outcome.exitCode = outcome.verdict.passed ? EXIT.passed : EXIT.thresholdFailed

    // Saved whatever the verdict: on main the baseline must follow every run, failing ones included.
    if (o.saveBaseline) {
      writeFile(
        o.saveBaseline,
        `${JSON.stringify(baselineOf(o.command, head.id, head.url, head.score, head.findings, new Date()), null, 2)}\n`,
      )
      outcome.savedBaseline = o.saveBaseline
    }
    if (o.format) outcome.report = await exportReport(service, o, head.id, progress)
  } finally {
    await service.close()
  }
}

/** Fails before a scan or an audit is spent when the key's plan lacks a tool the flags need. */
async function preflight(service: Service, o: Options): Promise<void> {
  const needed = [o.format && 'export_report', o.baseline?.kind === 'id' && 'compare_scans'].filter((t): t is string => Boolean(t))
  if (needed.length === 0) return
  const account = await service.call<Account>('get_account', {}, { timeoutMs: CALL_TIMEOUT_MS })
  for (const name of needed) {
    const missing = account.tools?.needsUpgrade?.find((t) => t.name === name)
    if (!missing) continue
    const instead =
      name === 'export_report'
        ? 'drop --format/--output, or use a key of a Launch account'
        : 'use --save-baseline FILE on main and --baseline FILE (any plan), or a key of a Launch account'
    throw new Failure(
      EXIT.usage,
      'plan_required',
      `${name} needs the ${missing.requiredPlan} plan; this key's account is on ${account.plan}: ${instead}. Nothing was scanned.`,
    )
  }
}

interface Head {
  id: string
  url: string
  score: number
  grade: string
  findings: Finding[]
}

async function scan(service: Service, o: Options, progress: Progress): Promise<Head> {
  progress.update(`scan ${o.target}: starting`)
  const report = await service.call<Report>(
    'scan_app',
    { url: o.target, detail: 'full' },
    {
      timeoutMs: o.timeoutS * 1000,
      onprogress: (p) => progress.update(`scan ${bar(p.total ? p.progress / p.total : 0)} ${p.message ?? ''}`.trimEnd()),
    },
  )
  return { id: report.id, url: report.url, score: report.score, grade: report.grade, findings: findingsOfReport(report) }
}

async function audit(service: Service, o: Options, outcome: Outcome, progress: Progress, sleep: typeof defaultSleep): Promise<Head | null> {
  const options = { maxPages: o.maxPages, maxDepth: o.maxDepth }
  const started = await service.call<{ auditId: string; browserViewer: string }>(
    'audit_app',
    { url: o.target, ...(o.maxPages !== undefined || o.maxDepth !== undefined ? { options } : {}) },
    { timeoutMs: CALL_TIMEOUT_MS },
  )
  Object.assign(outcome, { id: started.auditId, status: 'started', browserViewer: started.browserViewer })
  progress.update(`audit ${started.auditId} queued`)
  // The link dies with the crawl: printed the moment it exists, for a person to open now.
  progress.note(`audit ${started.auditId} started; watch the crawl live (until it ends): ${started.browserViewer}`)
  if (!o.wait) return null

  const deadline = Date.now() + o.timeoutS * 1000
  let failures = 0
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0) {
      throw new Failure(
        EXIT.serviceFailed,
        'timeout',
        `the audit did not finish within ${o.timeoutS}s; it goes on: get_audit {"auditId":"${started.auditId}"}`,
      )
    }
    let a: AuditState
    try {
      a = await service.call<AuditState>('get_audit', { auditId: started.auditId }, { timeoutMs: Math.min(CALL_TIMEOUT_MS, left) })
      failures = 0
    } catch (e) {
      if (!(e instanceof Failure) || e.exitCode !== EXIT.serviceFailed || ++failures > POLL_FAILURES_TOLERATED) throw e
      progress.note(`get_audit failed (${e.code}), ${failures} of ${POLL_FAILURES_TOLERATED} tolerated: ${e.message}`)
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())))
      continue
    }
    outcome.status = a.status
    if (a.status === 'completed' && a.result) {
      const r = a.result
      const findings = await auditFindings(service, started.auditId, deadline)
      return {
        id: started.auditId,
        url: a.url,
        score: r.score,
        grade: r.grade,
        findings: findingsOfAudit({ url: a.url, findings }),
      }
    }
    if (a.status === 'failed' || a.status === 'cancelled') {
      const code = a.error?.code ?? (a.status === 'cancelled' ? 'audit_cancelled' : 'audit_failed')
      throw new Failure(EXIT.serviceFailed, code, a.error?.message ?? `the audit was ${a.status}`)
    }
    const p = a.progress
    const pages = p?.pagesDiscovered
      ? `${p.pagesScanned} of ${p.pagesDiscovered} pages scanned${p.pagesFailed ? ` (${p.pagesFailed} failed)` : ''}`
      : ''
    const fraction = p && p.pagesDiscovered > 0 ? p.pagesScanned / p.pagesDiscovered : 0
    progress.update(`audit ${a.status} ${bar(fraction)} ${pages}${p?.currentUrl ? ` · ${p.currentUrl}` : ''}`.trimEnd())
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())))
  }
}

/** The most pages of findings read from one audit: 100 a page, far beyond any real audit. */
const MAX_FINDING_PAGES_READ = 500

/** get_audit answers with a summary: the gate reads every finding, a section page at a time. */
async function auditFindings(service: Service, auditId: string, deadline: number): Promise<AuditResult['findings']> {
  const findings: AuditResult['findings'] = []
  let cursor: string | null = null
  for (let page = 0; page < MAX_FINDING_PAGES_READ; page++) {
    const left = deadline - Date.now()
    if (left <= 0) throw new Failure(EXIT.serviceFailed, 'timeout', `reading the findings of audit ${auditId} did not finish in time`)
    const answer: { items: AuditResult['findings']; nextCursor: string | null } = await service.call(
      'get_audit',
      { auditId, section: 'findings', limit: 100, ...(cursor ? { cursor } : {}) },
      { timeoutMs: Math.min(CALL_TIMEOUT_MS, left) },
    )
    findings.push(...answer.items)
    cursor = answer.nextCursor
    if (!cursor) return findings
  }
  throw new Failure(EXIT.serviceFailed, 'bad_answer', `audit ${auditId} has more than ${MAX_FINDING_PAGES_READ} pages of findings`)
}

async function exportReport(service: Service, o: Options, id: string, progress: Progress): Promise<NonNullable<Outcome['report']>> {
  progress.update(`export_report ${o.format}`)
  const which = id.startsWith('aud_') ? { auditId: id } : { scanId: id }
  const answer = await service.call<ExportAnswer>('export_report', { ...which, format: o.format }, { timeoutMs: EXPORT_TIMEOUT_MS })
  // The file name the service suggests is used only as a bare name in the working directory: a service
  // (or anyone on an http link) must not choose where on the runner a file is written.
  const path = o.output ?? safeFileName(answer.filename, `appaudit-${id}.${o.format}`)
  let body: string | Uint8Array
  if (typeof answer.content === 'string') body = answer.content
  else if (answer.url) {
    // Large reports come as a short-lived link: a plain GET, no key sent along.
    const res = await fetch(answer.url, { signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS) }).catch((e: Error) => {
      throw new Failure(EXIT.serviceFailed, 'export_download', `could not download the report: ${e.message}`)
    })
    if (!res.ok) throw new Failure(EXIT.serviceFailed, 'export_download', `the report link answered ${res.status}`)
    const { body: bytes, truncated } = await readCappedBytes(res.body, MAX_EXPORT_BYTES)
    if (truncated) throw new Failure(EXIT.serviceFailed, 'export_download', `the report is larger than ${MAX_EXPORT_BYTES} bytes`)
    body = bytes
  } else throw new Failure(EXIT.serviceFailed, 'bad_answer', 'export_report answered with neither content nor url')
  writeFile(path, body)
  return { format: answer.format ?? o.format!, path, bytes: typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength }
}

function readBaseline(path: string) {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw usage(`--baseline ${path}: ${errorMessage(e)}`)
  }
  const parsed = parseBaseline(text)
  if (typeof parsed === 'string') throw usage(`--baseline ${path}: ${parsed}`)
  return parsed
}

/** The largest report the command downloads. */
const MAX_EXPORT_BYTES = 50 * 1024 * 1024

/** A bare file name of safe characters, or the fallback. */
export function safeFileName(suggested: string | undefined, fallback: string): string {
  const name = basename(suggested ?? '')
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$/.test(name) ? name : fallback
}

function writeFile(path: string, body: string | Uint8Array) {
  try {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, body)
  } catch (e) {
    throw usage(`cannot write ${path}: ${errorMessage(e)}`)
  }
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}
const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

interface Account {
  plan: string
  tools?: { needsUpgrade?: Array<{ name: string; requiredPlan: string }> }
}

interface AuditState {
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled'
  url: string
  progress?: { pagesDiscovered: number; pagesScanned: number; pagesFailed: number; currentUrl: string | null }
  error?: { code: string; message: string }
  /** Once completed: the summary of the result (its findings are read by section). */
  result?: Pick<AuditResult, 'score' | 'grade'>
}

/** compare_scans' answer, as far as the gate reads it. */
interface Comparison {
  scoreDelta?: number
  findings?: { new?: Finding[]; fixed?: unknown[]; unchanged?: unknown[] }
  counts?: { new: number; fixed: number; unchanged: number }
}

interface ExportAnswer {
  format?: string
  filename?: string
  bytes?: number
  content?: string
  url?: string
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr })
  // Let stdout drain into a pipe before leaving: a CI step reads the summary from it.
  await new Promise<void>((r) => process.stdout.write('', () => r()))
  process.exit(code)
}
