// The narrow interfaces between api and crawler: job dispatch, pub/sub and a small key-value store.
// Two implementations each: Redis (production) and in-process (embedded default). Payloads carry ids
// only; the rows they point at live in Postgres.

export interface Job {
  /** The job kind decides the stream, e.g. 'scan'. */
  kind: string
  /** The row the job is about (a scan id, an audit id). */
  ref: string
}

export interface Delivery {
  job: Job
  /** 1 on the first delivery; more when a previous holder died or gave the job back. */
  deliveryCount: number
  /** Marks the job done: it is never delivered again. */
  ack(): Promise<void>
  /**
   * Hands the job back now: another consumer may take it at once. countAttempt false (graceful
   * shutdown) does not count this delivery towards the job's limit; true (a failed try) does.
   */
  release(opts?: { countAttempt?: boolean }): Promise<void>
}

export interface ConsumeOptions {
  /** Unique per worker process. */
  consumer: string
  concurrency: number
  signal: AbortSignal
}

export interface JobQueue {
  enqueue(job: Job): Promise<void>
  /**
   * Calls handler for each delivered job until signal aborts; resolves after in-flight handlers end.
   * A handler that throws leaves its job pending, to be delivered again after the claim idle time.
   */
  consume(kind: string, handler: (d: Delivery) => Promise<void>, opts: ConsumeOptions): Promise<void>
  /** Refs of the jobs the queue still holds, waiting or in flight: what recovery must not dispatch again. */
  heldRefs(kind: string): Promise<Set<string>>
  close(): Promise<void>
}

export interface PubSub {
  publish(channel: string, message: string): Promise<void>
  /** Returns the unsubscribe function. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

export interface KeyValue {
  get(key: string): Promise<string | null>
  set(key: string, value: string, ttlSeconds: number): Promise<void>
  /** Resets the time to live of an existing key; false when the key is gone. */
  touch(key: string, ttlSeconds: number): Promise<boolean>
  del(key: string): Promise<boolean>
  /**
   * Adds `by` (default 1) to a counter and returns its new value, atomically: concurrent callers on any
   * replica each see their own addition. The counter's time to live is set when it is created and not
   * extended after.
   */
  incr(key: string, ttlSeconds: number, by?: number): Promise<number>
  /** Sets the key only when it does not exist (atomically); false when it already did. */
  claim(key: string, value: string, ttlSeconds: number): Promise<boolean>
}

/** One appended entry of an event log. Ids increase within a log; compare them with the log's own order. */
export interface LogEntry {
  id: string
  data: string
}

/**
 * Short-lived append-only logs (Redis streams in production): what an SSE stream sent, kept so that a client
 * that lost the connection can read the rest from any replica.
 */
export interface EventLog {
  /** Appends to the log `name` and returns the entry's id; the log expires ttlSeconds after its last append. */
  append(name: string, data: string, ttlSeconds: number): Promise<string>
  /**
   * The entries after `afterId` ('' for all), at most `max`. When there are none yet, waits up to waitMs for
   * one (by polling: a reader never holds a connection), then returns what there is, possibly nothing.
   */
  read(name: string, afterId: string, opts: { waitMs: number; max: number }): Promise<LogEntry[]>
}

export interface Infra {
  kind: 'redis' | 'memory'
  queue: JobQueue
  pubsub: PubSub
  kv: KeyValue
  events: EventLog
  close(): Promise<void>
}

export interface QueueTuning {
  /** A pending job idle this long is taken over from a consumer that stopped heartbeating. */
  claimIdleMs: number
  /** How often a consumer heartbeats the jobs it holds. */
  heartbeatMs: number
}
