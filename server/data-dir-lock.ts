// Who holds the embedded database under DATA_DIR. PGlite has one user: the running service or one admin
// command, never both, or the second would write a database the first does not see (and corrupt it). Each
// takes DATA_DIR/appaudit.lock, a file naming its process, before it opens the database, and removes it
// when it is done. A lock whose process is gone (killed, crashed, a pid since reused) is stale and taken
// over. On Linux the process's start time from /proc tells a reused pid from the original.
import { hostname } from 'node:os'
import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { errorMessage } from '../shared/errors.ts'

export const LOCK_FILE = 'appaudit.lock'

export type Holder = 'service' | 'admin'

interface LockInfo {
  pid: number
  who: Holder
  host: string
  since: string
  /** The process's start time in clock ticks since boot (/proc/PID/stat field 22), when readable. */
  start: string | null
}

/** A lock file that is still empty this soon after it was made is being written, not abandoned. */
const FRESH_MS = 5_000
const ATTEMPTS = 3

/** Locks held by this process, by path: a lock naming this pid that is not here was left by an earlier process with the same pid. */
const heldHere = new Set<string>()

function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

function readLock(path: string): { raw: string; info: LockInfo | null } | null {
  let raw: string
  try {
    raw = readFileSync(path, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw e
  }
  try {
    const v = JSON.parse(raw) as Partial<LockInfo>
    const ok = Number.isSafeInteger(v.pid) && (v.who === 'service' || v.who === 'admin') && typeof v.host === 'string'
    return { raw, info: ok ? (v as LockInfo) : null }
  } catch {
    return { raw, info: null }
  }
}

/** Whether the process a lock names may still be running (when in doubt, it is). */
function alive(info: LockInfo, path: string): boolean {
  // Another machine's process (a shared disk) cannot be checked from here.
  if (info.host !== hostname()) return true
  if (info.pid === process.pid) return heldHere.has(path)
  try {
    process.kill(info.pid, 0)
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code !== 'ESRCH'
  }
  const now = startTicks(info.pid)
  return !(info.start && now && now !== info.start)
}

function busy(dataDir: string, path: string, holder: LockInfo, who: Holder): string {
  const by = `pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}, since ${holder.since}`
  const what =
    holder.who === 'service'
      ? who === 'service'
        ? `The service is already running on ${dataDir} (${by}); stop it first, or give this one another DATA_DIR.`
        : `The service is running on ${dataDir} (${by}) but did not answer on its admin channel; wait until it has started, or stop it, and run the command again.`
      : who === 'service'
        ? `An admin command holds ${dataDir} (${by}); start the service again when it has finished.`
        : `Another admin command holds ${dataDir} (${by}); run this one again when it has finished.`
  return holder.host !== hostname() ? `${what} If no process on ${holder.host} uses it, remove ${path}.` : what
}

export type Hold = { ok: true; path: string; release(): void } | { ok: false; message: string }

/** Takes DATA_DIR for this process, or says who holds it. */
export function holdDataDir(dataDir: string, who: Holder): Hold {
  mkdirSync(dataDir, { recursive: true })
  const path = resolve(join(dataDir, LOCK_FILE))
  const mine: LockInfo = { pid: process.pid, who, host: hostname(), since: new Date().toISOString(), start: startTicks(process.pid) }
  const body = JSON.stringify(mine)
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      // 'wx' creates the file only if there is none: of two processes, exactly one gets it.
      writeFileSync(path, body, { flag: 'wx', mode: 0o600 })
      heldHere.add(path)
      return { ok: true, path, release: () => release(path, body) }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return { ok: false, message: `cannot lock ${dataDir}: ${errorMessage(e)}` }
    }
    const found = readLock(path)
    if (!found) continue // released meanwhile: try again
    if (found.info && alive(found.info, path)) return { ok: false, message: busy(dataDir, path, found.info, who) }
    if (!found.info && Date.now() - mtimeMs(path) < FRESH_MS) {
      return { ok: false, message: `Another process is taking ${dataDir} right now; run this again in a few seconds.` }
    }
    // Stale. Remove it only if it is still the same file: another process may have taken it over meanwhile.
    if (readLock(path)?.raw === found.raw) removeQuietly(path)
  }
  return { ok: false, message: `cannot lock ${dataDir}: other processes keep taking ${path}` }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return 0
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
  }
}

/** Removes the lock if it is still this holder's (never one another process took over). */
function release(path: string, body: string): void {
  heldHere.delete(path)
  try {
    if (readLock(path)?.raw === body) removeQuietly(path)
  } catch {
    // Left behind, it is stale once this process is gone.
  }
}
