// The Lighthouse side: its programmatic API in a long-lived node process with one warm Chromium
// (lighthouse-runner.mjs), or its CLI, one node process and one fresh Chromium per run, as users run it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { withTimeout } from '../lib/stats.ts'
import { nodePath } from './observatory.ts'

const ROOT = join(import.meta.dir, '..', '..')
const RUNNER = join(import.meta.dir, 'lighthouse-runner.mjs')
const CLI = join(ROOT, 'node_modules', 'lighthouse', 'cli', 'index.js')
export const LIGHTHOUSE_RUN_TIMEOUT_MS = 180_000

export interface LighthouseRun {
  /** Wall time as the caller waits for it. */
  ms: number
  /** Lighthouse's own total (lhr.timing.total). */
  lhTotalMs: number | null
  categories: Record<string, number | null>
  runtimeError: string | null
  /** The URL Lighthouse ended on (API runs only). */
  finalUrl?: string | null
  /** The audits that did not pass, when the runner was asked for them (API runs only). */
  findings?: LighthouseFinding[]
}

/** An audit that did not pass, as lighthouse-runner.mjs sums it up. */
export interface LighthouseFinding {
  id: string
  title: string
  /** The asked categories the audit belongs to (empty for an extra audit). */
  categories: string[]
  /** Lighthouse's scoreDisplayMode: binary, numeric, metricSavings, or informative. */
  mode: string
  score: number | null
  displayValue: string | null
  /** Its table rows in a few words (issue type, "High: No CSP found...", URL, element), the first dozen. */
  labels: string[]
  rows: number
}

/** What the runner lists besides the category scores: the audits of these categories that did not pass. */
export interface FindingsRequest {
  categories: string[]
  /** Audits outside those categories to list as well. */
  extra?: string[]
}

export function lighthouseVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'lighthouse', 'package.json'), 'utf8')) as { version: string }).version
}

/** Reads a byte stream as lines, one at a time. */
class Lines {
  private reader: ReadableStreamDefaultReader<Uint8Array>
  private buf = ''
  private decoder = new TextDecoder()
  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader()
  }
  async next(): Promise<string | null> {
    for (let i = 0; i < 1_000_000; i++) {
      const nl = this.buf.indexOf('\n')
      if (nl >= 0) {
        const line = this.buf.slice(0, nl)
        this.buf = this.buf.slice(nl + 1)
        return line
      }
      const { done, value } = await this.reader.read()
      if (done) {
        const rest = this.buf
        this.buf = ''
        return rest || null
      }
      this.buf += this.decoder.decode(value, { stream: true })
    }
    return null
  }
  /** The next line that parses as a JSON object (Lighthouse or Chromium may print other lines). */
  async nextJson(): Promise<Record<string, unknown>> {
    for (let i = 0; i < 10_000; i++) {
      const line = await this.next()
      if (line === null) throw new Error('the Lighthouse runner exited')
      const t = line.trim()
      if (!t.startsWith('{')) continue
      try {
        return JSON.parse(t) as Record<string, unknown>
      } catch {}
    }
    throw new Error('no JSON line from the Lighthouse runner')
  }
}

export interface LighthouseApi {
  version: string
  /** The runner's node process (its Chromium runs below it). */
  pid: number
  launchMs: number
  /** One run on the URL the runner was started with, or on `url`. */
  run(url?: string): Promise<LighthouseRun>
  stop(): Promise<void>
}

/** Starts the runner: node + Lighthouse loaded, Chromium launched and kept for every run. */
export async function startLighthouseApi(
  url: string,
  chromePath: string | undefined,
  chromeFlags: string[],
  opts: { findings?: FindingsRequest } = {},
): Promise<LighthouseApi> {
  const spec = { url, chromePath, chromeFlags, ...(opts.findings ? { findings: opts.findings } : {}) }
  const proc: Subprocess<'pipe', 'pipe', 'inherit'> = Bun.spawn([nodePath(), RUNNER, JSON.stringify(spec)], {
    cwd: ROOT,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, ...(chromePath ? { CHROME_PATH: chromePath } : {}) },
  })
  const lines = new Lines(proc.stdout)
  let ready: Record<string, unknown>
  try {
    ready = await withTimeout(lines.nextJson(), 60_000, 'Lighthouse runner start')
    if (typeof ready.error === 'string') throw new Error(ready.error)
  } catch (e) {
    proc.kill('SIGKILL')
    throw e
  }
  return {
    version: String(ready.lighthouseVersion),
    pid: proc.pid,
    launchMs: Number(ready.launchMs),
    async run(runUrl?: string) {
      if (runUrl !== undefined && /\s/.test(runUrl)) throw new Error(`Lighthouse: a URL with white space: ${runUrl}`)
      proc.stdin.write(runUrl === undefined ? 'run\n' : `run ${runUrl}\n`)
      proc.stdin.flush()
      const r = await withTimeout(lines.nextJson(), LIGHTHOUSE_RUN_TIMEOUT_MS, 'Lighthouse run')
      if (typeof r.error === 'string') throw new Error(`Lighthouse: ${r.error}`)
      return {
        ms: Number(r.ms),
        lhTotalMs: typeof r.lhTotalMs === 'number' ? r.lhTotalMs : null,
        categories: (r.categories ?? {}) as Record<string, number | null>,
        runtimeError: typeof r.runtimeError === 'string' ? r.runtimeError : null,
        finalUrl: typeof r.finalUrl === 'string' ? r.finalUrl : null,
        ...(Array.isArray(r.findings) ? { findings: r.findings as LighthouseFinding[] } : {}),
      }
    },
    async stop() {
      try {
        proc.stdin.write('quit\n')
        proc.stdin.end()
      } catch {}
      const exited = await withTimeout(proc.exited, 15_000, 'Lighthouse runner stop').catch(() => null)
      if (exited === null) proc.kill('SIGKILL')
    },
  }
}

/** One run of Lighthouse's CLI: a node process that launches its own Chromium, timed from spawn to exit. */
export async function runLighthouseCli(url: string, chromePath: string | undefined, chromeFlags: string[]): Promise<LighthouseRun> {
  const dir = mkdtempSync(join(tmpdir(), 'lighthouse-cli-'))
  const out = join(dir, 'report.json')
  const t0 = performance.now()
  const proc = Bun.spawn(
    [nodePath(), CLI, url, `--chrome-flags=${chromeFlags.join(' ')}`, '--output=json', `--output-path=${out}`, '--quiet'],
    { cwd: ROOT, stdout: 'ignore', stderr: 'pipe', env: { ...process.env, ...(chromePath ? { CHROME_PATH: chromePath } : {}) } },
  )
  try {
    const stderr = new Response(proc.stderr).text()
    const code = await withTimeout(proc.exited, LIGHTHOUSE_RUN_TIMEOUT_MS, 'Lighthouse CLI').catch((e) => {
      proc.kill('SIGKILL')
      throw e
    })
    const ms = performance.now() - t0
    if (code !== 0) throw new Error(`Lighthouse CLI exited ${code}: ${(await stderr).slice(-400)}`)
    const lhr = JSON.parse(readFileSync(out, 'utf8')) as {
      timing?: { total?: number }
      categories?: Record<string, { score: number | null }>
      runtimeError?: { code?: string }
    }
    return {
      ms,
      lhTotalMs: lhr.timing?.total ?? null,
      categories: Object.fromEntries(Object.entries(lhr.categories ?? {}).map(([id, c]) => [id, c.score])),
      runtimeError: lhr.runtimeError?.code ?? null,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
