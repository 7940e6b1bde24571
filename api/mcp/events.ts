// Resumable SSE streams. Every message the SDK sends on a POST's SSE stream (progress, then the result) is
// appended to an event log in the shared store, under the SDK's stream id, with the account that owns it.
// A client that lost the connection sends GET /api/mcp with Last-Event-ID to any replica: that replica
// replays what came after the id and then follows the log until the request's answer, even while the
// request itself runs on another replica (the SDK's own replay stops at what was stored when it began).
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { EventLog, KeyValue } from '../../shared/infra/types.ts'

/** How long a stream's events can be resumed after its last one: long enough to reconnect, no longer. */
export const EVENTS_TTL_S = 900
/** A resumed stream that sees no event for this long ends (a keep-alive comment goes out meanwhile). */
const RESUME_IDLE_MS = 120_000
/** The longest a resumed stream stays open at all. */
const RESUME_MAX_MS = 15 * 60_000
const KEEP_ALIVE_MS = 15_000
const WAIT_MS = 1_000

const logName = (streamId: string) => `mcp:events:${streamId}`
const ownerKey = (streamId: string) => `mcp:events-owner:${streamId}`

/** Event ids are `<stream id>.<log entry id>`: SDK stream ids are UUIDs, entry ids have no dot either. */
export function parseEventId(eventId: string): { streamId: string; entryId: string } | null {
  // Entry ids are Redis stream ids (ms-seq) or the embedded log's sequence numbers.
  const m = /^([0-9a-f-]{36})\.(\d{1,20}(?:-\d{1,20})?)$/.exec(eventId)
  return m ? { streamId: m[1]!, entryId: m[2]! } : null
}

/** One per request: the SDK's EventStore over the shared event log, recording the owning account once per stream. */
export class McpEventStore implements EventStore {
  private owned = new Set<string>()

  constructor(
    private events: EventLog,
    private kv: KeyValue,
    private accountId: string,
  ) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if (!this.owned.has(streamId)) {
      this.owned.add(streamId)
      await this.kv.set(ownerKey(streamId), this.accountId, EVENTS_TTL_S)
    }
    const entryId = await this.events.append(logName(streamId), JSON.stringify(message), EVENTS_TTL_S)
    return `${streamId}.${entryId}`
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return parseEventId(eventId)?.streamId
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }) {
    const parsed = parseEventId(lastEventId)
    if (!parsed) throw new Error('Invalid event ID')
    for (const e of await this.events.read(logName(parsed.streamId), parsed.entryId, { waitMs: 0, max: 1_000 })) {
      await send(`${parsed.streamId}.${e.id}`, JSON.parse(e.data) as JSONRPCMessage)
    }
    return parsed.streamId
  }
}

/**
 * The stream to resume when it is known, belongs to this account and holds the entry named, else null
 * (answered 404): a made-up entry id never opens a stream that waits on nothing.
 */
export async function resumableStream(
  kv: KeyValue,
  events: EventLog,
  eventId: string,
  accountId: string,
): Promise<{ streamId: string; entryId: string } | null> {
  const parsed = parseEventId(eventId)
  if (!parsed) return null
  if ((await kv.get(ownerKey(parsed.streamId))) !== accountId) return null
  const seen = await events.read(logName(parsed.streamId), '', { waitMs: 0, max: 1_000 })
  return seen.some((e) => e.id === parsed.entryId) ? parsed : null
}

/** One resumed reader per stream at a time, on any replica; the returned function gives the claim back. */
export async function claimResume(kv: KeyValue, streamId: string): Promise<(() => void) | null> {
  const key = `mcp:events-reader:${streamId}`
  if (!(await kv.claim(key, '1', EVENTS_TTL_S))) return null
  let held = true
  return () => {
    if (!held) return
    held = false
    kv.del(key).catch(() => {})
  }
}

const isAnswer = (m: unknown) => typeof m === 'object' && m !== null && 'id' in m && ('result' in m || 'error' in m)

/**
 * The rest of a stream after `entryId`, as SSE: what the log holds, then what is appended, until a
 * JSON-RPC answer has been sent (the stream's request is done), or the stream idles or runs too long.
 */
export function followStream(
  events: EventLog,
  streamId: string,
  entryId: string,
  onEnd: () => void,
  signal?: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let cursor = entryId
  const started = Date.now()
  let lastSent = Date.now()
  let lastEvent = Date.now()
  let closed = false
  /** Ends the stream once, however it ends, and gives back the reader's claim. */
  const end = (c?: ReadableStreamDefaultController<Uint8Array>) => {
    if (closed) return
    closed = true
    onEnd()
    c?.close()
  }
  return new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(encoder.encode(': resumed\n\n'))
      // Resumed at or after the answer: the request is done and nothing more will come.
      const seen = await events.read(logName(streamId), '', { waitMs: 0, max: 1_000 }).catch((e) => {
        end()
        throw e
      })
      const at = seen.findIndex((e) => e.id === entryId)
      if (at >= 0 && seen.slice(0, at + 1).some((e) => isAnswer(JSON.parse(e.data)))) end(c)
    },
    async pull(c) {
      while (!closed) {
        const now = Date.now()
        if (signal?.aborted || now - started > RESUME_MAX_MS || now - lastEvent > RESUME_IDLE_MS) return end(c)
        const batch = await events.read(logName(streamId), cursor, { waitMs: WAIT_MS, max: 100 }).catch((e) => {
          end()
          throw e
        })
        if (batch.length === 0) {
          if (Date.now() - lastSent > KEEP_ALIVE_MS) {
            lastSent = Date.now()
            c.enqueue(encoder.encode(': keep-alive\n\n'))
            return
          }
          continue
        }
        let answered = false
        for (const e of batch) {
          cursor = e.id
          const message = JSON.parse(e.data) as unknown
          // The SDK's priming event ({}) carries only an id; older clients cannot read its empty data.
          if (typeof message === 'object' && message !== null && Object.keys(message).length === 0) continue
          c.enqueue(encoder.encode(`id: ${streamId}.${e.id}\nevent: message\ndata: ${e.data}\n\n`))
          answered ||= isAnswer(message)
        }
        lastSent = lastEvent = Date.now()
        if (answered) end(c)
        return
      }
    },
    cancel() {
      end()
    },
  })
}
