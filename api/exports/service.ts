// Exports too large to answer inline: kept in the key-value store for an hour under an unguessable token
// (32 random bytes), which is the only credential of GET /api/exports/<token>. The store holds the token's
// SHA-256, never the token, so a look at the store does not hand out working links.
import { randomBytes } from 'node:crypto'
import { sha256Hex } from '../../shared/lib/ids.ts'
import type { KeyValue } from '../../shared/infra/types.ts'

export const EXPORT_TTL_S = 3_600

/** base64url of 32 bytes: 43 characters, no padding. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

export interface StoredExport {
  mediaType: string
  filename: string
  content: string
}

const key = (token: string) => `export:${sha256Hex(token)}`

export class ExportStore {
  constructor(
    private kv: KeyValue,
    private now: () => number = Date.now,
  ) {}

  /** Keeps an export for EXPORT_TTL_S; returns its token and when it stops working. */
  async put(e: StoredExport): Promise<{ token: string; expiresAt: string }> {
    const token = randomBytes(32).toString('base64url')
    const expiresAt = new Date(this.now() + EXPORT_TTL_S * 1_000).toISOString()
    await this.kv.set(key(token), JSON.stringify(e), EXPORT_TTL_S)
    return { token, expiresAt }
  }

  /** The export a token names, or null: malformed, unknown or expired tokens are all the same "no". */
  async get(token: string): Promise<StoredExport | null> {
    if (!TOKEN.test(token)) return null
    const raw = await this.kv.get(key(token))
    if (!raw) return null
    try {
      const e = JSON.parse(raw) as Partial<StoredExport>
      if (typeof e.content !== 'string' || typeof e.mediaType !== 'string' || typeof e.filename !== 'string') return null
      return { mediaType: e.mediaType, filename: e.filename, content: e.content }
    } catch {
      return null
    }
  }
}
