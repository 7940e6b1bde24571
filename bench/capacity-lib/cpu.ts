// CPU time from /proc, for the capacity benches: the whole machine (busy jiffies of /proc/stat) and named
// groups of processes (/proc/<pid>/stat). A process's own time is utime + stime; the time of its children
// that have exited and been waited for (cutime + cstime) goes to the group its children belong to, so a
// Chromium renderer that ends between two snapshots is still counted, and counted once. Linux only: elsewhere
// every figure is NaN and the benches say so.
import { readdirSync, readFileSync } from 'node:fs'

/** USER_HZ: /proc reports clock ticks of 1/100 s on Linux. */
const HZ = 100

export interface ProcStat {
  pid: number
  ppid: number
  comm: string
  /** Own CPU (utime + stime), in ticks. */
  own: number
  /** Waited-for children's CPU (cutime + cstime), in ticks. */
  children: number
}

/** Parses one /proc/<pid>/stat line (the command name is in parentheses and may hold spaces). */
export function parseStat(pid: number, text: string): ProcStat | null {
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 0 || close < open) return null
  const rest = text.slice(close + 2).split(' ')
  const n = (i: number) => Number(rest[i] ?? NaN)
  return { pid, ppid: n(1), comm: text.slice(open + 1, close), own: n(11) + n(12), children: n(13) + n(14) }
}

/** Every process's stat, read once. */
export function readAll(): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>()
  let names: string[] = []
  try {
    names = readdirSync('/proc')
  } catch {
    return out
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    try {
      const s = parseStat(Number(name), readFileSync(`/proc/${name}/stat`, 'utf8'))
      if (s) out.set(s.pid, s)
    } catch {}
  }
  return out
}

/**
 * CPU-seconds of a process's children that have ended and been waited for (cutime + cstime): each run of a
 * command the process spawned and reaped, with whatever that command reaped in turn. NaN without /proc.
 */
export function reapedChildrenSeconds(pid = process.pid): number {
  try {
    const s = parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'))
    return s ? s.children / HZ : NaN
  } catch {
    return NaN
  }
}

/** Busy CPU-seconds of the whole machine so far (all CPUs: total minus idle and iowait), NaN without /proc. */
export function machineBusySeconds(): number {
  return machineCpuTimes().busy
}

export type CpuTimes = { busy: number; kernel: number }

/**
 * The machine's busy CPU-seconds so far and the kernel's part of them (system, irq and softirq time), from
 * /proc/stat. Between two readings, kernel / busy is the kernel's share of the work: 38-42% during the
 * benches on a paravirtualized machine (docs/operations.md, "Capacity"), where each page fault and each
 * flush of another core's TLB traps to the hypervisor, so a new renderer and every page of fresh memory cost
 * several times more than elsewhere.
 */
export function machineCpuTimes(): CpuTimes {
  try {
    const v = (readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] as string).trim().split(/\s+/).slice(1).map(Number)
    // user .. steal, less idle and iowait; guest time is already in user
    const busy = v.slice(0, 8).reduce((a, b) => a + b, 0) - (v[3] ?? 0) - (v[4] ?? 0)
    return { busy: busy / HZ, kernel: ((v[2] ?? 0) + (v[5] ?? 0) + (v[6] ?? 0)) / HZ }
  } catch {
    return { busy: NaN, kernel: NaN }
  }
}

/** The kernel's share of the machine's busy CPU since `since` (a machineCpuTimes reading), as a percentage. */
export function kernelSharePct(since: CpuTimes): number {
  const now = machineCpuTimes()
  return ((now.kernel - since.kernel) / (now.busy - since.busy)) * 100
}

/** The pids below `root` (not root itself). */
export function descendantsOf(root: number, all: Map<number, ProcStat>): number[] {
  const kids = new Map<number, number[]>()
  for (const s of all.values()) {
    const list = kids.get(s.ppid)
    if (list) list.push(s.pid)
    else kids.set(s.ppid, [s.pid])
  }
  const out: number[] = []
  const stack = [...(kids.get(root) ?? [])]
  for (let i = 0; i < 100_000 && stack.length; i++) {
    const pid = stack.pop()!
    out.push(pid)
    stack.push(...(kids.get(pid) ?? []))
  }
  return out
}

/**
 * How the benches name groups: `roots` are processes whose own time is the group's (`api`, `crawler`, the
 * bench client, whose own time alone counts with `ownOnly`: the service's processes are its children), and whose descendants, alive or waited for, belong to `childGroup` (the crawler's Chromium);
 * `trees` count a process and all below it (Lighthouse's node and its Chromium); `comms` count every process
 * of that command name on the machine (PostgreSQL's backends, Redis).
 */
export interface GroupSpec {
  roots?: Array<{ group: string; pid: number; childGroup?: string; ownOnly?: boolean }>
  trees?: Array<{ group: string; pid: number }>
  comms?: Array<{ group: string; comm: string | RegExp }>
}

/** CPU-seconds per group now (cumulative; subtract two snapshots). */
export function groupSeconds(spec: GroupSpec, all = readAll()): Record<string, number> {
  const out: Record<string, number> = {}
  const add = (g: string, ticks: number) => {
    if (Number.isFinite(ticks)) out[g] = (out[g] ?? 0) + ticks / HZ
  }
  const seen = new Set<number>()
  for (const r of spec.roots ?? []) {
    out[r.group] ??= 0
    const s = all.get(r.pid)
    if (!s) continue
    seen.add(r.pid)
    add(r.group, s.own)
    if (r.ownOnly) continue
    const below = r.childGroup ?? r.group
    out[below] ??= 0
    add(below, s.children)
    for (const pid of descendantsOf(r.pid, all)) {
      const d = all.get(pid)!
      seen.add(pid)
      add(below, d.own + d.children)
    }
  }
  for (const t of spec.trees ?? []) {
    out[t.group] ??= 0
    const s = all.get(t.pid)
    if (!s) continue
    seen.add(t.pid)
    add(t.group, s.own + s.children)
    for (const pid of descendantsOf(t.pid, all)) {
      const d = all.get(pid)!
      seen.add(pid)
      add(t.group, d.own + d.children)
    }
  }
  for (const c of spec.comms ?? []) {
    out[c.group] ??= 0
    for (const s of all.values()) {
      if (seen.has(s.pid)) continue
      if (typeof c.comm === 'string' ? s.comm === c.comm : c.comm.test(s.comm)) add(c.group, s.own + s.children)
    }
  }
  return out
}

export interface CpuSnapshot {
  at: number
  machine: number
  groups: Record<string, number>
}

export function snapshot(spec: GroupSpec): CpuSnapshot {
  return { at: performance.now(), machine: machineBusySeconds(), groups: groupSeconds(spec) }
}

/** CPU-seconds spent between two snapshots: the machine's, each group's, and the rest of the machine ("other"). */
export function spent(a: CpuSnapshot, b: CpuSnapshot): { wallS: number; machine: number; groups: Record<string, number> } {
  const groups: Record<string, number> = {}
  for (const g of new Set([...Object.keys(a.groups), ...Object.keys(b.groups)]))
    groups[g] = Math.max(0, (b.groups[g] ?? 0) - (a.groups[g] ?? 0))
  const machine = b.machine - a.machine
  const named = Object.values(groups).reduce((x, y) => x + y, 0)
  groups.other = Math.max(0, machine - named)
  return { wallS: (b.at - a.at) / 1000, machine, groups }
}
