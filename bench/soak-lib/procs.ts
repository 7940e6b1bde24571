// The service's processes in the soak: api and crawler slots, each a real `bun server/main.ts` (ROLE=api)
// or `bun server/crawler.ts` child in a process group of its own (so a SIGKILL takes its Chromium along, as
// a container's end would), on port 0, with its output appended to a log file. A slot is restarted after
// each kill; every incarnation's resident memory is sampled from /proc.
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
  /** Resident memory (KiB) of the process itself, and of its whole process group (its Chromium too). */
  rssStart: { own: number; group: number } | null
  rssLast: { own: number; group: number } | null
  rssMaxGroup: number
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

/** Summed VmRSS of every process in the group (shared pages counted in each: an upper bound). */
function groupRss(pgid: number): number {
  let sum = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) sum += rssOf(Number(name))
    } catch {}
  }
  return sum
}

export function sampleRss(slot: Slot): void {
  const life = slot.lives.at(-1)
  if (!life || life.endedAt !== null || !alive(slot.proc)) return
  const r = { own: rssOf(life.pid), group: groupRss(life.pid) }
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
    detached: true,
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

const killGroup = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(-pid, sig)
  } catch {}
}

/**
 * Ends the slot's process with a signal: SIGKILL to the whole group at once; SIGTERM to the process only,
 * as an orchestrator's stop does, then what is left of the group (its Chromium) is killed once it exits.
 * Resolves when it has exited; a process that outlives termMs after SIGTERM is killed.
 */
export async function signalSlot(slot: Slot, sig: 'SIGKILL' | 'SIGTERM', termMs = 40_000): Promise<number> {
  const p = slot.proc
  if (!alive(p)) return 0
  const life = slot.lives.at(-1)!
  sampleRss(slot)
  life.endedBy = sig
  slot.mcpUrl = null
  const t0 = Date.now()
  if (sig === 'SIGKILL') killGroup(p.pid!, 'SIGKILL')
  else p.kill('SIGTERM')
  const done = await withTimeout(exited(p), sig === 'SIGKILL' ? 15_000 : termMs, `${slot.name} exit`).then(
    () => true,
    () => false,
  )
  if (!done) {
    life.endedBy = `${sig} (SIGKILL after ${termMs} ms)`
    killGroup(p.pid!, 'SIGKILL')
    await withTimeout(exited(p), 15_000, `${slot.name} exit`).catch(() => {})
  }
  killGroup(p.pid!, 'SIGKILL')
  return Date.now() - t0
}

export const isUp = (slot: Slot) => alive(slot.proc) && slot.lives.at(-1)?.readyAt != null
