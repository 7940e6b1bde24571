// The service's processes in the soak: api and crawler slots, each a real `bun server/main.ts` (ROLE=api)
// or `bun server/crawler.ts` child on port 0, with its output appended to a log file. A slot is restarted
// after each kill; every incarnation's resident memory, with its descendants' (Chromium), is sampled from /proc.
import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, readdirSync, readFileSync, type WriteStream } from 'node:fs'
import { join } from 'node:path'
import { withTimeout } from '../lib/stats.ts'

const ROOT = join(import.meta.dir, '..', '..')

export type Role = 'api' | 'crawler'

export interface Incarnation {
  pid: number
  startedAt: number
  readyAt: number | null
  /** Resident memory (KiB) of the process itself, and with its descendants (its Chromium too). */
  rssStart: { own: number; group: number } | null
  rssLast: { own: number; group: number } | null
  rssMaxGroup: number
  /** Descendants (Chromium) still running a second after the process itself was ended, and 60 s after (then killed). */
  orphans: number
  orphansAfter60s: number
  endedAt: number | null
  endedBy: string | null
}

export interface Slot {
  name: string
  role: Role
  proc: ChildProcess | null
  /** An api's MCP endpoint while it is ready. */
  mcpUrl: string | null
  lives: Incarnation[]
}

const alive = (p: ChildProcess | null): p is ChildProcess => p !== null && p.exitCode === null && p.signalCode === null

/** VmRSS of a pid in KiB (0 when it is gone). */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) : 0
  } catch {
    return 0
  }
}

/** Every process's parent, from /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {}
  }
  return out
}

/** The pids below pid in the process tree (a crawler's Chromium, which Playwright starts in a group of its own). */
export function descendants(pid: number): number[] {
  const ppid = parents()
  const out: number[] = []
  const seen = new Set([pid])
  for (let round = 0; round < 64; round++) {
    const next = [...ppid].filter(([c, p]) => seen.has(p) && !seen.has(c)).map(([c]) => c)
    if (!next.length) break
    for (const c of next) {
      seen.add(c)
      out.push(c)
    }
  }
  return out
}

/** Summed VmRSS of the process and its descendants (shared pages counted in each: an upper bound). */
const treeRss = (pid: number) => descendants(pid).reduce((sum, c) => sum + rssOf(c), rssOf(pid))

export function sampleRss(slot: Slot): void {
  const life = slot.lives.at(-1)
  if (!life || life.endedAt !== null || !alive(slot.proc)) return
  const r = { own: rssOf(life.pid), group: treeRss(life.pid) }
  if (r.own === 0) return
  life.rssLast = r
  life.rssStart ??= r
  life.rssMaxGroup = Math.max(life.rssMaxGroup, r.group)
}

export interface ProcEnv {
  env: Record<string, string>
  logDir: string
}

/** Starts the slot's process and resolves once it is ready: an api's banner, a crawler's health server line. */
export async function startSlot(slot: Slot, pe: ProcEnv, readyMs: number): Promise<void> {
  const file = slot.role === 'api' ? 'server/main.ts' : 'server/crawler.ts'
  const log: WriteStream = createWriteStream(join(pe.logDir, `${slot.name}.log`), { flags: 'a' })
  const p = spawn(process.execPath, [file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...pe.env, ROLE: slot.role, PORT: '0', HEALTH_PORT: '0' },
  })
  slot.proc = p
  slot.mcpUrl = null
  const life: Incarnation = {
    pid: p.pid!,
    startedAt: Date.now(),
    readyAt: null,
    rssStart: null,
    rssLast: null,
    rssMaxGroup: 0,
    orphans: 0,
    orphansAfter60s: 0,
    endedAt: null,
    endedBy: null,
  }
  slot.lives.push(life)
  const ready = Promise.withResolvers<void>()
  let buf = ''
  p.stdout!.on('data', (chunk: Buffer) => {
    log.write(chunk)
    if (life.readyAt !== null) return
    buf = (buf + chunk.toString()).slice(-8192)
    const api = /MCP endpoint: (\S+)/.exec(buf)
    if (slot.role === 'api' && api) slot.mcpUrl = api[1]!.replace('localhost', '127.0.0.1')
    if ((slot.role === 'api' && api) || (slot.role === 'crawler' && buf.includes('crawler health server listening'))) {
      life.readyAt = Date.now()
      ready.resolve()
    }
  })
  p.stderr!.on('data', (chunk: Buffer) => log.write(chunk))
  p.once('exit', (code, sig) => {
    life.endedAt = Date.now()
    const how = sig ? `by ${sig}` : `with code ${code}`
    life.endedBy = life.endedBy ? `${life.endedBy}, exited ${how}` : `exited ${how} unasked`
    if (slot.proc === p) slot.mcpUrl = null
    log.end()
    ready.reject(new Error(`${slot.name} exited before it was ready (${life.endedBy}); see ${pe.logDir}/${slot.name}.log`))
  })
  await withTimeout(ready.promise, readyMs, `${slot.name} start`)
  // The banner comes after the process is up: its first RSS sample is its start.
  sampleRss(slot)
}

const exited = (p: ChildProcess) => (alive(p) ? new Promise<void>((r) => p.once('exit', () => r())) : Promise.resolve())

const killPid = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig)
  } catch {}
}

const running = (pid: number) => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}

/**
 * Ends the slot's process with a signal sent to it alone, as an orchestrator's stop or an OOM kill does.
 * Resolves when it has exited; a process that outlives termMs after SIGTERM is killed. Its descendants (its
 * Chromium) still running after it are counted, and killed after 60 s, as the end of a container would at once.
 */
export async function signalSlot(slot: Slot, sig: 'SIGKILL' | 'SIGTERM', termMs = 40_000): Promise<number> {
  const p = slot.proc
  if (!alive(p)) return 0
  const life = slot.lives.at(-1)!
  sampleRss(slot)
  life.endedBy = sig
  slot.mcpUrl = null
  const tree = descendants(p.pid!)
  const t0 = Date.now()
  p.kill(sig)
  const done = await withTimeout(exited(p), sig === 'SIGKILL' ? 15_000 : termMs, `${slot.name} exit`).then(
    () => true,
    () => false,
  )
  const stopMs = Date.now() - t0
  if (!done) {
    life.endedBy = `${sig} (SIGKILL after ${termMs} ms)`
    p.kill('SIGKILL')
    await withTimeout(exited(p), 15_000, `${slot.name} exit`).catch(() => {})
  }
  void reapOrphans(life, tree)
  return stopMs
}

/** Watches what the ended process left running for 60 s (a bounded loop), then kills what is still there. */
async function reapOrphans(life: Incarnation, tree: number[]): Promise<void> {
  await Bun.sleep(1_000)
  let left = tree.filter(running)
  life.orphans = left.length
  for (let i = 0; i < 59 && left.length; i++) {
    await Bun.sleep(1_000)
    left = left.filter(running)
  }
  life.orphansAfter60s = left.length
  for (const pid of left) killPid(pid, 'SIGKILL')
}

export const isUp = (slot: Slot) => alive(slot.proc) && slot.lives.at(-1)?.readyAt != null
