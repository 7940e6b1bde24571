// A raw HTTP(S) server on 127.0.0.1, port 0, that writes each response byte for byte, one header line per
// entry: "one line with a comma" and "the same header on two lines" stay different on the wire, which
// Bun.serve and fetch's Headers cannot do (they merge repeated headers into one line).
import net from 'node:net'
import tls from 'node:tls'
import type { TlsMaterial } from '../../test/fixtures/sites.ts'

const REASONS: Record<number, string> = { 200: 'OK', 301: 'Moved Permanently', 404: 'Not Found' }

export interface RawServer {
  port: number
  close(): void
}

export type Respond = (path: string, request: string) => { status?: number; type: string; body: string | Uint8Array; lines: string[] }

/** Answers every request with `respond(path, request head)`; each header is one line on the wire, exactly as given. */
export function rawServer(respond: Respond, tlsMaterial?: TlsMaterial): Promise<RawServer> {
  const handler = (s: net.Socket) => {
    s.on('error', () => {})
    s.once('data', (d: Buffer) => {
      const request = d.toString('latin1')
      const path = request.split(' ')[1] ?? '/'
      const r = respond(path, request)
      const body = typeof r.body === 'string' ? Buffer.from(r.body) : Buffer.from(r.body)
      const head = [
        `HTTP/1.1 ${r.status ?? 200} ${REASONS[r.status ?? 200] ?? 'Status'}`,
        `content-type: ${r.type}`,
        `content-length: ${body.length}`,
        'connection: close',
        ...r.lines,
      ].join('\r\n')
      s.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]))
    })
  }
  const srv = tlsMaterial ? tls.createServer({ cert: tlsMaterial.cert, key: tlsMaterial.key }, handler) : net.createServer(handler)
  return new Promise((resolve, reject) => {
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => resolve({ port: (srv.address() as net.AddressInfo).port, close: () => void srv.close() }))
  })
}
