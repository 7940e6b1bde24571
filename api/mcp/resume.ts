// GET with Last-Event-ID: the rest of a stream of this account, from the shared event log (events.ts), on
// any replica. One reader per stream at a time (409); an id that names no stream of this account is 404.
import type { Principal } from '../../shared/db/accounts.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { CORS_EXPOSE } from '../http/cors.ts'
import { claimResume, followStream, resumableStream } from './events.ts'
import { rpcErrorResponse, unavailable } from './rpc-error.ts'

export async function resume(
  infra: Pick<Infra, 'kv' | 'events'>,
  req: Request,
  lastEventId: string,
  principal: Principal,
  sessionId: string | null,
): Promise<Response> {
  if (!(req.headers.get('accept') ?? '').includes('text/event-stream')) {
    return rpcErrorResponse(406, -32000, 'Not Acceptable: a resumed stream is text/event-stream')
  }
  const { kv, events } = infra
  const stream = await resumableStream(kv, events, lastEventId, principal.account.id).catch(() => undefined)
  if (stream === undefined) return unavailable('the event store')
  if (!stream) {
    return rpcErrorResponse(404, -32001, 'Nothing to resume: the Last-Event-ID names no stream of this account (or it expired)')
  }
  const release = await claimResume(kv, stream.streamId).catch(() => undefined)
  if (release === undefined) return unavailable('the event store')
  if (!release) return rpcErrorResponse(409, -32000, 'Conflict: this stream is already being resumed (one reader at a time)')
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS_EXPOSE,
  }
  if (sessionId) headers['mcp-session-id'] = sessionId
  return new Response(followStream(events, stream.streamId, stream.entryId, release, req.signal), { headers })
}
