// A port another process holds, at start-up: the service names the setting that chose the port and what to
// do, rather than printing the runtime's stack (server/main.ts).

/** The port a server of this process was given is taken; its message is the whole explanation. */
export class PortInUse extends Error {}

/** Runs `listen` (a Bun.serve on `host`:`port`); a port another process holds becomes a PortInUse naming `setting`. */
export function listenOrExplain<T>(setting: 'PORT' | 'HEALTH_PORT', host: string, port: number, listen: () => T): T {
  try {
    return listen()
  } catch (e) {
    if ((e as { code?: unknown } | null)?.code !== 'EADDRINUSE') throw e
    throw new PortInUse(`port ${port} on ${host} is taken by another process; set ${setting} to a free port, or to 0 for any free one.`)
  }
}
