// Exports too large to answer inline: kept in the key-value store for an hour, reached through unguessable
// tokens (32 random bytes), the only credential of GET /api/exports/<token>. The store holds each token's
// SHA-256, never the token, so a look at the store does not hand out working links.
//
// One export of a report is stored once: its body lives under the identity of what it is (account, report,
// format, version), and every export_report call for it while it has EXPORT_LIMITS.reuseSeconds left is
// answered with a new token to the same body, built and stored no second time. What an account stores is
// counted in bytes per hour (EXPORT_LIMITS.bytesPerHour); a body lives an hour from when it was built, so
// one account never holds more than twice that at once, in the same store as sessions, queues and limits.
import { randomBytes } from 'node:crypto'
import { AppError } from '../../shared/errors.ts'
import type { KeyValue } from '../../shared/infra/types.ts'
import { sha256Hex } from '../../shared/lib/ids.ts'

export const EXPORT_LIMITS = {
  /** How long a stored export lives from when it was built. */
  ttlSeconds: 3_600,
  /** A stored export is handed out again while it has at least this long to live, else built anew. */
  reuseSeconds: 600,
  /** Bytes of new exports one account may store per hour. */
  bytesPerHour: 32 * 1024 * 1024,
} as const

/** base64url of 32 bytes: 43 characters, no padding. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

export interface StoredExport {
  mediaType: string
  filename: string
  content: string
}

/** What an export is of: the same identity is the same bytes. */
export interface ExportIdentity {
  accountId: string
  reportId: string
  format: string
  version: string
}

/** A stored body as export_report describes it, without the content. */
export interface StoredExportInfo {
  mediaType: string
  filename: string
  bytes: number
  /** When the body (and so every link to it) stops working. */
  expiresAt: string
}

export interface ExportLink {
  token: string
  expiresAt: string
}

const tokenKey = (token: string) => `export:${sha256Hex(token)}`
const bodyKey = (body: string) => `export-body:${body}`
const infoKey = (body: string) => `export-info:${body}`
const bodyId = (i: ExportIdentity) => sha256Hex(JSON.stringify([i.accountId, i.reportId, i.format, i.version]))

export class ExportStore {
  constructor(
    private kv: KeyValue,
    private now: () => number = Date.now,
    private limits: { ttlSeconds: number; reuseSeconds: number; bytesPerHour: number } = EXPORT_LIMITS,
  ) {}

  /**
   * A new link to the stored body of this identity, when one has at least `reuseSeconds` left, with what
   * it holds; null when the export has to be built.
   */
  async reuse(identity: ExportIdentity): Promise<(StoredExportInfo & ExportLink) | null> {
    const body = bodyId(identity)
    const raw = await this.kv.get(infoKey(body))
    if (!raw) return null
    let info: StoredExportInfo
    try {
      info = JSON.parse(raw) as StoredExportInfo
    } catch {
      return null
    }
    const left = Math.floor((Date.parse(info.expiresAt) - this.now()) / 1000)
    if (!(left >= this.limits.reuseSeconds)) return null
    return { ...info, ...(await this.link(body, info, left)) }
  }

  /**
   * Stores a built export for `ttlSeconds` and returns a link to it. Refused with rate_limited, storing
   * nothing, when the account has stored `bytesPerHour` of exports this hour.
   */
  async put(identity: ExportIdentity, e: StoredExport): Promise<ExportLink> {
    const bytes = Buffer.byteLength(e.content, 'utf8')
    await this.charge(identity.accountId, bytes)
    const body = bodyId(identity)
    const ttl = this.limits.ttlSeconds
    const expiresAt = new Date(this.now() + ttl * 1_000).toISOString()
    await this.kv.set(bodyKey(body), e.content, ttl)
    const info: StoredExportInfo = { mediaType: e.mediaType, filename: e.filename, bytes, expiresAt }
    await this.kv.set(infoKey(body), JSON.stringify(info), ttl)
    return this.link(body, info, ttl)
  }

  /** The export a token names, or null: malformed, unknown or expired tokens are all the same "no". */
  async get(token: string): Promise<StoredExport | null> {
    if (!TOKEN.test(token)) return null
    const raw = await this.kv.get(tokenKey(token))
    if (!raw) return null
    let ref: { body?: unknown; mediaType?: unknown; filename?: unknown }
    try {
      ref = JSON.parse(raw)
    } catch {
      return null
    }
    if (typeof ref.body !== 'string' || typeof ref.mediaType !== 'string' || typeof ref.filename !== 'string') return null
    const content = await this.kv.get(bodyKey(ref.body))
    if (content === null) return null
    return { mediaType: ref.mediaType, filename: ref.filename, content }
  }

  /** Counts `bytes` against the account's hour, or refuses (and takes the bytes back). */
  private async charge(accountId: string, bytes: number): Promise<void> {
    const hour = 3_600
    const t = Math.floor(this.now() / 1000)
    const window = Math.floor(t / hour)
    const key = `export-bytes:${accountId}:${window}`
    const used = await this.kv.incr(key, hour, bytes)
    if (used <= this.limits.bytesPerHour) return
    await this.kv.incr(key, hour, -bytes)
    const mb = (n: number) => `${Math.round(n / 1024 / 102.4) / 10} MB`
    throw new AppError(
      'rate_limited',
      `This account stored ${mb(used - bytes)} of exports in the last hour (at most ${mb(this.limits.bytesPerHour)}); links already given keep working. Retry later, or export a smaller format (markdown, junit).`,
      { retryAfter: (window + 1) * hour - t, limit: this.limits.bytesPerHour },
    )
  }

  /** A new token for a stored body, living as long as the body has left. */
  private async link(body: string, info: StoredExportInfo, ttlSeconds: number): Promise<ExportLink> {
    const token = randomBytes(32).toString('base64url')
    await this.kv.set(tokenKey(token), JSON.stringify({ body, mediaType: info.mediaType, filename: info.filename }), ttlSeconds)
    return { token, expiresAt: info.expiresAt }
  }
}
