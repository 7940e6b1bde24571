// The live viewer's shared contract: link tokens, the audit's "ended" mark, and the names of the keys and
// channels the crawler (which publishes frames) and the api (which relays them) meet on.
//
// A token is 32 random bytes shown once, in the link's fragment; the store keeps only its SHA-256, bound
// to one audit. Ending the viewer marks the audit ended (so a token still in someone's chat history shows
// the ended page, never frames), deletes the audit's tokens, and tells every api replica to close its
// sockets at once.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { sha256Hex } from '../lib/ids.ts'
import type { KeyValue, PubSub } from '../infra/types.ts'

/**
 * How long the ended mark outlives the crawl. Longer than any token may live (VIEWER_TOKEN_TTL_S is capped
 * below it), so a link opened later says "ended" rather than "not valid".
 */
export const VIEWER_ENDED_TTL_S = 7 * 86_400

/**
 * A replica with an open socket for an audit keeps this key alive; the crawler screencasts only while it
 * exists. Short, so a replica that dies stops the stream within seconds.
 */
export const VIEWER_WATCH_TTL_S = 5

// The socket's close codes, in a module of their own so the viewer's browser script can import them.
export { CLOSE_ENDED, CLOSE_POLICY } from './viewer-close.ts'

/** Audit ids become parts of keys and channel names: keep them to a safe alphabet. */
export const isViewerAuditId = (s: string) => /^[A-Za-z0-9_-]{1,80}$/.test(s)

/** How long the latest frame and progress of an audit are kept for a viewer that opens (renewed as they change). */
export const VIEWER_LATEST_TTL_S = 900

export const viewerKeys = {
  token: (tokenHash: string) => `viewer:token:${tokenHash}`,
  /** The hashes of an audit's tokens, so ending it can delete them. */
  tokens: (auditId: string) => `viewer:tokens:${auditId}`,
  ended: (auditId: string) => `viewer:ended:${auditId}`,
  watching: (auditId: string) => `viewer:watching:${auditId}`,
  /** The latest frame message, sent to a viewer the moment it opens. */
  latest: (auditId: string) => `viewer:latest:${auditId}`,
  /** The latest progress message (pages, findings so far, lanes, state). */
  progress: (auditId: string) => `viewer:progress:${auditId}`,
}

export const viewerChannels = {
  /** JSON frames from the crawler: {"type":"frame","url":...,"data":<base64 JPEG>,"ts":...}. */
  frames: (auditId: string) => `viewer:frames:${auditId}`,
  /**
   * Control messages: 'ended' (from endViewer), 'watch' and 'unwatch' (from api replicas), and what a viewer
   * may ask for: 'focus:N' (follow lane N), 'focus:auto' (follow the most recent page), 'quality:low' and
   * 'quality:normal' (a slow link).
   */
  control: (auditId: string) => `viewer:control:${auditId}`,
}

export type ViewerControl = 'ended' | 'watch' | 'unwatch'

/** The lanes a viewer may choose between: more than any crawl runs. */
export const MAX_VIEWER_LANES = 16

export type ParsedControl =
  | { kind: 'ended' | 'watch' | 'unwatch' }
  | { kind: 'focus'; lane: number | null }
  | { kind: 'quality'; quality: 'normal' | 'low' }

/** A control message, or null for anything else. Also what a viewer's socket may send after its token. */
export function parseViewerControl(m: string): ParsedControl | null {
  if (m === 'ended' || m === 'watch' || m === 'unwatch') return { kind: m }
  if (m === 'focus:auto') return { kind: 'focus', lane: null }
  const focus = /^focus:(\d{1,2})$/.exec(m)
  if (focus && Number(focus[1]) < MAX_VIEWER_LANES) return { kind: 'focus', lane: Number(focus[1]) }
  if (m === 'quality:low' || m === 'quality:normal') return { kind: 'quality', quality: m === 'quality:low' ? 'low' : 'normal' }
  return null
}

/** What a viewer may ask of the crawl: its own requests only (never 'ended', 'watch' or 'unwatch'). */
export const isViewerRequest = (m: string) => {
  const c = parseViewerControl(m)
  return c !== null && (c.kind === 'focus' || c.kind === 'quality')
}

export function viewerLink(baseUrl: string, auditId: string, token: string): string {
  return `${baseUrl}/viewer/${auditId}#${token}`
}

export async function createViewerToken(
  kv: KeyValue,
  auditId: string,
  ttlSeconds: number,
  /** The audit was created just now, so it has no token yet: both keys are written at once, nothing read. */
  opts: { newAudit?: boolean } = {},
): Promise<string> {
  if (!isViewerAuditId(auditId)) throw new Error(`audit id not usable in a viewer link: ${JSON.stringify(auditId)}`)
  const token = randomBytes(32).toString('base64url')
  const hash = sha256Hex(token)
  if (opts.newAudit) {
    await Promise.all([kv.set(viewerKeys.token(hash), auditId, ttlSeconds), kv.set(viewerKeys.tokens(auditId), hash, ttlSeconds)])
    return token
  }
  await kv.set(viewerKeys.token(hash), auditId, ttlSeconds)
  // One audit normally gets one token from one worker, so read-modify-write of the index is enough.
  const known = (await kv.get(viewerKeys.tokens(auditId))) ?? ''
  await kv.set(viewerKeys.tokens(auditId), known ? `${known},${hash}` : hash, ttlSeconds)
  return token
}

export type ViewerTokenState = 'ok' | 'ended' | 'invalid'

/** What a presented link is worth: frames ('ok'), the ended page, or "not valid". */
export async function viewerTokenState(kv: KeyValue, auditId: string, token: string): Promise<ViewerTokenState> {
  if (!isViewerAuditId(auditId)) return 'invalid'
  if (await kv.get(viewerKeys.ended(auditId))) return 'ended'
  // The key is the hash of a 256-bit secret, so the lookup itself reveals nothing; the binding to the
  // audit is compared in constant time (both sides hashed to equal length first).
  if (typeof token !== 'string' || token.length < 20 || token.length > 128) return 'invalid'
  const bound = await kv.get(viewerKeys.token(sha256Hex(token)))
  const same = timingSafeEqual(Buffer.from(sha256Hex(bound ?? ''), 'hex'), Buffer.from(sha256Hex(auditId), 'hex'))
  return bound !== null && same ? 'ok' : 'invalid'
}

export async function verifyViewerToken(kv: KeyValue, auditId: string, token: string): Promise<boolean> {
  return (await viewerTokenState(kv, auditId, token)) === 'ok'
}

export async function isViewerEnded(kv: KeyValue, auditId: string): Promise<boolean> {
  return (await kv.get(viewerKeys.ended(auditId))) !== null
}

/** Ends an audit's live view for good: every link dies and every open viewer closes now. */
export async function endViewer(pubsub: PubSub, kv: KeyValue, auditId: string): Promise<void> {
  if (!isViewerAuditId(auditId)) return
  await kv.set(viewerKeys.ended(auditId), String(Date.now()), VIEWER_ENDED_TTL_S)
  const known = (await kv.get(viewerKeys.tokens(auditId))) ?? ''
  for (const hash of known.split(',').filter(Boolean)) await kv.del(viewerKeys.token(hash))
  await kv.del(viewerKeys.tokens(auditId))
  await kv.del(viewerKeys.watching(auditId))
  await kv.del(viewerKeys.latest(auditId))
  await pubsub.publish(viewerChannels.control(auditId), 'ended' satisfies ViewerControl)
}
