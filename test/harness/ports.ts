// Ports for third-party servers, which are given their port in a configuration file or on their command
// line. Our own servers bind port 0 and report their port. For the others, in order of preference:
// - a server that accepts port 0 (php -S, Caddy, Django's runserver, Werkzeug, Express) is given 0, and the
//   port it got is read from the kernel: listeningPorts() below;
// - nginx, which refuses port 0, adopts a socket bound here on port 0 and handed over as a file descriptor
//   (its NGINX environment variable, what its binary upgrade uses): listenerForChild();
// - Debian's apache2, which can do neither ("Invalid address or port" for port 0, and built without systemd's
//   socket activation), binds a port held for it here: reservedPort(), a socket on port 0 with SO_REUSEPORT,
//   which keeps every other process off the port while apache2, told to set that option too
//   (`ListenCoresBucketsRatio`, test/harness/apache.ts), binds beside it. bench/real-apps/apps.sh holds its
//   Apache's and nginx's ports the same way (hold-ports.ts; nginx with `listen ... reuseport`).
// unusedPort(), a port that was free a moment ago, is left for what binds nothing: an address nothing listens
// on, and a Kubernetes manifest's probes (the pods run on the host's network; they are played again on other
// ports when one says its port was taken: test/k8s/images.test.ts). PostgREST listens on a Unix socket of its
// own (test/fixtures/postgrest.ts).
import { createServer } from 'node:net'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { descendants } from '../crawler/audit/procs.ts'

/** A port on 127.0.0.1 that was free a moment ago (listen on port 0, read it, close). */
export function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port from listen(0)'))))
    })
  })
}

/** A port held for a server that binds it with SO_REUSEPORT (reservedPort). */
export interface ReservedPort {
  port: number
  /** Drops the hold: call it once the server listens on the port (untilListening) and before anything connects. */
  release(): Promise<void>
}

/**
 * A port on 127.0.0.1 held for a server that can neither bind port 0 nor adopt a socket (Debian's apache2). The
 * hold is a socket listening here with SO_REUSEPORT: the kernel refuses the port to any bind without that
 * option, and to any socket of another user, while a server of this user that sets it (apache2 with
 * `ListenCoresBucketsRatio`) binds beside it. Until release(), the kernel may hand a connection to the port to
 * this socket, which closes it: nothing connects before the server listens and the hold is released.
 */
export function reservedPort(): Promise<ReservedPort> {
  return new Promise((resolve, reject) => {
    const hold = createServer((socket) => socket.destroy())
    hold.once('error', reject)
    hold.listen({ port: 0, host: '127.0.0.1', reusePort: true }, () => {
      const address = hold.address()
      const port = typeof address === 'object' && address ? address.port : 0
      if (port <= 0) {
        hold.close()
        reject(new Error('no port from listen(0)'))
        return
      }
      let released: Promise<void> | null = null
      resolve({ port, release: () => (released ??= new Promise<void>((r) => hold.close(() => r()))) })
    })
  })
}

/**
 * Waits until pid or a process below it listens on port of 127.0.0.1 (read from the kernel, nothing connects);
 * throws when stop() says to give up (the server exited) or after ms.
 */
export async function untilListening(
  pid: number,
  port: number,
  ms: number,
  what: string,
  stop: () => boolean = () => false,
): Promise<void> {
  const deadline = performance.now() + ms
  for (;;) {
    if (listeningPorts(pid).includes(port)) return
    if (stop()) throw new Error(`${what} stopped before it listened on 127.0.0.1:${port}`)
    if (performance.now() > deadline) throw new Error(`${what} does not listen on 127.0.0.1:${port} after ${ms} ms`)
    await Bun.sleep(50)
  }
}

/** The inodes of the sockets a process holds open. */
function socketInodes(pid: number): Set<string> {
  const out = new Set<string>()
  let fds: string[] = []
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return out
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m) out.add(m[1]!)
    } catch {
      // closed meanwhile
    }
  }
  return out
}

/**
 * The TCP ports on 127.0.0.1 that pid or a process below it listens on, from the kernel's socket table
 * (/proc/net/tcp: state 0A is LISTEN, 0100007F is 127.0.0.1). Sorted; empty until the server has bound.
 */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>()
  for (const p of [pid, ...descendants(pid).map((d) => d.pid)]) for (const i of socketInodes(p)) inodes.add(i)
  if (!inodes.size) return []
  const ports = new Set<number>()
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/)
    if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9]!)) continue
    const [addr, port] = f[1]!.split(':')
    if (addr === '0100007F') ports.add(Number.parseInt(port!, 16))
  }
  return [...ports].sort((a, b) => a - b)
}

/**
 * A listening socket on 127.0.0.1, port 0, for a child to adopt: `fd` goes in the child's stdio (as its fd 3,
 * say), and close() drops this process's copy once the child has started, so only the child accepts on it.
 * Nothing here accepts meanwhile: nobody knows the port before the child's configuration names it.
 */
export function listenerForChild(): { port: number; fd: number; close(): void } {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { open: (s) => void s.end(), data() {} } })
  const fd = (listener as unknown as { fd?: number }).fd
  if (typeof fd !== 'number' || fd < 0) {
    listener.stop(true)
    throw new Error('Bun.listen gave no file descriptor to hand over')
  }
  return { port: listener.port, fd, close: () => listener.stop(true) }
}

/** The port on 127.0.0.1 that pid (given port 0) or a process below it listens on, once it has bound; throws after ms. */
export async function boundPort(pid: number, ms: number, what: string): Promise<number> {
  const deadline = performance.now() + ms
  for (;;) {
    const port = listeningPorts(pid)[0]
    if (port !== undefined) return port
    if (performance.now() > deadline) throw new Error(`${what} listens on no port of 127.0.0.1 after ${ms} ms`)
    await Bun.sleep(50)
  }
}
