// The client's IP address for rate limits. Bun knows the peer only at the server's fetch callback, so that
// callback (server/api-server.ts) records it here per request; behind TRUSTED_PROXY_HOPS proxies,
// X-Forwarded-For is read instead.
const peers = new WeakMap<Request, string>()

export function rememberPeer(req: Request, address: string | undefined): void {
  if (address) peers.set(req, address)
}

export function clientIp(req: Request, trustedProxyHops: number): string {
  if (trustedProxyHops > 0) {
    const chain = (req.headers.get('x-forwarded-for') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    // Each trusted proxy appends the address it saw; the client is the one the outermost proxy saw.
    const ip = chain[chain.length - trustedProxyHops]
    if (ip) return ip
  }
  return peers.get(req) ?? 'unknown'
}
