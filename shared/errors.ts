// The fixed set of error codes a tool or a worker can answer with, and what each means for a caller.

export const ERROR_CODES = {
  invalid_params: 'The arguments do not match the tool\'s input schema.',
  invalid_url: 'The URL is not an absolute http or https URL.',
  target_blocked: 'The target resolves to an address the scanner may not reach (loopback, private, link-local, metadata).',
  target_unreachable: 'The target did not answer (DNS failure, refused connection or timeout).',
  not_found: 'No such resource for this account.',
  plan_required: 'The tool needs a higher plan than the account has.',
  not_implemented: 'The tool is listed but not available on this server yet.',
  allowance_exhausted: 'The weekly allowance and credits are used up.',
  site_not_verified: 'The action needs verify_site for this app first.',
  rate_limited: 'Too many requests; retry later.',
  scanner_unavailable: 'No scanner worker finished the job in time; retry later.',
  scan_failed: 'The scan could not be completed.',
  audit_failed: 'The audit could not be completed; its charge was refunded.',
  internal: 'An unexpected error on our side.',
} as const

export type ErrorCode = keyof typeof ERROR_CODES

/** A typed, expected failure. Thrown inside services, mapped once at each boundary. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code],
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
  }

  toJSON() {
    return { error: { code: this.code, message: this.message, ...this.details } }
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError
