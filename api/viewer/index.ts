// GET /viewer/:auditId: the live viewer page. The socket it opens (/viewer/:auditId/ws) is upgraded in
// server/api-server.ts before Elysia sees the request (see service.ts), because Elysia's own .ws() needs app.listen.
import Elysia from 'elysia'
import type { Config } from '../../shared/config.ts'
import { isViewerAuditId } from '../../shared/protocol/viewer.ts'
import { VIEWER_CSP, viewerPage } from './page.ts'

// Never framed, never cached, never shared with other origins (no CORS headers at all).
const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': VIEWER_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

/** `signIn`: whether this server has a dashboard to sign in to (the report link leads there). */
export function viewerRoutes(config: Config, opts: { signIn: boolean } = { signIn: true }) {
  return new Elysia({ name: 'viewer' }).get('/viewer/:auditId', ({ params }) => {
    // The page itself holds no secret: the token stays in the fragment and is checked over the socket.
    // A malformed escape (%ZZ) leaves the parameter undecoded: not an audit id either.
    if (typeof params.auditId !== 'string' || !isViewerAuditId(params.auditId))
      return new Response('Not found\n', { status: 404, headers: { 'content-type': 'text/plain' } })
    return new Response(viewerPage(params.auditId, config.baseUrl, opts.signIn), { headers: HEADERS })
  })
}
