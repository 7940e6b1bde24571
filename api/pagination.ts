// Offset cursors for lists that never change once written (a completed scan's checks, a completed audit's
// findings, pages and checks), and the size cap on a page of them. A cursor is opaque to callers; inside it
// names its scope (what it pages: a scan, or an audit and one of its lists), so a cursor of one list is
// refused by another instead of silently reading the wrong thing.
import { AppError } from '../shared/errors.ts'

const OPAQUE = /^[A-Za-z0-9_-]{1,200}$/

export const encodeOffset = (scope: string, offset: number) => Buffer.from(`${scope}:${offset}`).toString('base64url')

/** The offset in a cursor of `scope`, or null when the cursor is malformed or of another scope. */
export function decodeOffset(scope: string, cursor: string): number | null {
  if (!OPAQUE.test(cursor)) return null
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const colon = text.lastIndexOf(':')
  if (colon < 0 || text.slice(0, colon) !== scope) return null
  const digits = text.slice(colon + 1)
  return /^\d{1,6}$/.test(digits) ? Number(digits) : null
}

/** The offset a call starts at: 0 without a cursor, else the cursor's; invalid_params naming what to pass otherwise. */
export function offsetOf(scope: string, cursor: string | undefined, what: string): number {
  if (cursor === undefined) return 0
  const offset = decodeOffset(scope, cursor)
  if (offset === null) {
    throw new AppError(
      'invalid_params',
      `cursor is not a cursor of ${what}: pass nextCursor from the previous page unchanged, with the same arguments.`,
      {
        details: [{ path: '/cursor', message: 'Invalid cursor' }],
      },
    )
  }
  return offset
}

/** Bytes of a value as the tools send it (JSON, UTF-8). */
export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8')

/**
 * The first items that fit in `budget` bytes of JSON, at least one so a page always moves on: a page holds
 * at most `limit` items, fewer when they are large (a finding found on 100 pages lists them all).
 */
export function fitting<T>(items: readonly T[], budget: number): T[] {
  const out: T[] = []
  let used = 2
  for (const item of items) {
    const size = jsonBytes(item) + 1
    if (out.length > 0 && used + size > budget) break
    out.push(item)
    used += size
  }
  return out
}

/** The cursor of the page after one that showed `shown` items from `offset` of `total`; null on the last page. */
export const nextCursor = (scope: string, offset: number, shown: number, total: number) =>
  offset + shown < total && shown > 0 ? encodeOffset(scope, offset + shown) : null
