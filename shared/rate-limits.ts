// Every rate limit of the service in one table: how many requests a key may make per window.
export interface RateLimit {
  limit: number
  windowSeconds: number
}

export const RATE_LIMITS = {
  /** RFC 7591 registration, per client IP: a real client registers once per install. */
  oauthRegister: { limit: 20, windowSeconds: 3_600 },
  /** Code exchange, per client IP. */
  oauthToken: { limit: 60, windowSeconds: 60 },
  /** Starting a sign-in, per client IP. */
  signIn: { limit: 30, windowSeconds: 60 },
  /**
   * MCP sessions opened (initialize), per credential. A session lives MCP_SESSION_TTL_S (a day by default)
   * after its last use, so the sessions a credential keeps alive are bounded by this and by its request rate.
   */
  mcpSessions: { limit: 100, windowSeconds: 3_600 },
  /** Repository connects (each runs git against a host the caller chose), per account. */
  repositoryConnect: { limit: 20, windowSeconds: 3_600 },
} as const satisfies Record<string, RateLimit>

export type RateLimitName = keyof typeof RATE_LIMITS

/** A token bucket: `burst` requests at once, refilled at `perMinute`. */
export interface RequestRate {
  burst: number
  perMinute: number
}

/**
 * Requests to /api/mcp (every method), per credential and per account (an account's keys and agents
 * together). An agent calls a few tools a minute and CI polls get_audit every few seconds: these leave
 * room for both. MCP_RATE_LIMIT_SCALE multiplies them (0 turns them off).
 */
export const MCP_REQUEST_RATES = {
  perCredential: { burst: 60, perMinute: 120 },
  perAccount: { burst: 150, perMinute: 300 },
} as const satisfies Record<string, RequestRate>

/**
 * scan_app calls one account may have waiting at once, by plan: each holds a scanner slot that every account
 * shares. A call over the cap answers rate_limited at once. Scans older than the window no longer count
 * (their caller has long given up; recovery finishes or fails them).
 */
export const CONCURRENT_SCANS = {
  perPlan: { free: 2, launch: 4, scale: 8 },
  windowSeconds: 600,
  /** What a refused caller is told to wait: about one scan. */
  retryAfterSeconds: 5,
} as const

/**
 * audit_app starts per account in any hour (each is a crawl of up to 500 pages on shared browsers), on top
 * of the weekly allowance and credits. Counted in PostgreSQL under the account's row lock, like the charge.
 */
export const AUDIT_STARTS = { perHour: 20 } as const
