// Request-rate limits of /api/mcp, per credential and per account, without a store round trip per request.
//
// Each replica keeps a token bucket per key in memory (a burst, refilled at the sustained rate) and answers
// from it at once. Every second it adds what each key spent to a shared counter of the current minute in the
// key-value store (Redis in production: one INCRBY per active key, not per request); a key whose shared
// count has passed the per-minute rate plus one burst is refused on every replica until that minute ends. So one replica
// enforces its bucket exactly, and all replicas together let through at most one second of extra traffic.
import type { KeyValue } from '../../shared/infra/types.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { MCP_REQUEST_RATES, type RequestRate } from '../../shared/rate-limits.ts'
import { errorMessage } from '../../shared/errors.ts'

export type LimitDecision = { ok: true } | { ok: false; retryAfterSeconds: number; scope: 'credential' | 'account' }

interface Bucket {
  rate: RequestRate
  tokens: number
  refilledAt: number
  /** Spent since the last flush to the shared counter. */
  unflushed: number
  /** The shared count passed the rate: refused on this replica until then (ms). */
  blockedUntil: number
  lastUsed: number
}

const ALLOWED: LimitDecision = Object.freeze({ ok: true })
const FLUSH_MS = 1_000
const WINDOW_S = 60
/** Buckets idle this long are dropped (a full bucket carries no state worth keeping). */
const IDLE_MS = 5 * 60_000
/** A bound on memory: past it, idle buckets are dropped at the next flush. */
const MAX_BUCKETS = 100_000

export class RequestLimiter {
  private buckets = new Map<string, Bucket>()
  private timer: ReturnType<typeof setInterval> | null = null
  private flushing = false

  /** scale multiplies every rate (operators' knob, and load tests); 0 turns the limits off. */
  constructor(
    private kv: KeyValue,
    private scale: number,
    private log: Logger,
    private now: () => number = Date.now,
  ) {}

  /**
   * Spends `cost` requests (a JSON-RPC batch costs one per message) of the credential and of its account,
   * or says which limit refused them; nothing is spent when either refuses.
   */
  take(credentialId: string, accountId: string, cost = 1): LimitDecision {
    if (this.scale <= 0) return ALLOWED
    if (!this.timer) {
      this.timer = setInterval(() => void this.flush(), FLUSH_MS)
      this.timer.unref?.()
    }
    const credential = this.bucket(`credential:${credentialId}`, MCP_REQUEST_RATES.perCredential)
    const account = this.bucket(`account:${accountId}`, MCP_REQUEST_RATES.perAccount)
    const t = this.now()
    const refused = this.refusal(credential, 'credential', t, cost) ?? this.refusal(account, 'account', t, cost)
    if (refused) return refused
    for (const b of [credential, account]) {
      b.tokens -= cost
      b.unflushed += cost
      b.lastUsed = t
    }
    return ALLOWED
  }

  /** Why this bucket cannot spend `cost` now, or null when it can (it is refilled to `t` on the way). */
  private refusal(b: Bucket, scope: 'credential' | 'account', t: number, cost: number): LimitDecision | null {
    if (b.blockedUntil > t) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((b.blockedUntil - t) / 1000)), scope }
    this.refill(b, t)
    if (b.tokens < cost) {
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((cost - b.tokens) / this.perMs(b.rate) / 1000)), scope }
    }
    return null
  }

  private perMs(rate: RequestRate) {
    return (rate.perMinute * this.scale) / 60_000
  }

  private bucket(key: string, rate: RequestRate): Bucket {
    let b = this.buckets.get(key)
    if (!b) {
      b = { rate, tokens: rate.burst * this.scale, refilledAt: this.now(), unflushed: 0, blockedUntil: 0, lastUsed: this.now() }
      this.buckets.set(key, b)
    }
    return b
  }

  private refill(b: Bucket, t: number) {
    b.tokens = Math.min(b.rate.burst * this.scale, b.tokens + (t - b.refilledAt) * this.perMs(b.rate))
    b.refilledAt = t
  }

  /** Adds what each key spent to the shared per-minute counters; marks keys that passed their rate. */
  async flush(): Promise<void> {
    if (this.flushing) return
    this.flushing = true
    try {
      const t = this.now()
      const window = Math.floor(t / 1000 / WINDOW_S)
      const windowEnd = (window + 1) * WINDOW_S * 1000
      for (const [key, b] of this.buckets) {
        if (b.unflushed === 0) {
          if (t - b.lastUsed > IDLE_MS || this.buckets.size > MAX_BUCKETS) this.buckets.delete(key)
          continue
        }
        const spent = b.unflushed
        b.unflushed = 0
        const total = await this.kv.incr(`ratelimit:mcp:${key}:${window}`, WINDOW_S * 2, spent)
        if (total > b.rate.perMinute * this.scale + b.rate.burst * this.scale) b.blockedUntil = windowEnd
      }
    } catch (e) {
      // The store is down: each replica still enforces its own buckets.
      this.log.warn('rate-limit counters not shared', { error: errorMessage(e) })
    } finally {
      this.flushing = false
    }
  }

  close() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
