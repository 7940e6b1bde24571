// RFC 9728 protected-resource metadata: which authorization server guards /api/mcp.
import Elysia from 'elysia'
import type { Config } from '../shared/config.ts'
import { withCors } from './http/cors.ts'

export function wellKnown(config: Config) {
  const doc = {
    resource: `${config.baseUrl}/api/mcp`,
    authorization_servers: [config.baseUrl],
    bearer_methods_supported: ['header'],
    resource_name: 'App Audit MCP',
  }
  const send = () => withCors(Response.json(doc, { headers: { 'cache-control': 'public, max-age=3600' } }))
  return new Elysia({ name: 'well-known' })
    .get('/.well-known/oauth-protected-resource', send)
    .get('/.well-known/oauth-protected-resource/api/mcp', send)
}
