// Runs the whole test suite in shards: several `bun test` processes side by side, each over its share of the
// test files, balanced by how long each file took when measured. Much of the suite waits (on timers, on
// Chromium, on a crawl's wall-time cap), so two shards on two cores finish far sooner than one, and each
// file still runs alone in its own process as before. Every shard has a deadline.
//
//   bun scripts/run-tests.ts                 every test file, TEST_SHARDS shards (default 2)
//   bun scripts/run-tests.ts test/e2e        only these paths (one shard, output as it comes)
//
// Prints each shard's output whole, then one closing line: "test: N passed, N failed".
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const TIMEOUT_ARGS = ['--timeout', '120000']
/** A shard still running after this long is killed and counts as failed. */
const SHARD_DEADLINE_MS = 75 * 60_000

/** Seconds each heavy file took in a serial run on a 2-core machine; any other file counts as one. */
const MEASURED_S: Record<string, number> = {
  'test/crawler/audit/crawl.test.ts': 163,
  'test/e2e/audit-faults.test.ts': 53,
  'test/e2e/faults.test.ts': 26,
  'test/cli/appaudit.test.ts': 25,
  'test/api/viewer.test.ts': 25,
  'test/e2e/audit.test.ts': 24,
  'test/e2e/audit-viewer.test.ts': 22,
  'test/e2e/scan.test.ts': 20,
  'test/e2e/fixtures.test.ts': 17,
  'test/crawler/viewer/screencast.test.ts': 15,
  'test/fuzz/http-fuzz.test.ts': 15,
  'test/shared/infra.test.ts': 13,
  'test/shared/infra-redis-down.test.ts': 6,
  'test/e2e/dashboard-browser.test.ts': 6,
  'test/api/mcp-transport.test.ts': 5,
  'test/shared/egress/proxy.test.ts': 5,
  'test/e2e/ssrf.test.ts': 5,
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
const shardCount = Math.max(1, Math.min(8, Number(process.env.TEST_SHARDS ?? 2) || 2))

/** Longest files first, each to the shard with the least work so far. */
function shard(list: string[], n: number): string[][] {
  const shards = Array.from({ length: n }, () => ({ files: [] as string[], seconds: 0 }))
  const weight = (f: string) => MEASURED_S[f] ?? 1
  for (const f of [...list].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const least = shards.reduce((m, s) => (s.seconds < m.seconds ? s : m))
    least.files.push(f)
    least.seconds += weight(f)
  }
  return shards.map((s) => s.files).filter((s) => s.length > 0)
}

interface ShardRun {
  index: number
  files: string[]
  code: number | null
  output: string
  ms: number
}

const scratch = mkdtempSync(join(tmpdir(), 'appaudit-tests-'))
async function runShard(index: number, shardFiles: string[]): Promise<ShardRun> {
  const out = join(scratch, `shard-${index}.log`)
  const t0 = performance.now()
  const p = Bun.spawn([process.execPath, 'test', ...TIMEOUT_ARGS, ...shardFiles.map((f) => `./${f}`)], {
    cwd: ROOT,
    stdout: Bun.file(out),
    stderr: Bun.file(`${out}.err`),
    stdin: 'ignore',
    timeout: SHARD_DEADLINE_MS,
    killSignal: 'SIGKILL',
  })
  const code = await p.exited
  const output = readFileSync(out, 'utf8') + readFileSync(`${out}.err`, 'utf8')
  return { index, files: shardFiles, code, output, ms: performance.now() - t0 }
}

const plan = shard(files, shardCount)
console.log(`${files.length} test files in ${plan.length} shard(s), run side by side`)
const t0 = performance.now()
const runs = await Promise.all(plan.map((f, i) => runShard(i + 1, f)))
rmSync(scratch, { recursive: true, force: true })

let passed = 0
let failed = 0
for (const r of runs) {
  console.log(`\n===== shard ${r.index}/${runs.length}: ${r.files.length} files, ${(r.ms / 1000).toFixed(1)} s, exit ${r.code} =====`)
  console.log(r.output.trimEnd())
  const pass = Number(/^\s*(\d+) pass$/m.exec(r.output)?.[1] ?? 0)
  const fail = Number(/^\s*(\d+) fail$/m.exec(r.output)?.[1] ?? 0)
  passed += pass
  // A shard that died or was killed without reporting a failure still failed.
  failed += fail || (r.code === 0 ? 0 : 1)
}
console.log(`\nshards: ${runs.map((r) => `${relative(ROOT, r.files[0] ?? '')}... ${(r.ms / 1000).toFixed(0)} s`).join(' | ')}`)
console.log(`wall time ${((performance.now() - t0) / 1000).toFixed(1)} s`)
console.log(`test: ${passed} passed, ${failed} failed`)
process.exit(failed === 0 && runs.every((r) => r.code === 0) ? 0 : 1)
