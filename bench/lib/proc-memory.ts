// Memory of a process tree from /proc: the resident set summed over the tree (cheap, read often), and at a
// moment of interest the proportional set (each shared page divided among the processes that map it, so
// Chromium's binary, mapped by every one of its processes, counts once) with the resident set by kind of
// process. The resident sum counts a shared page once per process that maps it: a tree of more processes
// reads heavier than the memory it holds.
import { readFileSync } from 'node:fs'
import { descendantsOf, readAll, type ProcStat } from '../capacity-lib/cpu.ts'

const PAGE_BYTES = 4096

/**
 * A Chromium process's kind from its command line (/proc/<pid>/cmdline): browser, renderer, gpu-process,
 * zygote, utility:<service>. A process forked from the zygote rewrites its command line as one string,
 * arguments joined by spaces; others keep NUL between them.
 */
export function kindFromCmdline(cmdline: string): string {
  const args = cmdline.split(/[\0 ]/)
  const type = args.find((a) => a.startsWith('--type='))?.slice(7)
  if (!type) return 'browser'
  if (type !== 'utility') return type
  const sub = args.find((a) => a.startsWith('--utility-sub-type='))?.slice(19) ?? ''
  return `utility:${sub.split('.')[0]}`
}

/** `root` and every process below it, each with its stat (its command name among them). */
function tree(root: number): ProcStat[] {
  const all = readAll()
  return [root, ...descendantsOf(root, all)].flatMap((pid) => all.get(pid) ?? [])
}

/** The resident set of `root` and every process below it, in bytes. */
export function treeRssBytes(root: number): number {
  let total = 0
  for (const { pid } of tree(root)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE_BYTES
    } catch {}
  }
  return total
}

export interface TreeMemory {
  rssMb: number
  pssMb: number
  /** Per kind (Chromium's process types; other processes by command name): how many, resident and proportional MB. */
  byKind: Record<string, { n: number; rssMb: number; pssMb: number }>
}

const kb = (rollup: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) / 1024

/** The tree's resident and proportional sets, by kind of process (/proc/<pid>/smaps_rollup: a few ms a process). */
export function treeMemory(root: number): TreeMemory {
  const out: TreeMemory = { rssMb: 0, pssMb: 0, byKind: {} }
  for (const { pid, comm } of tree(root)) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
      const kind = /chrom/i.test(comm) ? kindFromCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8')) : comm
      const rss = kb(rollup, 'Rss')
      const pss = kb(rollup, 'Pss')
      const k = (out.byKind[kind] ??= { n: 0, rssMb: 0, pssMb: 0 })
      k.n++
      k.rssMb += rss
      k.pssMb += pss
      out.rssMb += rss
      out.pssMb += pss
    } catch {
      // The process ended while we looked.
    }
  }
  return out
}

/** "bun 226, browser 108, renderer 4 x 120, ..." by resident MB, heaviest first. */
export function formatByKind(byKind: TreeMemory['byKind']): string {
  return Object.entries(byKind)
    .sort((a, b) => b[1].rssMb - a[1].rssMb)
    .map(([kind, k]) => `${kind} ${k.n > 1 ? `${k.n} x ${(k.rssMb / k.n).toFixed(0)}` : k.rssMb.toFixed(0)}`)
    .join(', ')
}
