// Every check against bodies shaped to trap its patterns, timed. The tests bound how many times the checks
// read these bodies (test/shared/checks/exposure.test.ts, with test/harness/regex-work.ts); time spent
// backtracking inside one pattern is seen only here. Each of the 64 KiB adversarial bodies is served at
// every probed path, as the main page (four times over), as a source map, as the rendered page, eight API
// answers and the API probes' answers, and all checks run on it.
//
//   bun bench/check-traps.ts [--quick] [--result=FILE]
//
// Prints, per body, the best and median of the runs, and the whole set's total: 2 s on a quiet 2-core
// machine was the old test's limit (measured there: well under it); 2.2 s was seen at a load of 11-24.
import { CHECKS } from '../shared/checks/registry.ts'
import { runCheck } from '../shared/checks/runner.ts'
import { PROBE_PATHS } from '../shared/checks/probe-paths.ts'
import { ADVERSARIAL_BODIES, apiArtifacts, makeArtifacts, probe } from '../test/shared/checks/artifacts.ts'
import { flag, fmtMs, summarize, table, writeResult } from './lib/stats.ts'

const runs = flag('quick') === true ? 3 : 10

function artifactsFor(body: string) {
  return makeArtifacts({
    mainResponse: { body: body.repeat(4), status: 500 },
    probes: Object.fromEntries(PROBE_PATHS.map((p) => [p, probe(p, body, 500, 'text/plain')])),
    sourceMaps: [probe('/a.js.map', body, 200, 'application/json')],
    // As the page's HTML, eight of its API answers and the API probes' answers.
    ...apiArtifacts(body),
  })
}

const rows = [['body', 'best', 'median']]
const perBody: Array<{ body: string; bestMs: number; medianMs: number }> = []
let totalBest = 0
for (const body of ADVERSARIAL_BODIES) {
  const samples: number[] = []
  for (let r = 0; r < runs; r++) {
    // Fresh artifacts each run: a check may keep what it derived from one.
    const a = artifactsFor(body)
    const t0 = performance.now()
    for (const check of CHECKS) runCheck(check, a)
    samples.push(performance.now() - t0)
  }
  const s = summarize(samples)
  const name = JSON.stringify(body.slice(0, 24))
  perBody.push({ body: name, bestMs: s.min, medianMs: s.median })
  totalBest += s.min
  rows.push([name, fmtMs(s.min), fmtMs(s.median)])
}
rows.push(['all bodies (sum of bests)', fmtMs(totalBest), ''])
console.log(table(rows))
await writeResult({ runs, totalBestMs: totalBest, perBody })
