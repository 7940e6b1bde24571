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
} as const satisfies Record<string, RateLimit>

export type RateLimitName = keyof typeof RATE_LIMITS
