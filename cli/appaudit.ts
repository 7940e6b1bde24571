#!/usr/bin/env bun
// appaudit: gates a build on an App Audit scan or whole-site audit, over MCP. It is a client of the
// service and nothing more: it imports only shared/, never api/ or crawler/. The gate and the SARIF,
// JUnit and Markdown reports need only the free tools (scan_app, audit_app, get_audit, get_account): the
// command writes those reports itself with the service's own writers. The HTML report (export_report) and
// baselines by id (compare_scans) need the Launch plan; a baseline file works on any plan. It ships to CI
// as one bundled file, dist/appaudit.js (bun run build:cli), that needs nothing installed but bun.
import { readFileSync } from 'node:fs'
import type { Report } from '../shared/report/schema.ts'
import type { AuditResult } from '../shared/report/audit-report.ts'
import { modelOfAudit, modelOfScan, type ReportModel } from '../shared/report/export/model.ts'
import pkg from '../package.json' with { type: 'json' }
import { HELP, type Options, parseCommandLine } from './args.ts'
import { connect, Failure, mcpUrlOf, type Service, usage } from './client.ts'
import {
  baselineOf,
  compareWithBaseline,
  type Finding,
  findingsOfAudit,
  findingsOfReport,
  judge,
  parseBaseline,
  unguardedNotice,
} from './gates.ts'
import { exportReport, writeFile, writeReport, writesItself } from './reports.ts'
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
  // On GitHub Actions the notice is also an annotation, shown on the run's summary page.
  if (outcome.notice && env.GITHUB_ACTIONS === 'true') io.stderr.write(`::warning title=App Audit::${workflowText(outcome.notice)}\n`)
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
    outcome.notice = unguardedNotice(head.findings, { minScore: o.minScore, failOn: o.failOn }, Boolean(o.baseline))

    // Saved whatever the verdict: on main the baseline must follow every run, failing ones included.
    if (o.saveBaseline) {
      writeFile(
        o.saveBaseline,
        `${JSON.stringify(baselineOf(o.command, head.id, head.url, head.score, head.findings, new Date()), null, 2)}\n`,
      )
      outcome.savedBaseline = o.saveBaseline
    }
    if (o.format && writesItself(o.format)) {
      progress.update(`writing the ${o.format} report`)
      // Links to the check docs point at the service, as export_report's do: its base URL, /api/mcp cut off.
      const baseUrl = mcpUrl.href.replace(/\/api\/mcp$/, '')
      outcome.report = writeReport(await head.model(), o.format, o, { baseUrl, version: pkg.version })
    } else if (o.format) outcome.report = await exportReport(service, o, head.id, progress)
  } finally {
    await service.close()
  }
}

/** Fails before a scan or an audit is spent when the key's plan lacks a tool the flags need. */
async function preflight(service: Service, o: Options): Promise<void> {
  const needed = [o.format === 'html' && 'export_report', o.baseline?.kind === 'id' && 'compare_scans'].filter((t): t is string =>
    Boolean(t),
  )
  if (needed.length === 0) return
  const account = await service.call<Account>('get_account', {}, { timeoutMs: CALL_TIMEOUT_MS })
  for (const name of needed) {
    const missing = account.tools?.needsUpgrade?.find((t) => t.name === name)
    if (!missing) continue
    const instead =
      name === 'export_report'
        ? 'use --format sarif, junit or markdown (any plan), or a key of a Launch account'
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
  /** The whole report as the export writers read it (an audit reads its checks for it, once asked). */
  model(): Promise<ReportModel>
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
  const model = async () =>
    modelOfScan({ id: report.id, url: report.url, createdAt: new Date(report.createdAt), platformSignals: null }, report)
  return { id: report.id, url: report.url, score: report.score, grade: report.grade, findings: findingsOfReport(report), model }
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
      const findings = await readSection<AuditResult['findings'][number]>(service, started.auditId, 'findings', deadline)
      const model = async () => {
        const checks = await readSection<AuditCheckItem>(service, started.auditId, 'checks', deadline)
        return auditModel(started.auditId, a, findings, checks)
      }
      return { id: started.auditId, url: a.url, score: r.score, grade: r.grade, findings: findingsOfAudit({ url: a.url, findings }), model }
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

/** The most pages of a section read from one audit: 100 items a page, far beyond any real audit. */
const MAX_SECTION_PAGES_READ = 500

/** get_audit answers with a summary: the findings and the checks are read a section page at a time. */
async function readSection<T>(service: Service, auditId: string, section: 'findings' | 'checks', deadline: number): Promise<T[]> {
  const items: T[] = []
  let cursor: string | null = null
  for (let page = 0; page < MAX_SECTION_PAGES_READ; page++) {
    const left = deadline - Date.now()
    if (left <= 0) throw new Failure(EXIT.serviceFailed, 'timeout', `reading the ${section} of audit ${auditId} did not finish in time`)
    const answer: { items: T[]; nextCursor: string | null } = await service.call(
      'get_audit',
      { auditId, section, limit: 100, ...(cursor ? { cursor } : {}) },
      { timeoutMs: Math.min(CALL_TIMEOUT_MS, left) },
    )
    items.push(...answer.items)
    cursor = answer.nextCursor
    if (!cursor) return items
  }
  throw new Failure(EXIT.serviceFailed, 'bad_answer', `audit ${auditId} has more than ${MAX_SECTION_PAGES_READ} pages of ${section}`)
}

/** A check as get_audit's checks section lists it: a site-wide one with its summary and evidence. */
type AuditCheckItem = AuditResult['checks'][number] & { siteWide?: boolean; summary?: string; evidence?: Record<string, unknown> }

/** The audit's result as the export writers read it, put together from its summary and two sections. */
function auditModel(auditId: string, a: AuditState, findings: AuditResult['findings'], checks: AuditCheckItem[]): ReportModel {
  const r = a.result!
  const siteChecks = checks
    .filter((c) => c.siteWide)
    .map((c) => ({ ...c, summary: c.summary ?? '', evidence: c.evidence ?? {} })) as unknown as AuditResult['siteChecks']
  const result = { ...r, url: a.url, findings, checks, siteChecks, pages: [] } as unknown as AuditResult
  return modelOfAudit({ id: auditId, url: a.url, createdAt: new Date(a.createdAt ?? Date.now()) }, result)
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

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}
/** A workflow command's message: its own escapes for %, CR and LF, so the text cannot end the command. */
const workflowText = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
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
  createdAt?: string
  /** Once completed: the summary of the result (its findings and checks are read by section). */
  result?: Pick<AuditResult, 'score' | 'grade' | 'checksVersion' | 'summary'>
}

/** compare_scans' answer, as far as the gate reads it. */
interface Comparison {
  scoreDelta?: number
  findings?: { new?: Finding[]; fixed?: unknown[]; unchanged?: unknown[] }
  counts?: { new: number; fixed: number; unchanged: number }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr })
  // Let stdout drain into a pipe before leaving: a CI step reads the summary from it.
  await new Promise<void>((r) => process.stdout.write('', () => r()))
  process.exit(code)
}
