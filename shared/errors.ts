// The fixed set of error codes a tool or a worker can answer with: what each means for a caller, and what a
// worker does when a job fails with it. One table, so the retry decision is made in one place (as Crawlee's
// NonRetryableError does by class):
//   'target' -> the target's fault: the job fails at once, is not retried and not refunded;
//   'ours'   -> a fault on our side: the job is retried, and failed (and refunded) after the last try.

type Consequence = 'target' | 'ours'

const CODES = {
  invalid_params: { message: "The arguments do not match the tool's input schema.", fault: 'ours' },
  invalid_url: { message: 'The URL is not an absolute http or https URL.', fault: 'target' },
  target_blocked: {
    message: 'The target resolves to an address the scanner may not reach (loopback, private, link-local, metadata).',
    fault: 'target',
  },
  target_unreachable: { message: 'The target did not answer (DNS failure, refused connection or timeout).', fault: 'target' },
  login_failed: {
    message: 'An authenticated audit could not log in with the credentials given; nothing was audited, and its charge was refunded.',
    fault: 'target',
  },
  not_found: { message: 'No such resource for this account.', fault: 'ours' },
  plan_required: { message: 'The tool needs a higher plan than the account has.', fault: 'ours' },
  not_implemented: { message: 'The tool is listed but not available on this server yet.', fault: 'ours' },
  allowance_exhausted: { message: 'The weekly allowance and credits are used up.', fault: 'ours' },
  site_not_verified: { message: 'The action needs verify_site for this app first.', fault: 'ours' },
  rate_limited: { message: 'Too many requests; retry later.', fault: 'ours' },
  scanner_unavailable: { message: 'No scanner worker finished the job in time; retry later.', fault: 'ours' },
  scan_failed: { message: 'The scan could not be completed.', fault: 'ours' },
  audit_failed: { message: 'The audit could not be completed; its charge was refunded.', fault: 'ours' },
  internal: { message: 'An unexpected error on our side.', fault: 'ours' },
} as const satisfies Record<string, { message: string; fault: Consequence }>

export type ErrorCode = keyof typeof CODES

/** What each code means for a caller. */
export const ERROR_CODES = Object.fromEntries(Object.entries(CODES).map(([code, c]) => [code, c.message])) as {
  readonly [C in ErrorCode]: (typeof CODES)[C]['message']
}

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

/** A job that failed with this error is the target's fault: fail it now, without a retry or a refund. */
export const isTargetFault = (e: unknown): e is AppError => isAppError(e) && CODES[e.code].fault === 'target'

/** The message of anything thrown: an Error's message, or the value as text (a thrown string, a rejected reason). */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))
