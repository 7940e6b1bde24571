// Fixed-window rate limits in the shared key-value store (Redis in production), so every replica counts
// together. The count is one atomic increment: concurrent requests on any replica never pass the limit.
import { RATE_LIMITS, type RateLimitName } from '../../shared/rate-limits.ts'
import type { KeyValue } from '../../shared/infra/types.ts'

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number }

export class RateLimiter {
  constructor(
    private kv: KeyValue,
    private now: () => number = Date.now,
  ) {}

  async hit(name: RateLimitName, subject: string): Promise<RateDecision> {
    const { limit, windowSeconds } = RATE_LIMITS[name]
    const t = Math.floor(this.now() / 1000)
    const window = Math.floor(t / windowSeconds)
    const key = `ratelimit:${name}:${subject}:${window}`
    const count = await this.kv.incr(key, windowSeconds)
    if (count > limit) return { ok: false, retryAfterSeconds: (window + 1) * windowSeconds - t }
    return { ok: true }
  }
}
