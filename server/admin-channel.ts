// The running embedded service's admin channel: a Unix socket at DATA_DIR/admin.sock (owner only), where
// `admin` sends its command line and the service runs it on the database it holds (PGlite has one user), so
// a key it prints is one the service accepts. One request and one answer per connection, each a line of
// JSON: {"argv": [...]} in, {"ok": true, "stdout": [...], "stderr": [...], "code": N} or
// {"ok": false, "message": "..."} out. Requests are capped in size, in time to arrive and in time to run;
// a few connections at a time, commands one after another.
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { join, resolve } from 'node:path'
import type { Logger } from '../shared/lib/log.ts'
import { errorMessage } from '../shared/errors.ts'

export { holdDataDir } from './data-dir-lock.ts'

export const ADMIN_SOCKET = 'admin.sock'

export interface AdminAnswer {
  stdout: string[]
  stderr: string[]
  code: number
}

export const REQUEST_LIMIT = 16_384
const ARGS_MAX = 64
const ARG_MAX = 4_096
const ARRIVE_MS = 5_000
const RUN_MS = 30_000
const CLIENTS_MAX = 4
const ANSWER_LIMIT = 1_048_576
/** Unix socket paths are limited to 108 bytes on Linux (104 on macOS), the final NUL included. */
const SOCKET_PATH_MAX = 103

export const socketPath = (dataDir: string) => resolve(join(dataDir, ADMIN_SOCKET))

type Reply = ({ ok: true } & AdminAnswer) | { ok: false; message: string }

/** The command line of a request, or why it is not one. */
function readRequest(line: string): string[] | string {
  let v: unknown
  try {
    v = JSON.parse(line)
  } catch {
    return 'the request is not JSON'
  }
  const argv = (v as { argv?: unknown } | null)?.argv
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) return 'the request has no argv list of strings'
  if (argv.length > ARGS_MAX || argv.some((a) => a.length > ARG_MAX)) return `at most ${ARGS_MAX} arguments of ${ARG_MAX} characters`
  return argv
}

export interface AdminChannel {
  path: string
  stop(): Promise<void>
}

/**
 * Listens on DATA_DIR/admin.sock and answers each command line with `run`. The caller holds DATA_DIR (its
 * lock), so a socket file already there was left by an earlier process and is replaced.
 */
export async function serveAdminChannel(
  dataDir: string,
  run: (argv: string[]) => Promise<AdminAnswer>,
  log: Logger,
): Promise<AdminChannel> {
  const path = freshSocketPath(dataDir)
  const open = new Set<Socket>()
  let queue: Promise<unknown> = Promise.resolve()
  // One command at a time: PGlite has one connection, and commands are short.
  const runInTurn = (argv: string[], answer: (reply: Reply) => void) => {
    queue = queue.then(() => runBounded(argv, run, log).then(answer))
  }
  const server: Server = createServer((socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    socket.on('error', () => {})
    readRequestLine(socket, open.size > CLIENTS_MAX, log, runInTurn)
  })
  await listenOwnerOnly(server, path)
  server.on('error', (e) => log.error('admin channel failed', { error: e.message }))

  return {
    path,
    async stop() {
      await new Promise<void>((r) => {
        server.close(() => r())
        for (const s of open) s.destroy()
      })
      rmSync(path, { force: true })
    },
  }
}

/** The socket's path under DATA_DIR, made ready to listen on: short enough, its folder there, no old file. */
function freshSocketPath(dataDir: string): string {
  const path = socketPath(dataDir)
  if (Buffer.byteLength(path) > SOCKET_PATH_MAX) {
    throw new Error(`the admin channel's socket path ${path} is longer than Unix sockets allow; use a shorter DATA_DIR`)
  }
  mkdirSync(dataDir, { recursive: true })
  rmSync(path, { force: true })
  return path
}

/**
 * Reads a connection's one request line, capped in size and in time to arrive, and hands its command line
 * to `runInTurn` with the function that answers it; anything else is refused, and the rest is not read.
 */
function readRequestLine(
  socket: Socket,
  busy: boolean,
  log: Logger,
  runInTurn: (argv: string[], answer: (reply: Reply) => void) => void,
): void {
  const answer = (reply: Reply) => {
    clearTimeout(arrive)
    if (!socket.destroyed) socket.end(`${JSON.stringify(reply)}\n`)
  }
  const refuse = (message: string) => {
    log.warn('admin channel request refused', { reason: message })
    answer({ ok: false, message })
    // Whatever else it sends is not read.
    socket.removeAllListeners('data')
    socket.resume()
  }
  const arrive = setTimeout(() => refuse(`the request did not arrive within ${ARRIVE_MS / 1000} s`), ARRIVE_MS)
  if (busy) {
    refuse('the admin channel is busy; try again')
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  socket.on('data', (chunk: Buffer) => {
    size += chunk.length
    const end = chunk.indexOf(0x0a)
    if ((end < 0 && size > REQUEST_LIMIT) || (end >= 0 && size - chunk.length + end > REQUEST_LIMIT)) {
      return refuse(`the request is larger than ${REQUEST_LIMIT} bytes`)
    }
    chunks.push(end < 0 ? chunk : chunk.subarray(0, end))
    if (end < 0) return
    clearTimeout(arrive)
    socket.removeAllListeners('data')
    socket.resume()
    const argv = readRequest(Buffer.concat(chunks).toString('utf8'))
    if (typeof argv === 'string') return refuse(argv)
    runInTurn(argv, answer)
  })
}

/** Runs one command within RUN_MS; a command that throws or takes longer is answered as refused. */
async function runBounded(argv: string[], run: (argv: string[]) => Promise<AdminAnswer>, log: Logger): Promise<Reply> {
  log.info('admin command', { command: argv[0] ?? '' })
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<Reply>((r) => {
    timer = setTimeout(() => r({ ok: false, message: `the command did not finish within ${RUN_MS / 1000} s` }), RUN_MS)
  })
  try {
    return await Promise.race([run(argv).then((a): Reply => ({ ok: true, ...a })), late])
  } catch (e) {
    log.error('admin command failed', { command: argv[0] ?? '', error: errorMessage(e) })
    return { ok: false, message: `the command failed in the service: ${errorMessage(e)}` }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Listens with the socket file owner only from the moment it exists (it is made within listen(), so the
 * process-wide umask is changed only for that synchronous call, never across an await), then explicitly.
 */
async function listenOwnerOnly(server: Server, path: string): Promise<void> {
  const listening = new Promise<void>((ok, fail) => {
    server.once('error', fail)
    server.once('listening', () => {
      server.off('error', fail)
      ok()
    })
  })
  const umask = process.umask(0o077)
  try {
    server.listen(path)
  } finally {
    process.umask(umask)
  }
  await listening
  chmodSync(path, 0o600)
}

export type ChannelResult =
  | { kind: 'answered'; stdout: string[]; stderr: string[]; code: number }
  | { kind: 'refused'; message: string }
  | { kind: 'absent' }

/**
 * Sends a command line to the service running on DATA_DIR. 'absent': nobody listens there (no socket, or
 * one left by a service that is gone), so the caller may take DATA_DIR itself.
 */
export function callAdminChannel(dataDir: string, argv: string[], timeoutMs = 60_000): Promise<ChannelResult> {
  const path = socketPath(dataDir)
  if (!existsSync(path)) return Promise.resolve({ kind: 'absent' })
  return new Promise((done) => {
    let settled = false
    const finish = (r: ChannelResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      done(r)
    }
    const timer = setTimeout(
      () => finish({ kind: 'refused', message: `The service did not answer on ${path} within ${Math.round(timeoutMs / 1000)} s.` }),
      timeoutMs,
    )
    const chunks: Buffer[] = []
    let size = 0
    const socket = connect(path)
    socket.on('connect', () => socket.write(`${JSON.stringify({ argv })}\n`))
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > ANSWER_LIMIT) finish({ kind: 'refused', message: `The answer on ${path} is larger than ${ANSWER_LIMIT} bytes.` })
      else chunks.push(chunk)
    })
    socket.on('end', () => finish(parseReply(Buffer.concat(chunks).toString('utf8'), path)))
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') return finish({ kind: 'absent' })
      if (e.code === 'EACCES' || e.code === 'EPERM') {
        return finish({ kind: 'refused', message: `Permission denied on ${path}: run the command as the user who runs the service.` })
      }
      finish({ kind: 'refused', message: `Cannot use the admin channel ${path}: ${e.message}` })
    })
  })
}

function parseReply(text: string, path: string): ChannelResult {
  const bad: ChannelResult = { kind: 'refused', message: `The service's answer on ${path} could not be read; nothing was printed.` }
  let v: Partial<Reply>
  try {
    v = JSON.parse(text)
  } catch {
    return bad
  }
  if (v.ok === false) return { kind: 'refused', message: `The service refused: ${String(v.message)}` }
  const lines = (x: unknown): x is string[] => Array.isArray(x) && x.every((l) => typeof l === 'string')
  if (v.ok !== true || !lines(v.stdout) || !lines(v.stderr) || !Number.isInteger(v.code)) return bad
  return { kind: 'answered', stdout: v.stdout, stderr: v.stderr, code: v.code! }
}
