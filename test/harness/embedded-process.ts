// The embedded default as a person runs it: a real `bun run start` process (PGlite under a DATA_DIR of the
// test's, in-process queue, crawler workers) on port 0, its URL read from its banner, its local
// sign-in user set to the harness's development user, its banner read from stdout (a pipe, so the banner
// names files instead of printing secrets). Every wait is bounded; every child is killed when the file ends.
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../shared/db/index.ts'
import { DEV_PASSWORD, DEV_USER } from './signin.ts'
import { machineDeadline } from './machine.ts'
import { within } from './wait.ts'

export const ROOT = join(import.meta.dir, '..', '..')

const children = new Set<Bun.Subprocess>()
/**
 * How long the service may take to print its banner: a minute on a quiet machine of the reference kind,
 * stretched by the machine's slowness and load (machineDeadline, at most 8x), as the other start-up hooks are.
 */
const START_QUIET_MS = 60_000
const dirs: string[] = []

export interface EmbeddedProcess {
  p: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
  banner: string
  dataDir: string
  /** The key in DATA_DIR/local-api-key now. */
  fileKey(): string
  /** All it wrote to stderr, once it has exited. */
  stderr: Promise<string>
  /** SIGTERM, and the exit code (bounded). */
  stop(): Promise<number>
}

/** A temporary DATA_DIR, removed when the file's tests end (cleanup()). */
export function tempDataDir(name = 'appaudit-embedded-'): string {
  const dir = mkdtempSync(join(tmpdir(), name))
  dirs.push(dir)
  return dir
}

/**
 * A PGlite database made once with every migration, in the temporary directory and named by the migrations'
 * hash: a first PGlite start takes seconds (minutes on a busy machine), a copy's start a fraction of one.
 */
async function pgliteTemplate(): Promise<string> {
  const migrations = join(ROOT, 'shared', 'db', 'migrations')
  const hash = createHash('sha256')
  for (const f of readdirSync(migrations).sort()) hash.update(f).update(readFileSync(join(migrations, f)))
  const dir = join(tmpdir(), `appaudit-pglite-template-${hash.digest('hex').slice(0, 16)}`)
  if (existsSync(join(dir, 'pglite'))) return dir
  const building = mkdtempSync(join(tmpdir(), 'appaudit-pglite-building-'))
  const db = await openDatabase({ databaseUrl: '', dataDir: building })
  await db.close()
  try {
    renameSync(building, dir)
  } catch {
    // Another test file made it meanwhile.
    rmSync(building, { recursive: true, force: true })
  }
  return dir
}

/** A temporary DATA_DIR holding a copy of a new, migrated database (and nothing else). */
export async function seededDataDir(): Promise<string> {
  const dir = tempDataDir()
  cpSync(join(await pgliteTemplate(), 'pglite'), join(dir, 'pglite'), { recursive: true })
  return dir
}

export const embeddedEnv = (dataDir: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...(process.env as Record<string, string>),
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  REDIS_URL: '',
  ALLOW_PRIVATE_TARGETS: 'true',
  LOG_LEVEL: 'warn',
  LOCAL_IDP_USER: DEV_USER,
  LOCAL_IDP_PASSWORD: DEV_PASSWORD,
  ...extra,
})

/**
 * Starts the embedded service on `dataDir` (`command`: how, from the project's root); resolves once its banner
 * is complete (it listens by then).
 */
export async function startEmbedded(
  dataDir: string,
  extra: Record<string, string> = {},
  command: string[] = ['bun', 'server/main.ts'],
): Promise<EmbeddedProcess> {
  // Port 0: the banner names the URL of the port the service got.
  const p = Bun.spawn(command, {
    cwd: ROOT,
    env: embeddedEnv(dataDir, { PORT: '0', ...extra }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 600_000,
  })
  children.add(p)
  const errText = new Response(p.stderr).text()
  const reader = p.stdout.getReader()
  let banner = ''
  const t0 = Date.now()
  const START_MS = machineDeadline(START_QUIET_MS)
  try {
    // PGlite's first start takes seconds, far more on a busy machine: a generous but finite wait.
    while (!/password:.*\n/.test(banner) && Date.now() - t0 < START_MS) {
      const { value, done } = await within(reader.read(), Math.max(1, START_MS - (Date.now() - t0)), 'the start-up banner')
      if (done) break
      banner += new TextDecoder().decode(value)
    }
  } catch (e) {
    p.kill('SIGKILL')
    throw e
  } finally {
    reader.releaseLock()
  }
  if (!/password:.*\n/.test(banner)) {
    p.kill('SIGKILL')
    throw new Error(`the service did not start: ${banner}\n${await within(errText, 5_000, 'stderr').catch(() => '')}`)
  }
  const base = /base URL:\s+(\S+)/.exec(banner)?.[1]
  if (!base) {
    p.kill('SIGKILL')
    throw new Error(`the banner names no base URL: ${banner}`)
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    const rest = p.stdout.getReader()
    for (let chunk = await rest.read(); !chunk.done; chunk = await rest.read()) {}
  })().catch(() => {})
  return {
    p,
    base,
    banner,
    dataDir,
    stderr: errText,
    fileKey: () => readFileSync(join(dataDir, 'local-api-key'), 'utf8').trim(),
    async stop() {
      p.kill('SIGTERM')
      const code = await within(p.exited, 90_000, 'exit after SIGTERM')
      children.delete(p)
      // Why it did not exit cleanly, for the test's record.
      if (code !== 0)
        console.error(`the service exited with ${code}; its stderr ends:\n${(await within(errText, 5_000, '')).slice(-4_000)}`)
      return code
    },
  }
}

/** A command of the project as a real process, with its output (bounded by Bun's timeout). */
export async function runCommand(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { cwd: ROOT, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 240_000 })
  children.add(p)
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  children.delete(p)
  return { out, err, code }
}

/** `bun run admin ...` against an embedded DATA_DIR. */
export const admin = (dataDir: string, args: string[], extra: Record<string, string> = {}) =>
  runCommand(['bun', 'server/admin.ts', ...args], embeddedEnv(dataDir, extra))

/** For afterAll: kills what is still running and removes the data directories. */
export async function cleanup(): Promise<void> {
  for (const p of children) {
    p.kill('SIGKILL')
    await within(p.exited, 10_000, 'exit after SIGKILL').catch(() => {})
  }
  children.clear()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
}
