// GET /api/exports/:token: an export that export_report stored because it was too large to answer inline.
// Public: the token (32 random bytes, an hour) is the credential, as for a pre-signed download link. The
// answer is a download (Content-Disposition), never cached, and never run as a page on this origin: an HTML
// export is sandboxed by its own CSP header, since it shows what a scanned, possibly hostile, site sent.
import Elysia from 'elysia'
import type { KeyValue } from '../../shared/infra/types.ts'
import { ExportStore } from './service.ts'

const notFound = () =>
  new Response('Not found: this export link is unknown or has expired (links last an hour). Call export_report again.\n', {
    status: 404,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  })

export function exportRoutes(deps: { kv: KeyValue }) {
  const store = new ExportStore(deps.kv)
  return new Elysia({ name: 'exports' }).get('/api/exports/:token', async ({ params }) => {
    let found: Awaited<ReturnType<ExportStore['get']>>
    try {
      found = typeof params.token === 'string' ? await store.get(params.token) : null
    } catch {
      return new Response('The export store cannot be reached right now; retry shortly.\n', {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'retry-after': '5' },
      })
    }
    if (!found) return notFound()
    return new Response(found.content, {
      headers: {
        'content-type': found.mediaType,
        'content-disposition': `attachment; filename="${found.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      },
    })
  })
}
