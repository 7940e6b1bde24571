// What the public status and benchmark endpoints answer, on plain values. Both are unauthenticated and may be
// polled by every status page and landing page that embeds them, so each process keeps its answer briefly
// and lets one query at a time reach the database, however many requests arrive together.
import { withDeadline } from '../../shared/lib/async.ts'
import { type Benchmark, scoreBenchmark } from '../../shared/db/benchmark.ts'
import { activeIncidents, type Severity } from '../../shared/db/incidents.ts'
import type { Sql } from '../../shared/db/index.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { errorMessage } from '../../shared/errors.ts'

/** How long a process reuses its answer: incidents should show up fast, the benchmark moves slowly. */
export const INCIDENTS_TTL_MS = 5_000
export const BENCHMARK_TTL_MS = 30_000
/** Longest wait on the database for one answer; the status endpoint then reads as "no incident". */
const QUERY_DEADLINE_MS = 3_000

export interface PublicIncident {
  id: string
  title: string
  severity: Severity
  message: string | null
  startedAt: string
}

export interface StatusDeps {
  sql: Sql
  log: Logger
  /** Overrides for tests: a clock and the cache lifetimes. */
  now?: () => number
  incidentsTtlMs?: number
  benchmarkTtlMs?: number
}

/** A value loaded at most once per `ttlMs`, with concurrent callers sharing the load in flight. */
class Cached<T> {
  private fresh: { value: T; at: number } | null = null
  private inflight: Promise<T> | null = null
  constructor(
    private readonly load: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  get(): Promise<T> {
    if (this.fresh && this.now() - this.fresh.at < this.ttlMs) return Promise.resolve(this.fresh.value)
    this.inflight ??= this.load()
      .then((value) => {
        this.fresh = { value, at: this.now() }
        return value
      })
      .finally(() => {
        this.inflight = null
      })
    return this.inflight
  }

  /** The last value loaded, however old; null before the first load. */
  last(): T | null {
    return this.fresh?.value ?? null
  }
}

export class StatusService {
  private readonly incidents: Cached<{ incidents: PublicIncident[] }>
  private readonly benchmarks: Cached<Benchmark>

  constructor(private readonly deps: StatusDeps) {
    const now = deps.now ?? Date.now
    this.incidents = new Cached(() => this.loadIncidents(), deps.incidentsTtlMs ?? INCIDENTS_TTL_MS, now)
    // A deadline does not stop the query itself: while one is still running, later loads wait on that one
    // (each within its own deadline) instead of starting another full aggregate beside it.
    let running: Promise<Benchmark> | null = null
    this.benchmarks = new Cached(
      () => {
        running ??= scoreBenchmark(deps.sql).finally(() => {
          running = null
        })
        return withDeadline(running, QUERY_DEADLINE_MS, 'benchmark query')
      },
      deps.benchmarkTtlMs ?? BENCHMARK_TTL_MS,
      now,
    )
  }

  /**
   * Unresolved incidents, newest first. Never fails: a database that errs or does not answer in
   * time reads as no incident, and that answer is kept like any other, so an outage is not hammered.
   */
  async active(): Promise<{ incidents: PublicIncident[] }> {
    return this.incidents.get().catch(() => ({ incidents: [] }))
  }

  /**
   * The mean score of every completed scan and their count. When the database fails, the last answer this
   * process computed is served however old; with none yet, the error goes to the caller.
   */
  async benchmark(): Promise<Benchmark> {
    try {
      return await this.benchmarks.get()
    } catch (e) {
      const last = this.benchmarks.last()
      this.deps.log.warn('benchmark query failed', { error: errorMessage(e), servedStale: last !== null })
      if (last) return last
      throw e
    }
  }

  private async loadIncidents(): Promise<{ incidents: PublicIncident[] }> {
    try {
      const rows = await withDeadline(activeIncidents(this.deps.sql), QUERY_DEADLINE_MS, 'incidents query')
      return {
        incidents: rows.map((i) => ({
          id: i.id,
          title: i.title,
          severity: i.severity,
          message: i.message,
          startedAt: i.startedAt.toISOString(),
        })),
      }
    } catch (e) {
      this.deps.log.warn('incidents query failed; the status endpoint reads as no incident', { error: errorMessage(e) })
      return { incidents: [] }
    }
  }
}
