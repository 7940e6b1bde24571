// Request bodies, read in Elysia's parse step by one capped reader (shared/lib/http-body.ts): a route says
// how many bytes it takes (`bodyLimit`), or that it takes none (`noBody`: the body is never read). The parse
// step never answers by itself: it hands the route what was sent, or why it was refused, and each route
// answers a body too large or unreadable in its own words, at its own step (after its session check, its
// rate limit, its media type), so every answer is the same as when each route read its body by hand.
import Elysia from 'elysia'
import { readRequestText } from '../../shared/lib/http-body.ts'

/** What a route was sent: the text, or why there is none. */
export type SentBody =
  | { kind: 'text'; text: string }
  /** Larger than the route's limit, declared or counted; the rest was never read. */
  | { kind: 'too_large' }
  /** The body could not be read (the client went away, a broken encoding): what was thrown. */
  | { kind: 'unreadable'; error: unknown }

/** Reads a request's body as text, at most `limit` bytes. */
export async function readBody(request: Request, limit: number): Promise<SentBody> {
  try {
    const text = await readRequestText(request, limit)
    return text === null ? { kind: 'too_large' } : { kind: 'text', text }
  } catch (error) {
    return { kind: 'unreadable', error }
  }
}

/** A parse step for Elysia: the body read with this cap, as a SentBody. */
export const cappedParser =
  (limit: number) =>
  ({ request }: { request: Request }): Promise<SentBody> =>
    readBody(request, limit)

/**
 * A parse step for a route that takes no body: it reads nothing, and since it answers (null), Elysia's own
 * parsers do not run either, so a body nobody asked for is never read, whatever its Content-Type says.
 */
export const leaveUnread = (): null => null

/** The text of a form post, or '' when the body could not be read (a form read so is answered as empty). */
export const formText = (sent: SentBody): string | null => (sent.kind === 'text' ? sent.text : sent.kind === 'too_large' ? null : '')

/**
 * The route options of a feature that reads bodies: `{ bodyLimit: n }` gives the handler `sent` (a SentBody,
 * read before the handler runs), `{ noBody: true }` leaves the body unread.
 */
export const requestBodies = new Elysia().macro({
  bodyLimit: (limit: number) => ({
    parse: cappedParser(limit),
    resolve: ({ body }) => ({ sent: body as SentBody }),
  }),
  noBody: { parse: leaveUnread },
})
