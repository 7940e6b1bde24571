import { errorMessage } from '../../shared/errors.ts'
// A loopback HTTP proxy in front of the service for clients that cannot send a bearer credential (the MCP
// conformance suite has no option for one). Every request goes to the same path on the service, with
// `Authorization: Bearer <key>` added when the request carries none. Bodies stream both ways (SSE
// responses are passed on chunk by chunk, never buffered) and the Host header the client sent is
// forwarded, so the service's own Host/Origin rules decide (DNS-rebinding checks included).

/** Hop-by-hop headers (RFC 9110 7.6.1) and Expect: they concern one connection and are not forwarded. */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'expect',
]

export interface AuthProxy {
  /** http://127.0.0.1:PORT */
  url: string
  port: number
  /** How many requests the proxy has received so far. */
  readonly requests: number
  stop(): Promise<void>
}

export interface AuthProxyOptions {
  /** The service's origin, e.g. http://127.0.0.1:41234 (a path, if any, is ignored). */
  target: string
  /** The bearer key injected when a request has no Authorization header. */
  key: string
}

function forwardHeaders(from: Headers, key: string): Headers {
  const headers = new Headers()
  const listed = (from.get('connection') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean)
  from.forEach((value, name) => {
    const n = name.toLowerCase()
    if (HOP_BY_HOP.includes(n) || listed.includes(n)) return
    headers.set(name, value)
  })
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${key}`)
  return headers
}

function responseHeaders(from: Headers): Headers {
  const headers = new Headers()
  const listed = (from.get('connection') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean)
  from.forEach((value, name) => {
    const n = name.toLowerCase()
    // fetch hands over a decoded body: its length and encoding no longer describe what we send.
    if (HOP_BY_HOP.includes(n) || listed.includes(n) || n === 'content-length' || n === 'content-encoding') return
    headers.append(name, value)
  })
  return headers
}

export function startAuthProxy({ target, key }: AuthProxyOptions): AuthProxy {
  const origin = new URL(target).origin
  let count = 0

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // SSE streams may stay quiet between keep-alives: the proxy never closes an idle connection itself.
    idleTimeout: 0,
    async fetch(req) {
      count++
      const incoming = new URL(req.url)
      const upstreamUrl = `${origin}${incoming.pathname}${incoming.search}`
      const headers = forwardHeaders(req.headers, key)
      // The Host the client sent (Bun fills it in from the request line when absent).
      headers.set('host', req.headers.get('host') ?? incoming.host)
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.body !== null
      let upstream: Response
      try {
        upstream = await fetch(upstreamUrl, {
          method: req.method,
          headers,
          body: hasBody ? req.body : undefined,
          redirect: 'manual',
          // The client going away (e.g. cancelling an SSE stream) cancels the upstream request too.
          signal: req.signal,
        })
      } catch (e) {
        if (req.signal.aborted) return new Response(null, { status: 499 })
        return new Response(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32603, message: `proxy: upstream unreachable: ${errorMessage(e)}` },
            id: null,
          }),
          {
            status: 502,
            headers: { 'content-type': 'application/json' },
          },
        )
      }
      return new Response(upstream.body, {
        status: upstream.status,
        statusText: upstream.statusText,
        headers: responseHeaders(upstream.headers),
      })
    },
  })

  const port = server.port!
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return count
    },
    async stop() {
      await server.stop(true)
    },
  }
}
