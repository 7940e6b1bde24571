// The result file of compare.ts (--result=FILE) as the Markdown tables of docs/real-apps.md.
//   bun bench/real-apps/markdown.ts FILE
import { readFileSync } from 'node:fs'
import { GROUND_TRUTH } from './ground-truth.ts'

interface Slim {
  app: string
  oursMs: number
  wapitiMs: number | null
  items: { id: string; local: boolean; ours: string | null; wapiti: string | null }[]
  falseAlarms: string[]
  wapitiError: string | null
  wapitiInterrupted?: boolean
}

const s = (ms: number | null) => (ms == null || !Number.isFinite(ms) ? 'n/a' : `${(ms / 1000).toFixed(1)} s`)
const run = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as { date: string; load: number[]; results: Slim[] }
const out: string[] = []
for (const r of run.results) {
  const what = new Map((GROUND_TRUTH[r.app] ?? []).map((i) => [i.id, i.what]))
  out.push(`### ${r.app}`, '', '| ground truth item | ours (check) | Wapiti (module) |', '|---|---|---|')
  for (const i of r.items) out.push(`| ${i.local ? '*(local)* ' : ''}${what.get(i.id)} | ${i.ours ?? '-'} | ${i.wapiti ?? '-'} |`)
  const counted = r.items.filter((i) => !i.local)
  const us = counted.filter((i) => i.ours).length
  const them = counted.filter((i) => i.wapiti).length
  out.push(`| **found, of ${counted.length}** | **${us}** | **${r.wapitiError ? 'no report' : them}** |`)
  out.push(`| time | ${s(r.oursMs)} | ${s(r.wapitiMs)}${r.wapitiInterrupted ? ' (interrupted at its limit)' : ''} |`, '')
  out.push(
    `Ours on the careful configuration, medium or above: ${r.falseAlarms.length ? r.falseAlarms.map((f) => `\`${f}\``).join('; ') : 'none'}.`,
    '',
  )
}
console.log(out.join('\n').replaceAll('$', '\\$'))
