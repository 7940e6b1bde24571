// MCP sessions live in the shared key-value store (Redis in production), not in one process's memory,
// so any api replica can serve any session. A session belongs to the account that opened it.
import { newId } from '../../shared/lib/ids.ts'
import type { KeyValue } from '../../shared/infra/types.ts'

export interface McpSession {
  accountId: string
  protocolVersion: string
  createdAt: number
}

const key = (id: string) => `mcp:session:${id}`
const streamKey = (id: string) => `mcp:stream:${id}`
/** A GET stream's claim outlives a dead replica by at most this long; a live one refreshes it. */
const STREAM_CLAIM_TTL_S = 60
const STREAM_REFRESH_MS = 20_000
/** Sliding expiry is refreshed at most this often per session and process. */
const TOUCH_EVERY_MS = 60_000

export class McpSessionStore {
  private touched = new Map<string, number>()

  constructor(
    private kv: KeyValue,
    private ttlSeconds: number,
  ) {}

  async create(accountId: string, protocolVersion: string): Promise<string> {
    const id = newId('mcs')
    const s: McpSession = { accountId, protocolVersion, createdAt: Date.now() }
    await this.kv.set(key(id), JSON.stringify(s), this.ttlSeconds)
    return id
  }

  private cache = new Map<string, { session: McpSession; until: number }>()

  async get(id: string): Promise<McpSession | null> {
    if (!/^mcs_[0-9A-Za-z]{10,40}$/.test(id)) return null
    const hit = this.cache.get(id)
    if (hit && hit.until > Date.now()) return hit.session
    const s = await this.getStored(id)
    if (s) {
      if (this.cache.size > 50_000) this.cache.clear()
      this.cache.set(id, { session: s, until: Date.now() + 5_000 })
    }
    return s
  }

  private async getStored(id: string): Promise<McpSession | null> {
    const raw = await this.kv.get(key(id))
    if (!raw) return null
    const now = Date.now()
    if ((this.touched.get(id) ?? 0) < now - TOUCH_EVERY_MS) {
      if (this.touched.size > 50_000) this.touched.clear()
      this.touched.set(id, now)
      this.kv.touch(key(id), this.ttlSeconds).catch(() => {})
    }
    return JSON.parse(raw) as McpSession
  }

  /**
   * Claims the session's one GET stream, on any replica. Returns the function that gives it back (call it
   * when the stream ends; calling it again does nothing), or null when another stream holds the session.
   */
  async claimStream(id: string): Promise<(() => void) | null> {
    if (!(await this.kv.claim(streamKey(id), '1', STREAM_CLAIM_TTL_S))) return null
    const refresh = setInterval(() => this.kv.touch(streamKey(id), STREAM_CLAIM_TTL_S).catch(() => {}), STREAM_REFRESH_MS)
    refresh.unref?.()
    let held = true
    return () => {
      if (!held) return
      held = false
      clearInterval(refresh)
      this.kv.del(streamKey(id)).catch(() => {})
    }
  }

  async end(id: string): Promise<boolean> {
    this.touched.delete(id)
    this.cache.delete(id)
    return this.kv.del(key(id))
  }
}
