// A TCP relay in front of a real server (PostgreSQL, Redis) that a test can cut and restore, to see
// what the service does when a store disappears mid-run. Cut means what an outage looks like:
// open connections drop and new ones are refused.
import { connect, createServer, type Server, type Socket } from 'node:net'

export interface Relay {
  port: number
  cut(): Promise<void>
  restore(): Promise<void>
  stop(): Promise<void>
}

export async function startRelay(targetHost: string, targetPort: number): Promise<Relay> {
  const sockets = new Set<Socket>()
  const track = (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => s.destroy())
  }
  let port = 0
  let server: Server | null = null
  const listen = async () => {
    server = createServer((client) => {
      track(client)
      const upstream = connect(targetPort, targetHost)
      track(upstream)
      client.pipe(upstream)
      upstream.pipe(client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r))
    port = (server.address() as { port: number }).port
  }
  const close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy()
      if (!server) return r()
      server.close(() => r())
      server = null
    })
  await listen()
  return {
    port,
    cut: close,
    restore: async () => {
      if (!server) await listen()
    },
    stop: close,
  }
}
