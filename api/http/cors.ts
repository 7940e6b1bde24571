// CORS for /api/mcp and the public documents: any origin (authentication is by bearer token, never a
// cookie), exposing the headers a browser-based MCP client must read.
export const CORS_EXPOSE = 'www-authenticate, mcp-session-id, mcp-protocol-version'

export function withCors(res: Response): Response {
  res.headers.set('access-control-allow-origin', '*')
  res.headers.set('access-control-expose-headers', CORS_EXPOSE)
  return res
}

export function corsPreflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id',
      'access-control-expose-headers': CORS_EXPOSE,
      'access-control-max-age': '86400',
    },
  })
}
