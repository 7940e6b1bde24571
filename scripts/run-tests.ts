// Runs the whole test suite, each test file in its own `bun test` process, TEST_JOBS of them at a time
// (default 2). A file never shares its process with another file's leftovers (a service still stopping, a
// heap grown by an earlier file), so what a file measures about its own process (the fuzz run's event-loop
// stalls, memory) is its own. The heavy files (real Chromium crawls with wall-time deadlines) run one at a
// time, longest first, beside the light ones, so two crawls never starve each other's page deadlines on a
// 2-core machine. Every file has a deadline.
//
//   bun scripts/run-tests.ts                 every test file
//   bun scripts/run-tests.ts test/e2e        only these paths (one plain bun test, output as it comes)
//   TEST_JOBS=1 bun scripts/run-tests.ts     one file at a time
//
// Prints each file's output whole as it finishes, the slowest files, then one closing line:
// "test: N passed, N failed".
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const TIMEOUT_ARGS = ['--timeout', '120000']
/** A file still running after this long is killed and counts as failed. */
const FILE_DEADLINE_MS = 20 * 60_000

/**
 * Seconds each heavy file took alone on a 2-core machine. These run one at a time (they drive Chromium
 * against wall-time deadlines); every other file is light and counts as one second.
 */
const HEAVY_S: Record<string, number> = {
  'test/crawler/audit/crawl.test.ts': 172,
  'test/e2e/audit-faults.test.ts': 65,
  'test/e2e/audit-authenticated.test.ts': 51,
  'test/e2e/replicas.test.ts': 44,
  // Its tests take about 160 s (scans, an audit and a pod in the containers), its build of the images
  // seconds to a minute once podman has the layers: scripts/test starts the build in the background before
  // the suite, and this file, second in line, waits for that build when it is not done yet.
  'test/k8s/images.test.ts': 150,
  'test/e2e/audit.test.ts': 41,
  'test/e2e/faults.test.ts': 39,
  'test/e2e/audit-viewer.test.ts': 35,
  'test/api/viewer.test.ts': 33,
  'test/e2e/scan.test.ts': 33,
  'test/cli/appaudit.test.ts': 31,
  'test/cli/bundle.test.ts': 70,
  'test/e2e/directory-runs.test.ts': 28,
  'test/e2e/fixtures.test.ts': 22,
  'test/e2e/viewer-replay.test.ts': 10,
  // Several scans at once, or axe against deadlines: beside a crawl they starve it and it starves them.
  'test/crawler/gather/axe.test.ts': 60,
  'test/api/mcp-output-schema.test.ts': 30,
  'test/api/tools-read.test.ts': 12,
  'test/crawler/pod-cost.test.ts': 6,
  'test/crawler/viewer/screencast.test.ts': 20,
  'test/e2e/dashboard-browser.test.ts': 6,
  'test/e2e/report-pages-browser.test.ts': 6,
  'test/e2e/dashboard-layout.test.ts': 30,
  'test/e2e/mcp-app.test.ts': 6,
  'test/e2e/csp-advice.test.ts': 6,
  'test/e2e/patches.test.ts': 6,
}

const args = process.argv.slice(2)
if (args.length > 0) {
  // A subset: one plain bun test, its output straight through.
  const p = Bun.spawn([process.execPath, 'test', ...TIMEOUT_ARGS, ...args], {
    cwd: ROOT,
    stdout: 'inherit',
    stderr: 'inherit',
    stdin: 'ignore',
  })
  process.exit(await p.exited)
}

const files = [...new Bun.Glob('test/**/*.test.ts').scanSync({ cwd: ROOT })].sort()
const jobs = Math.max(1, Math.min(8, Number(process.env.TEST_JOBS ?? 2) || 2))
const isHeavy = (f: string) => f in HEAVY_S
const weight = (f: string) => HEAVY_S[f] ?? 1

interface FileRun {
  file: string
  code: number | null
  output: string
  ms: number
  pass: number
  fail: number
}

const scratch = mkdtempSync(join(tmpdir(), 'appaudit-tests-'))
let seq = 0
async function runFile(file: string): Promise<FileRun> {
  const out = join(scratch, `${++seq}.log`)
  const t0 = performance.now()
  const p = Bun.spawn([process.execPath, 'test', ...TIMEOUT_ARGS, `./${file}`], {
    cwd: ROOT,
    stdout: Bun.file(out),
    stderr: Bun.file(`${out}.err`),
    stdin: 'ignore',
    timeout: FILE_DEADLINE_MS,
    killSignal: 'SIGKILL',
  })
  const code = await p.exited
  const output = readFileSync(out, 'utf8') + readFileSync(`${out}.err`, 'utf8')
  const pass = Number(/^\s*(\d+) pass$/m.exec(output)?.[1] ?? 0)
  // A file that died or was killed without reporting a failure still failed.
  const fail = Number(/^\s*(\d+) fail$/m.exec(output)?.[1] ?? 0) || (code === 0 ? 0 : 1)
  return { file, code, output, ms: performance.now() - t0, pass, fail }
}

/**
 * The lines that say why a file failed: for each "(fail)" line, up to 20 lines before it (bun prints the
 * error first), at most 120 lines in all; the output's last lines when no test says it failed (a crash, a
 * deadline).
 */
function failureExcerpt(output: string): string {
  const lines = output.split('\n')
  const picked: string[] = []
  let from = 0
  for (let i = 0; i < lines.length && picked.length < 120; i++) {
    if (!lines[i]!.startsWith('(fail)')) continue
    const start = Math.max(from, i - 20)
    picked.push(...lines.slice(start, i + 1).map((l) => `  ${l.slice(0, 300)}`))
    from = i + 1
  }
  if (picked.length === 0) picked.push(...lines.slice(-30).map((l) => `  ${l.slice(0, 300)}`))
  return picked.slice(0, 120).join('\n')
}

// Longest first, so the long heavy files start early and the light ones fill the gaps at the end.
const queue = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))
let heavyRunning = false
const results: FileRun[] = []
console.log(
  `${files.length} test files, each in its own process, ${jobs} at a time (heavy files one at a time); load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} on ${cpus().length} cores`,
)
const t0 = performance.now()

/** The next file this worker may start: the first in the queue, unless it is heavy while another heavy runs. */
function take(): string | undefined {
  const i = queue.findIndex((f) => !(isHeavy(f) && heavyRunning))
  return i < 0 ? undefined : queue.splice(i, 1)[0]
}

async function worker(): Promise<void> {
  for (let guard = 0; guard < files.length * 1000 && queue.length > 0; guard++) {
    const file = take()
    if (!file) {
      // Only heavy files are left and one is running: wait for it.
      await Bun.sleep(200)
      continue
    }
    const heavy = isHeavy(file)
    if (heavy) heavyRunning = true
    try {
      const r = await runFile(file)
      results.push(r)
      console.log(`\n===== ${file}: ${(r.ms / 1000).toFixed(1)} s, ${r.pass} pass, ${r.fail} fail, exit ${r.code} =====`)
      console.log(r.output.trimEnd())
    } finally {
      if (heavy) heavyRunning = false
    }
  }
}

await Promise.all(Array.from({ length: jobs }, () => worker()))
rmSync(scratch, { recursive: true, force: true })

const passed = results.reduce((n, r) => n + r.pass, 0)
const failed = results.reduce((n, r) => n + r.fail, 0)
const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 15)
console.log(`\nslowest files:\n${slowest.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.file}`).join('\n')}`)
const failedFiles = results.filter((r) => r.fail > 0 || r.code !== 0)
if (failedFiles.length) {
  // Again at the end, where a reader of only the last lines of the output finds them: each failed test with
  // what bun printed just before it (the assertion, its source line and the values).
  for (const r of failedFiles) console.log(`\nfailed in ${r.file} (exit ${r.code}):\n${failureExcerpt(r.output)}`)
  console.log(`\nfiles with failures:\n${failedFiles.map((r) => `  ${r.file}`).join('\n')}`)
}
console.log(
  `load average at the end: ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} on ${cpus().length} cores`,
)
console.log(`wall time ${((performance.now() - t0) / 1000).toFixed(1)} s`)
console.log(`test: ${passed} passed, ${failed} failed`)
process.exit(failed === 0 && results.length === files.length && results.every((r) => r.code === 0) ? 0 : 1)
