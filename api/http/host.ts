// Host and Origin rules applied before any route, against DNS rebinding and for the apex -> www redirect.
import type { Config } from '../../shared/config.ts'

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']
const SEEN_MAX = 256

export interface HostRules {
  /** A response that ends the request (403 or 308), or null to go on. `url` is the request's, when already parsed. */
  check(req: Request, url?: URL): Response | null
}

function hostnameOf(hostHeader: string): string {
  // Host is "name[:port]" or "[v6][:port]".
  const m = /^(\[[^\]]+\]|[^:]+)(?::\d{1,5})?$/.exec(hostHeader.trim().toLowerCase())
  return m ? m[1]!.replace(/\.$/, '') : ''
}

const forbidden = (message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), {
    status: 403,
    headers: { 'content-type': 'application/json' },
  })

/** 400 for a request whose target and Host do not make a URL: nothing here can answer it. */
export const unroutable = () =>
  new Response('Bad request: the Host header or the request target is malformed\n', {
    status: 400,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  })

export function hostRules(config: Config): HostRules {
  const base = new URL(config.baseUrl)
  const wwwHost = base.hostname.startsWith('www.') ? base.hostname : null
  const apex = wwwHost ? wwwHost.slice(4) : null
  const allowed = new Set([base.hostname, ...LOOPBACK_NAMES, ...config.allowedHosts.map(hostnameOf)])
  if (apex) allowed.add(apex)

  // Requests name a handful of hosts: each Host header is read once (the map is bounded).
  const seen = new Map<string, string>()
  return {
    check(req, parsed) {
      // An empty or malformed Host (or a CONNECT/asterisk target) leaves no URL to route by.
      const url = parsed ?? URL.parse(req.url)
      if (!url) return unroutable()
      const header = req.headers.get('host') ?? url.host
      let host = seen.get(header)
      if (host === undefined) {
        host = hostnameOf(header)
        if (seen.size >= SEEN_MAX) seen.clear()
        seen.set(header, host)
      }
      if (!allowed.has(host)) return forbidden(`Host ${JSON.stringify(host)} is not served here`)
      if (apex && host === apex) {
        return new Response(null, { status: 308, headers: { location: `${base.origin}${url.pathname}${url.search}` } })
      }
      // Bearer-token API: any web origin may call it (CORS *), but the header must be a real origin.
      const origin = req.headers.get('origin')
      if (origin !== null) {
        let ok = false
        try {
          const o = new URL(origin)
          ok = (o.protocol === 'http:' || o.protocol === 'https:') && o.origin === origin.replace(/\/$/, '')
        } catch {}
        if (!ok) return forbidden('Origin header is not a valid origin')
      }
      return null
    },
  }
}
