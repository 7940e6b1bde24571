// In-process queue, pub/sub and key-value store for the embedded default (one process, no Redis).
// Same contract as the Redis implementation: a job whose handler throws is delivered again later.
import { sleep } from '../lib/async.ts'
import type { ConsumeOptions, Delivery, EventLog, Infra, Job, JobQueue, KeyValue, LogEntry, PubSub, QueueTuning } from './types.ts'

interface Entry {
  job: Job
  deliveries: number
}

class MemoryQueue implements JobQueue {
  private ready = new Map<string, Entry[]>()
  private wakers = new Map<string, Set<() => void>>()
  /** Every entry not yet acknowledged: waiting, in flight, or parked for redelivery. */
  private held = new Set<Entry>()

  constructor(private tuning: QueueTuning) {}

  async enqueue(job: Job): Promise<void> {
    const entry = { job, deliveries: 0 }
    this.held.add(entry)
    this.push(job.kind, entry)
  }

  async heldRefs(kind: string): Promise<Set<string>> {
    return new Set([...this.held].filter((e) => e.job.kind === kind).map((e) => e.job.ref))
  }

  private push(kind: string, e: Entry) {
    const list = this.ready.get(kind) ?? []
    list.push(e)
    this.ready.set(kind, list)
    for (const wake of this.wakers.get(kind) ?? []) wake()
  }

  private wait(kind: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.wakers.get(kind) ?? new Set()
      this.wakers.set(kind, set)
      const done = () => {
        set.delete(done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      set.add(done)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  async consume(kind: string, handler: (d: Delivery) => Promise<void>, opts: ConsumeOptions): Promise<void> {
    const slot = async () => {
      while (!opts.signal.aborted) {
        const entry = this.ready.get(kind)?.shift()
        if (!entry) {
          await this.wait(kind, opts.signal)
          continue
        }
        entry.deliveries++
        let settled = false
        const delivery: Delivery = {
          job: entry.job,
          deliveryCount: entry.deliveries,
          ack: async () => {
            settled = true
            this.held.delete(entry)
          },
          release: async (o) => {
            settled = true
            if (!o?.countAttempt) entry.deliveries--
            this.push(kind, entry)
          },
        }
        try {
          await handler(delivery)
        } catch {
          // Left pending: like a dead consumer's job, it comes back after the claim idle time.
        }
        if (!settled) setTimeout(() => this.push(kind, entry), this.tuning.claimIdleMs).unref?.()
      }
    }
    await Promise.all(Array.from({ length: opts.concurrency }, slot))
  }

  async close(): Promise<void> {
    for (const set of this.wakers.values()) for (const wake of set) wake()
  }
}

class MemoryPubSub implements PubSub {
  private channels = new Map<string, Set<(m: string) => void>>()

  async publish(channel: string, message: string): Promise<void> {
    // Delivered asynchronously, as over a network, so publishers never run subscriber code inline.
    for (const l of this.channels.get(channel) ?? []) queueMicrotask(() => l(message))
  }

  async subscribe(channel: string, listener: (m: string) => void) {
    const set = this.channels.get(channel) ?? new Set()
    set.add(listener)
    this.channels.set(channel, set)
    return async () => {
      set.delete(listener)
      if (set.size === 0) this.channels.delete(channel)
    }
  }

  async close(): Promise<void> {
    this.channels.clear()
  }
}

/** Below this many keys expired ones are left to be dropped when read. */
const SWEEP_FLOOR = 100_000

class MemoryKeyValue implements KeyValue {
  private data = new Map<string, { value: string; expires: number }>()
  /**
   * The size at which the next write sweeps expired keys: twice what was left after the last sweep, so a
   * sweep over n keys comes at most once per n writes (amortised constant time, even when every key is live).
   */
  private sweepAt = SWEEP_FLOOR

  private live(key: string) {
    const e = this.data.get(key)
    if (e && e.expires <= Date.now()) {
      this.data.delete(key)
      return undefined
    }
    return e
  }

  async get(key: string) {
    return this.live(key)?.value ?? null
  }

  async set(key: string, value: string, ttlSeconds: number) {
    this.put(key, value, ttlSeconds)
  }

  private put(key: string, value: string, ttlSeconds: number) {
    if (this.data.size >= this.sweepAt) {
      this.sweep()
      this.sweepAt = Math.max(SWEEP_FLOOR, this.data.size * 2)
    }
    this.data.set(key, { value, expires: Date.now() + ttlSeconds * 1000 })
  }

  async incr(key: string, ttlSeconds: number, by = 1) {
    const e = this.live(key)
    if (!e) {
      this.put(key, String(by), ttlSeconds)
      return by
    }
    const n = Number(e.value) + by
    e.value = String(n)
    return n
  }

  async claim(key: string, value: string, ttlSeconds: number) {
    if (this.live(key)) return false
    this.put(key, value, ttlSeconds)
    return true
  }

  async touch(key: string, ttlSeconds: number) {
    const e = this.live(key)
    if (!e) return false
    e.expires = Date.now() + ttlSeconds * 1000
    return true
  }

  async del(key: string) {
    return this.data.delete(key)
  }

  private sweep() {
    const now = Date.now()
    for (const [k, e] of this.data) if (e.expires <= now) this.data.delete(k)
  }
}

const EVENT_POLL_MS = 50

class MemoryEventLog implements EventLog {
  private logs = new Map<string, { entries: LogEntry[]; next: number; expires: number }>()

  async append(name: string, data: string, ttlSeconds: number) {
    this.dropExpired()
    const log = this.logs.get(name) ?? { entries: [], next: 1, expires: 0 }
    this.logs.set(name, log)
    const id = String(log.next++)
    log.entries.push({ id, data })
    log.expires = Date.now() + ttlSeconds * 1000
    return id
  }

  async read(name: string, afterId: string, opts: { waitMs: number; max: number }) {
    const deadline = Date.now() + opts.waitMs
    const after = Number(afterId || 0)
    for (;;) {
      const log = this.logs.get(name)
      const found = log && log.expires > Date.now() ? log.entries.filter((e) => Number(e.id) > after).slice(0, opts.max) : []
      if (found.length || Date.now() >= deadline) return found
      await sleep(Math.min(EVENT_POLL_MS, Math.max(1, deadline - Date.now())))
    }
  }

  /** Logs are few and short-lived: dropping the expired ones at each append keeps the map small. */
  private dropExpired() {
    const now = Date.now()
    for (const [name, log] of this.logs) if (log.expires <= now) this.logs.delete(name)
  }
}

export function createMemoryInfra(tuning: QueueTuning): Infra {
  const queue = new MemoryQueue(tuning)
  const pubsub = new MemoryPubSub()
  return {
    kind: 'memory',
    queue,
    pubsub,
    kv: new MemoryKeyValue(),
    events: new MemoryEventLog(),
    async close() {
      await queue.close()
      await pubsub.close()
    },
  }
}
