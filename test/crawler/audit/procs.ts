// Process-tree helpers for the crawl tests: which Chromium processes descend from a pid, and their memory.
import { execFileSync } from 'node:child_process'

interface Proc {
  pid: number
  ppid: number
  rssKb: number
  comm: string
}

function table(): Proc[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,comm='], { encoding: 'utf8' })
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 4)
    .map(([pid, ppid, rss, ...comm]) => ({ pid: Number(pid), ppid: Number(ppid), rssKb: Number(rss), comm: comm.join(' ') }))
}

/** Every process below `root` (children, grandchildren...). */
export function descendants(root: number): Proc[] {
  const all = table()
  const out: Proc[] = []
  let frontier = [root]
  for (let round = 0; round < 20 && frontier.length > 0; round++) {
    const next = all.filter((p) => frontier.includes(p.ppid))
    out.push(...next)
    frontier = next.map((p) => p.pid)
  }
  return out
}

export const isChromium = (p: Proc) => /chrom/i.test(p.comm)

/** Chromium processes below `root`. */
export const chromiumBelow = (root: number) => descendants(root).filter(isChromium)

/** Renderer processes (by command line) below `root`. */
export function renderersBelow(root: number): number[] {
  const below = new Set(descendants(root).map((p) => p.pid))
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
  return out
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && below.has(Number(m[1])) && m[2]!.includes('--type=renderer'))
    .map((m) => Number(m[1]))
}

/** Whether a pid is still alive (and not a zombie). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  const row = table().find((p) => p.pid === pid)
  return row !== undefined && !/defunct/.test(row.comm)
}

/** RSS in MiB of this process plus every Chromium process below it. */
export function memoryMiB(): { self: number; chromium: number; total: number } {
  const self = process.memoryUsage.rss() / 1024 / 1024
  const chromium = chromiumBelow(process.pid).reduce((s, p) => s + p.rssKb, 0) / 1024
  return { self: Math.round(self), chromium: Math.round(chromium), total: Math.round(self + chromium) }
}
