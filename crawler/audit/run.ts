// One crawl's run state: why it stops (the caller's abort, the wall-time cap, a failed hook), the signal
// every wait of the crawl listens to, the counts, and the summary. As Crawlee's BasicCrawler keeps its
// stats and stop reason apart from its pool.
import type { CheckResult } from '../../shared/report/scan-report.ts'

export type Stop = 'maxDuration' | 'aborted' | 'hookFailed' | 'sessionLost'

export interface CrawlSummary {
  /** Pages of this run that loaded with a status below 400 (resumed pages not included). */
  pagesScanned: number
  /** Pages of this run that did not: error status, timeout, crash, blocked. */
  pagesFailed: number
  /** Distinct pages known at the end, resumed ones included. */
  pagesDiscovered: number
  stoppedBy: 'done' | 'maxPages' | 'maxDuration' | 'aborted' | 'sessionLost'
  /** An authenticated crawl whose session ended: the page that was sent to the login page instead. */
  sessionLostAt: string | null
  /** Site-level check results from the start URL's scan. */
  siteChecks: CheckResult[]
}

export class CrawlRun {
  /** Aborted when the run stops, for whatever reason: every wait of the crawl listens to it. */
  private readonly halt = new AbortController()
  private stopped: Stop | null = null
  private hookError: unknown = null
  /** Lanes waiting for work sleep here; anything that may give them work wakes them. */
  private waiters: Array<() => void> = []
  private readonly timer: ReturnType<typeof setTimeout>
  /** The wall-time cap on the clock: a timer fires late on a busy machine, the clock does not. */
  private readonly deadlineAt: number
  private readonly onAbort = () => this.stop('aborted')
  scanned = 0
  failed = 0
  /** The page budget ran out with pages still queued. */
  budgetHit = false
  /** An authenticated crawl: the first page sent to a login page (the session was lost there). */
  sessionLostAt: string | null = null

  constructor(
    private readonly caller: AbortSignal,
    maxDurationMs: number,
  ) {
    caller.addEventListener('abort', this.onAbort, { once: true })
    this.deadlineAt = performance.now() + maxDurationMs
    this.timer = setTimeout(() => this.stop('maxDuration'), maxDurationMs)
    if (caller.aborted) this.stop('aborted')
  }

  get signal(): AbortSignal {
    return this.halt.signal
  }

  /** Whether the run has stopped; past the wall-time cap it stops here, whether or not its timer has fired. */
  get halted(): boolean {
    if (!this.halt.signal.aborted && performance.now() >= this.deadlineAt) this.stop('maxDuration')
    return this.halt.signal.aborted
  }

  stop(why: Stop): void {
    this.stopped ??= why
    this.halt.abort()
    this.wake()
  }

  /** A hook rejected: the run stops and crawlSite rejects with the first such error. */
  hookFailed(e: unknown): void {
    this.hookError ??= e
    this.stop('hookFailed')
  }

  rethrowHookError(): void {
    if (this.hookError) throw this.hookError
  }

  wake(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  /** Resolves at the next wake(). */
  waitForWork(): Promise<void> {
    return new Promise<void>((r) => this.waiters.push(r))
  }

  /** p's value, or null when the run stops first. */
  unlessHalted<T>(p: Promise<T>): Promise<T | null> {
    return Promise.race([p, new Promise<null>((r) => this.halt.signal.addEventListener('abort', () => r(null), { once: true }))])
  }

  /** Ends the run's timers and listeners and wakes every waiter (they see the halt and return). */
  end(): void {
    clearTimeout(this.timer)
    this.caller.removeEventListener('abort', this.onAbort)
    this.halt.abort()
    this.wake()
  }

  summary(pagesDiscovered: number, siteChecks: CheckResult[]): CrawlSummary {
    const stoppedBy: CrawlSummary['stoppedBy'] =
      this.stopped === 'aborted'
        ? 'aborted'
        : this.stopped === 'maxDuration'
          ? 'maxDuration'
          : this.stopped === 'sessionLost'
            ? 'sessionLost'
            : this.budgetHit
              ? 'maxPages'
              : 'done'
    return {
      pagesScanned: this.scanned,
      pagesFailed: this.failed,
      pagesDiscovered,
      stoppedBy,
      siteChecks,
      sessionLostAt: this.sessionLostAt,
    }
  }
}
