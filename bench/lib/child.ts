// Server processes for benchmarks. The parent spawns `bun <file> <args>`; the child starts its server,
// prints one JSON line describing it on stdout, and runs until the parent sends SIGTERM or goes away
// (its stdin closes). Every wait here is bounded.
import type { Subprocess } from 'bun'
import { withTimeout } from './stats.ts'
import { errorMessage } from '../../shared/errors.ts'

export interface Child<T> {
  info: T
  pid: number
  stop(): Promise<void>
}

const live = new Set<Subprocess>()
let hooked = false

/**
 * Children still running when the parent leaves are asked to stop (SIGTERM), not killed: they drop their
 * throwaway database on the way out. A child also stops by itself when its stdin (the parent) closes.
 */
function hookExit() {
  if (hooked) return
  hooked = true
  process.on('exit', () => {
    for (const p of live) p.kill('SIGTERM')
  })
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, async () => {
      const procs = [...live]
      for (const p of procs) p.kill('SIGTERM')
      await withTimeout(Promise.all(procs.map((p) => p.exited)), 20_000, 'children stopping').catch(() => {
        for (const p of procs) p.kill('SIGKILL')
      })
      process.exit(130)
    })
  }
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let buf = ''
  for (let i = 0; i < 10_000; i++) {
    const { done, value } = await reader.read()
    if (done) break
    buf += decoder.decode(value, { stream: true })
    const nl = buf.indexOf('\n')
    if (nl >= 0) {
      reader.releaseLock()
      return buf.slice(0, nl)
    }
  }
  throw new Error(`child exited before it was ready${buf ? ` (printed ${JSON.stringify(buf.slice(0, 200))})` : ''}`)
}

export async function spawnChild<T>(
  file: string,
  args: string[],
  opts: { readyTimeoutMs?: number; env?: Record<string, string>; bunArgs?: string[] } = {},
): Promise<Child<T>> {
  hookExit()
  const proc = Bun.spawn([process.execPath, ...(opts.bunArgs ?? []), file, ...args], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, ...opts.env },
  })
  live.add(proc)
  let line: string
  try {
    line = await withTimeout(firstLine(proc.stdout), opts.readyTimeoutMs ?? 60_000, `${file} ${args.join(' ')}`)
  } catch (e) {
    proc.kill('SIGKILL')
    live.delete(proc)
    throw e
  }
  return {
    info: JSON.parse(line) as T,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGTERM')
      const exited = await withTimeout(proc.exited, 20_000, `stopping ${file}`).catch(() => null)
      if (exited === null) proc.kill('SIGKILL')
      live.delete(proc)
    },
  }
}

/** Child side: announce `info`, then run until SIGTERM/SIGINT or until the parent's pipe closes; at most `maxMs`. */
export async function runAsChild(info: unknown, stop: () => Promise<void>, maxMs = 30 * 60_000): Promise<never> {
  process.stdout.write(`${JSON.stringify(info)}\n`)
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve())
    process.once('SIGINT', () => resolve())
    setTimeout(resolve, maxMs).unref()
    ;(async () => {
      const reader = Bun.stdin.stream().getReader()
      for (let i = 0; i < 1_000_000; i++) if ((await reader.read()).done) break
      resolve()
    })().catch(() => resolve())
  })
  await withTimeout(stop(), 15_000, 'stopping the server').catch((e) => console.error(errorMessage(e)))
  process.exit(0)
}

/** User + system CPU time of a process in milliseconds, from /proc (Linux); NaN elsewhere. */
export async function cpuMs(pid: number): Promise<number> {
  try {
    const stat = await Bun.file(`/proc/${pid}/stat`).text()
    // Fields after the command name (which is in parentheses and may contain spaces).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(rest[11]) + Number(rest[12]) // utime, stime (fields 14 and 15)
    return (ticks * 1000) / 100 // USER_HZ is 100 on Linux
  } catch {
    return NaN
  }
}
