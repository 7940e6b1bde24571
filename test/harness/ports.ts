// A port for what cannot bind port 0 and say which port it got: a third-party server given its port in a
// configuration file (nginx, Apache, Caddy, the Debian applications, PostgREST), a Kubernetes manifest whose
// probes name a port, or an address nothing listens on. Our own servers bind port 0 and report their port.
// A port free now may be taken before the server binds it: callers that start a server say so when its
// bind fails (test/fixtures/sites/lib/real-server.ts starts it again on another port).
import { createServer } from 'node:net'

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
