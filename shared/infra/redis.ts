// Redis implementation: jobs on streams read through a consumer group (XADD, XREADGROUP, XACK),
// pending recovery with XAUTOCLAIM, heartbeats with XCLAIM JUSTID; pub/sub; keys with TTL.
import { createClient } from '@redis/client'
import { sleep, withDeadline } from '../lib/async.ts'
import type { Logger } from '../lib/log.ts'
import type { ConsumeOptions, Delivery, EventLog, Infra, Job, JobQueue, KeyValue, PubSub, QueueTuning } from './types.ts'
import { errorMessage } from '../errors.ts'

const makeClient = (url: string) =>
  createClient({
    url,
    // Fail fast while disconnected instead of queueing commands forever.
    disableOfflineQueue: true,
    socket: { connectTimeout: 5_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000) },
  })
type Client = ReturnType<typeof makeClient>

const GROUP = 'workers'

/**
 * Pub/sub commands and a graceful close do not fail fast while disconnected as other commands do: node-redis
 * queues them until Redis is back. These bounds keep a request or a shutdown from waiting on that.
 */
const SUBSCRIBE_TIMEOUT_MS = 5_000
const CLOSE_TIMEOUT_MS = 2_000

/** Closes a client: gracefully when connected (bounded), at once when it is not. Never throws. */
async function closeClient(client: Client): Promise<void> {
  if (client.isReady) await withDeadline(client.close(), CLOSE_TIMEOUT_MS, 'redis close').catch(() => {})
  if (client.isOpen) client.destroy()
}

/** Connects a client unless signal aborts first; then the half-open client is destroyed. */
async function connectUnlessAborted(client: Client, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false
  const aborted = new Promise<false>((resolve) => signal.addEventListener('abort', () => resolve(false), { once: true }))
  const connected = await Promise.race([client.connect().then(() => true), aborted])
  if (!connected && client.isOpen) client.destroy()
  return connected
}

async function connect(url: string, log?: Logger): Promise<Client> {
  const client = makeClient(url)
  client.on('error', (e: Error) => log?.warn('redis error', { error: e.message }))
  await client.connect()
  return client
}

type RawEntry = [id: string, fields: string[]]

function fieldsOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!
  return out
}

class RedisQueue implements JobQueue {
  private readers = new Set<Client>()

  constructor(
    private client: Client,
    private tuning: QueueTuning,
    private prefix: string,
    private log?: Logger,
  ) {}

  streamKey(kind: string) {
    return `${this.prefix}jobs:${kind}`
  }

  async enqueue(job: Job, prior = 0): Promise<void> {
    await this.client.xAdd(this.streamKey(job.kind), '*', { kind: job.kind, ref: job.ref, prior: String(prior) })
  }

  async heldRefs(kind: string): Promise<Set<string>> {
    // Acknowledged entries are deleted, so the stream holds exactly the waiting and pending jobs.
    const entries = (await this.client.sendCommand(['XRANGE', this.streamKey(kind), '-', '+', 'COUNT', '100000'])) as RawEntry[]
    return new Set(entries.map((e) => fieldsOf(e[1]).ref ?? ''))
  }

  async ensureGroup(kind: string): Promise<void> {
    try {
      await this.client.sendCommand(['XGROUP', 'CREATE', this.streamKey(kind), GROUP, '0', 'MKSTREAM'])
    } catch (e) {
      if (!String(errorMessage(e)).includes('BUSYGROUP')) throw e
    }
  }

  /** Next job for this consumer: first one a dead consumer left pending too long, else a new one. */
  private async next(
    reader: Client,
    key: string,
    consumer: string,
  ): Promise<{ id: string; fields: Record<string, string>; count: number } | null> {
    const claimed = (await reader.sendCommand([
      'XAUTOCLAIM',
      key,
      GROUP,
      consumer,
      String(this.tuning.claimIdleMs),
      '0-0',
      'COUNT',
      '1',
    ])) as [string, (RawEntry | null)[], string[]?]
    const entry = claimed[1].find((e): e is RawEntry => Array.isArray(e))
    if (entry) {
      const pending = (await reader.sendCommand(['XPENDING', key, GROUP, entry[0], entry[0], '1'])) as [string, string, number, number][]
      return { id: entry[0], fields: fieldsOf(entry[1]), count: Number(pending[0]?.[3] ?? 1) }
    }
    const read = (await reader.sendCommand(['XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', '1', 'BLOCK', '1000', 'STREAMS', key, '>'])) as
      | [string, RawEntry[]][]
      | Record<string, RawEntry[]>
      | null
    // RESP2 answers [[stream, entries]], RESP3 a map {stream: entries}.
    const entries = !read ? undefined : Array.isArray(read) ? read[0]?.[1] : Object.values(read)[0]
    const fresh = entries?.[0]
    return fresh ? { id: fresh[0], fields: fieldsOf(fresh[1]), count: 1 } : null
  }

  async consume(kind: string, handler: (d: Delivery) => Promise<void>, opts: ConsumeOptions): Promise<void> {
    const key = this.streamKey(kind)
    await this.ensureGroup(kind)
    const slot = async () => {
      const reader = this.client.duplicate()
      reader.on('error', () => {})
      this.readers.add(reader)
      try {
        if (!(await connectUnlessAborted(reader, opts.signal))) return
        while (!opts.signal.aborted) {
          let msg: Awaited<ReturnType<RedisQueue['next']>>
          try {
            msg = await this.next(reader, key, opts.consumer)
          } catch (e) {
            this.log?.warn('queue read failed; retrying', { kind, error: errorMessage(e) })
            // Redis restarted empty or was flushed: the group is gone with the stream. Recreate it, or
            // this consumer would never read again; recovery re-dispatches what was lost from Postgres.
            if (String(errorMessage(e)).includes('NOGROUP')) await this.ensureGroup(kind).catch(() => {})
            await sleep(1_000, opts.signal)
            continue
          }
          if (!msg) continue
          await this.deliver(key, msg, handler, opts.consumer)
        }
      } finally {
        this.readers.delete(reader)
        await closeClient(reader)
      }
    }
    await Promise.all(Array.from({ length: opts.concurrency }, slot))
  }

  private async deliver(
    key: string,
    msg: { id: string; fields: Record<string, string>; count: number },
    handler: (d: Delivery) => Promise<void>,
    consumer: string,
  ) {
    const job: Job = { kind: msg.fields.kind ?? '', ref: msg.fields.ref ?? '' }
    const prior = Number(msg.fields.prior ?? 0) || 0
    // Heartbeat: re-claiming our own entry resets its idle time, so no one takes it over while we work.
    const beat = setInterval(() => {
      this.client
        .sendCommand(['XCLAIM', key, GROUP, consumer, '0', msg.id, 'JUSTID'])
        .catch((e: Error) => this.log?.warn('heartbeat failed', { error: e.message }))
    }, this.tuning.heartbeatMs)
    const finish = async () => {
      await this.client.sendCommand(['XACK', key, GROUP, msg.id])
      await this.client.sendCommand(['XDEL', key, msg.id])
    }
    try {
      await handler({
        job,
        deliveryCount: prior + msg.count,
        ack: finish,
        // Handing back keeps the count of real attempts: the new entry remembers them.
        release: async (o) => {
          await this.enqueue(job, prior + msg.count - (o?.countAttempt ? 0 : 1))
          await finish()
        },
      })
    } catch (e) {
      this.log?.warn('job handler failed; left pending for redelivery', { kind: job.kind, ref: job.ref, error: errorMessage(e) })
    } finally {
      clearInterval(beat)
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.readers].map(closeClient))
  }
}

class RedisPubSub implements PubSub {
  private subscriber: Promise<Client> | null = null

  constructor(
    private client: Client,
    private prefix: string,
    private log?: Logger,
  ) {}

  private sub(): Promise<Client> {
    this.subscriber ??= (async () => {
      const s = this.client.duplicate()
      s.on('error', (e: Error) => this.log?.warn('redis subscriber error', { error: e.message }))
      await withDeadline(s.connect(), SUBSCRIBE_TIMEOUT_MS, 'redis subscriber connect').catch((e) => {
        this.subscriber = null
        s.destroy()
        throw e
      })
      return s
    })()
    return this.subscriber
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(this.prefix + channel, message)
  }

  async subscribe(channel: string, listener: (m: string) => void) {
    const s = await this.sub()
    const l = (m: string) => listener(m)
    await withDeadline(s.subscribe(this.prefix + channel, l), SUBSCRIBE_TIMEOUT_MS, 'redis subscribe').catch(async (e) => {
      // Not subscribed in time: take the listener back so a late reconnect does not deliver to it.
      await withDeadline(s.unsubscribe(this.prefix + channel, l), SUBSCRIBE_TIMEOUT_MS, 'redis unsubscribe').catch(() => {})
      throw e
    })
    return async () => {
      // The listener is removed at once; the UNSUBSCRIBE itself may wait for a reconnect, which no caller needs.
      await withDeadline(s.unsubscribe(this.prefix + channel, l), SUBSCRIBE_TIMEOUT_MS, 'redis unsubscribe').catch(() => {})
    }
  }

  async close(): Promise<void> {
    const s = await this.subscriber?.catch(() => null)
    if (s) await closeClient(s)
  }
}

class RedisKeyValue implements KeyValue {
  constructor(
    private client: Client,
    private prefix: string,
  ) {}

  async get(key: string) {
    return (await this.client.get(this.prefix + key)) as string | null
  }

  async set(key: string, value: string, ttlSeconds: number) {
    await this.client.set(this.prefix + key, value, { EX: ttlSeconds })
  }

  async touch(key: string, ttlSeconds: number) {
    return Boolean(await this.client.expire(this.prefix + key, ttlSeconds))
  }

  async del(key: string) {
    return (await this.client.del(this.prefix + key)) > 0
  }

  async incr(key: string, ttlSeconds: number, by = 1) {
    const k = this.prefix + key
    const [count] = await this.client.multi().incrBy(k, by).expire(k, ttlSeconds, 'NX').exec()
    return Number(count)
  }

  async claim(key: string, value: string, ttlSeconds: number) {
    return (await this.client.set(this.prefix + key, value, { EX: ttlSeconds, condition: 'NX' })) === 'OK'
  }
}

/** How often a reader that found nothing asks again, while it waits. */
const EVENT_POLL_MS = 100

class RedisEventLog implements EventLog {
  constructor(
    private client: Client,
    private prefix: string,
  ) {}

  async append(name: string, data: string, ttlSeconds: number) {
    const key = this.prefix + name
    const [id] = await this.client.multi().xAdd(key, '*', { d: data }).expire(key, ttlSeconds).exec()
    return String(id)
  }

  async read(name: string, afterId: string, opts: { waitMs: number; max: number }) {
    const key = this.prefix + name
    const deadline = Date.now() + opts.waitMs
    for (;;) {
      const raw = (await this.client.xRange(key, afterId ? `(${afterId}` : '-', '+', { COUNT: opts.max })) ?? []
      if (raw.length || Date.now() >= deadline) return raw.map((e) => ({ id: e.id, data: String(e.message.d ?? '') }))
      await sleep(Math.min(EVENT_POLL_MS, Math.max(1, deadline - Date.now())))
    }
  }
}

export async function createRedisInfra(url: string, tuning: QueueTuning, prefix: string, log?: Logger): Promise<Infra> {
  const client = await connect(url, log)
  const queue = new RedisQueue(client, tuning, prefix, log)
  const pubsub = new RedisPubSub(client, prefix, log)
  return {
    kind: 'redis',
    queue,
    pubsub,
    kv: new RedisKeyValue(client, prefix),
    events: new RedisEventLog(client, prefix),
    async close() {
      await queue.close()
      await pubsub.close()
      await closeClient(client)
    },
  }
}
