// The soak's own PostgreSQL cluster and Redis server, in a temporary directory, each reached over a TCP
// relay this process binds on 127.0.0.1 port 0 (the service's URLs are TCP URLs; both servers listen on a
// Unix socket only, so nothing else on the machine can reach them, and no port is picked in advance).
// The soak restarts this Redis and pauses this PostgreSQL; it never touches the machine's own.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { withTimeout } from '../lib/stats.ts'
import { postgresClient } from '../../shared/db/index.ts'

const PG_BIN = '/usr/lib/postgresql/15/bin'

export interface Relay {
  port: number
  stop(): Promise<void>
}

/** A TCP listener on 127.0.0.1:0 that pipes each connection to a Unix socket; a peer that closes closes both. */
export async function unixRelay(path: string): Promise<Relay> {
  const sockets = new Set<Socket>()
  const track = (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => s.destroy())
  }
  const server: Server = createServer((client) => {
    track(client)
    const upstream = connect({ path })
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  return {
    port,
    stop: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy()
        server.close(() => r())
      }),
  }
}

async function waitFor(what: string, ms: number, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms
  for (let i = 0; i < 100_000 && Date.now() < deadline; i++) {
    if (await Promise.resolve(ok()).catch(() => false)) return
    await Bun.sleep(100)
  }
  throw new Error(`${what}: not ready within ${ms} ms`)
}

const exited = (p: ChildProcess) =>
  p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => p.once('exit', () => r()))

export interface SoakRedis {
  url: string
  /** Kills the server (SIGKILL), keeps it down for downMs, starts it again, empty; resolves when it answers. */
  restart(downMs: number): Promise<void>
  stop(): Promise<void>
}

export async function startRedis(dir: string): Promise<SoakRedis> {
  const sock = join(dir, 'redis.sock')
  const log = openSync(join(dir, 'redis.log'), 'a')
  let proc: ChildProcess
  const launch = async () => {
    rmSync(sock, { force: true })
    proc = spawn(
      'redis-server',
      ['--port', '0', '--unixsocket', sock, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', log, log] },
    )
    await waitFor('redis', 15_000, () => existsSync(sock))
  }
  await launch()
  const relay = await unixRelay(sock)
  return {
    url: `redis://127.0.0.1:${relay.port}`,
    async restart(downMs) {
      proc.kill('SIGKILL')
      await withTimeout(exited(proc), 10_000, 'redis exit')
      await Bun.sleep(downMs)
      await launch()
    },
    async stop() {
      proc.kill('SIGKILL')
      await withTimeout(exited(proc), 10_000, 'redis exit').catch(() => {})
      await relay.stop()
    },
  }
}

/** Pids whose parent is pid, from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name))
    } catch {}
  }
  return out
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig)
  } catch {}
}

export interface SoakPostgres {
  /** The soak database, over the relay. */
  url: string
  /** Stops the postmaster and every backend (SIGSTOP) for ms, then lets them go on (SIGCONT). */
  pause(ms: number): Promise<void>
  postmasterPid(): number
  stop(): Promise<void>
}

/** A PostgreSQL 15 cluster of its own, made with initdb as the postgres user, listening on a Unix socket only. */
export async function startPostgres(dir: string): Promise<SoakPostgres> {
  const pgDir = join(dir, 'pg')
  mkdirSync(pgDir)
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString())
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString())
  chownSync(pgDir, uid, gid)
  const data = join(pgDir, 'data')
  execFileSync(
    'runuser',
    ['-u', 'postgres', '--', `${PG_BIN}/initdb`, '-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'],
    {
      stdio: 'ignore',
    },
  )
  const log = openSync(join(dir, 'postgres.log'), 'a')
  const settings = ['listen_addresses=', 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=200']
  const proc = spawn(
    'runuser',
    ['-u', 'postgres', '--', `${PG_BIN}/postgres`, '-D', data, '-k', pgDir, ...settings.flatMap((s) => ['-c', s])],
    {
      stdio: ['ignore', log, log],
    },
  )
  const sock = join(pgDir, '.s.PGSQL.5432')
  await waitFor('postgres', 60_000, () => existsSync(sock) && existsSync(join(data, 'postmaster.pid')))
  const relay = await unixRelay(sock)
  const admin = postgresClient(`postgres://postgres@127.0.0.1:${relay.port}/postgres`, 1)
  await waitFor('postgres connections', 30_000, async () => (await admin`SELECT 1`).length === 1)
  await admin.unsafe('CREATE DATABASE soak')
  await admin.end()
  const postmasterPid = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  return {
    url: `postgres://postgres@127.0.0.1:${relay.port}/soak`,
    postmasterPid,
    async pause(ms) {
      const pm = postmasterPid()
      signal(pm, 'SIGSTOP')
      const kids = childrenOf(pm)
      for (const k of kids) signal(k, 'SIGSTOP')
      try {
        await Bun.sleep(ms)
      } finally {
        for (const k of kids) signal(k, 'SIGCONT')
        signal(pm, 'SIGCONT')
        // runuser stops itself when its child stops (job control) and stays stopped: let it go on too.
        signal(proc.pid!, 'SIGCONT')
      }
    },
    async stop() {
      // SIGINT: fast shutdown (backends are ended, nothing waits for clients).
      const pm = postmasterPid()
      for (const k of childrenOf(pm)) signal(k, 'SIGCONT')
      signal(pm, 'SIGCONT')
      signal(proc.pid!, 'SIGCONT')
      signal(pm, 'SIGINT')
      await withTimeout(exited(proc), 30_000, 'postgres exit').catch(() => signal(pm, 'SIGKILL'))
      await relay.stop()
    },
  }
}

export interface SoakStores {
  dir: string
  redis: SoakRedis
  pg: SoakPostgres
  stop(): Promise<void>
}

export async function startStores(): Promise<SoakStores> {
  const dir = mkdtempSync('/tmp/appaudit-soak-')
  // The postgres user must reach its directory inside.
  chmodSync(dir, 0o711)
  const pg = await startPostgres(dir)
  const redis = await startRedis(dir).catch(async (e) => {
    await pg.stop()
    throw e
  })
  return {
    dir,
    redis,
    pg,
    async stop() {
      await redis.stop()
      await pg.stop()
    },
  }
}
