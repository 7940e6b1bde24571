// Runs every benchmark, one after the other, each in its own process (so neither inherits the
// other's warm caches, connections or garbage), then prints a short summary table.
//
//   bun bench/run.ts                  full runs (about 6 minutes with the comparisons, plus the crawl
//                                     benchmark's 30 to 60 minutes)
//   bun bench/run.ts --quick          short runs
//   bun bench/run.ts --skip-compare   without the Observatory, Lighthouse and planted-problem comparisons
//   options passed on to every bench: --quick
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AuditAnswerResult } from './audit-answer-size.ts'
import type { CrawlThroughputResult } from './crawl-throughput.ts'
import type { ThroughputResult } from './mcp-throughput.ts'
import type { LatencyResult } from './scan-latency.ts'
import type { ToolAnswerSizeResult } from './tool-answer-size.ts'
import { flag, fmtInt, fmtMs, fmtRatio, table, withTimeout } from './lib/stats.ts'
import { errorMessage } from '../shared/errors.ts'

const quick = flag('quick') === true
const scratch = mkdtempSync(join(tmpdir(), 'appaudit-bench-run-'))

async function runBench<T>(name: string, limitMs: number): Promise<T | { error: string }> {
  const resultFile = join(scratch, `${name}.json`)
  const args = [process.execPath, join(import.meta.dir, `${name}.ts`), `--result=${resultFile}`, ...(quick ? ['--quick'] : [])]
  console.log(`\n## ${name}\n`)
  const proc = Bun.spawn(args, { stdout: 'inherit', stderr: 'inherit', stdin: 'ignore' })
  const code = await withTimeout(proc.exited, limitMs, name).catch((e) => {
    proc.kill('SIGTERM')
    return errorMessage(e)
  })
  if (code !== 0) return { error: typeof code === 'string' ? code : `exited with ${code}` }
  try {
    return (await Bun.file(resultFile).json()) as T
  } catch (e) {
    return { error: `no result: ${errorMessage(e)}` }
  }
}

const isError = (r: unknown): r is { error: string } => typeof r === 'object' && r !== null && 'error' in r

try {
  const throughput = await runBench<ThroughputResult>('mcp-throughput', quick ? 120_000 : 300_000)
  const latency = await runBench<LatencyResult>('scan-latency', quick ? 300_000 : 900_000)
  const answers = await runBench<AuditAnswerResult>('audit-answer-size', quick ? 300_000 : 600_000)
  const tools = await runBench<ToolAnswerSizeResult>('tool-answer-size', quick ? 600_000 : 900_000)
  const crawl = await runBench<CrawlThroughputResult>('crawl-throughput', quick ? 1_800_000 : 5_400_000)

  const rows = [['benchmark', 'ours', 'reference', 'ratio', 'target', 'status']]
  if (isError(throughput)) rows.push(['mcp tools/list req/s', 'failed', '', '', '', throughput.error])
  else {
    rows.push([
      'mcp tools/list req/s',
      fmtInt(throughput.oursRps),
      `${fmtInt(throughput.bareRps)} (bare)`,
      fmtRatio(throughput.ratio),
      `ratio >= ${throughput.target}`,
      throughput.ratio >= throughput.target ? 'met' : 'NOT met',
    ])
  }
  if (isError(latency)) rows.push(['scan_app median', 'failed', '', '', '', latency.error])
  else {
    for (const m of latency.modes) {
      rows.push([
        `scan_app median (${m.mode})`,
        fmtMs(m.scan.median),
        `${fmtMs(m.pageLoad.median)} (page load)`,
        fmtRatio(m.ratio),
        `< ${fmtMs(latency.target)}`,
        m.scan.median < latency.target ? 'met' : 'NOT met',
      ])
    }
  }
  if (isError(answers)) rows.push(['get_audit answer', 'failed', '', '', '', answers.error])
  else {
    for (const s of answers.sizes) {
      rows.push([
        `get_audit default answer (${s.pages} pages)`,
        `${fmtInt(s.defaultBytes)} B`,
        `${fmtInt(s.fullBytes)} B (full result)`,
        fmtRatio(s.defaultBytes / s.fullBytes),
        `< ${fmtInt(answers.targetBytes)} B`,
        s.defaultBytes < answers.targetBytes ? 'met' : 'NOT met',
      ])
    }
    rows.push([
      `get_audit median (${answers.timing.pages} pages)`,
      fmtMs(answers.timing.mcp.median),
      `${fmtMs(answers.timing.service.median)} (service only)`,
      '',
      `< ${fmtMs(answers.targetMedianMs)}`,
      answers.timing.mcp.median < answers.targetMedianMs ? 'met' : 'NOT met',
    ])
  }
  if (isError(tools)) rows.push(['tool answers', 'failed', '', '', '', tools.error])
  else {
    const careless = (tool: string) => tools.sizes.find((s) => s.page === 'careless' && s.tool === tool)
    for (const [tool, key, target] of [
      ['scan_app', 'structured', tools.targets.scanStructured],
      ['scan_app', 'both', tools.targets.scanBoth],
      ['get_scan', 'structured', tools.targets.scanStructured],
      ['get_scan', 'both', tools.targets.scanBoth],
      ['get_fix_brief', 'structured', tools.targets.fixBrief],
    ] as const) {
      const s = careless(tool)
      const full = careless('get_scan detail:"full"')
      rows.push([
        `${tool} ${key} (careless page)`,
        s ? `${fmtInt(s[key])} B` : 'n/a',
        full && !full.isError ? `${fmtInt(full[key])} B (get_scan full)` : '',
        s && full && !full.isError ? fmtRatio(s[key] / full[key]) : '',
        `<= ${fmtInt(target)} B`,
        s && s[key] <= target ? 'met' : 'NOT met',
      ])
    }
  }
  if (isError(crawl)) rows.push(['crawl pages/min', 'failed', '', '', '', crawl.error])
  else {
    for (const b of crawl.byConcurrency) {
      rows.push([
        `crawl pages/min (c=${b.concurrency})`,
        fmtInt(b.ours),
        `${fmtInt(b.crawlee)} (Crawlee)`,
        fmtRatio(b.ratio),
        `ratio >= ${crawl.target}`,
        b.ratio >= crawl.target ? 'met' : 'NOT met',
      ])
    }
  }
  console.log(`\n## summary${quick ? ' (quick)' : ''}\n`)
  console.log(table(rows))
  let failed = isError(throughput) || isError(latency) || isError(answers) || isError(tools) || isError(crawl)
  if (flag('skip-compare') !== true) {
    // The comparisons print their own tables: agreement per Observatory test, Lighthouse vs scan_app, and the
    // planted problems each tool finds on the fixture sites.
    for (const name of ['observatory-compare', 'lighthouse-compare', 'exposure-compare']) {
      console.log(`\n## ${name}\n`)
      const proc = Bun.spawn([process.execPath, join(import.meta.dir, `${name}.ts`), ...(quick ? ['--quick'] : [])], {
        stdout: 'inherit',
        stderr: 'inherit',
        stdin: 'ignore',
      })
      const limitMs = name === 'exposure-compare' ? 1_800_000 : 900_000
      const code = await withTimeout(proc.exited, limitMs, name).catch(() => (proc.kill('SIGTERM'), 1))
      if (code !== 0) failed = true
    }
  }
  process.exitCode = failed ? 1 : 0
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
