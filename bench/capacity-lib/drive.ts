// The load of the capacity bench: scan_app calls through the official MCP SDK client, each one's outcome
// sorted (a report, rate_limited, queued = scanner_unavailable naming the scan, a timeout, another error),
// driven either closed-loop (N callers, each with one scan in flight) or open-loop (arrivals at a fixed
// rate, whatever is in flight). Every loop is bounded by a deadline and a count.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { payload } from '../../test/harness/client.ts'
import { withTimeout } from '../lib/stats.ts'
import { errorMessage } from '../../shared/errors.ts'
import type { Account } from './layout.ts'

export type Outcome = 'completed' | 'rate_limited' | 'queued' | 'timeout' | 'error'
export const OUTCOMES: Outcome[] = ['completed', 'rate_limited', 'queued', 'timeout', 'error']

export interface ScanCall {
  outcome: Outcome
  ms: number
  /** The worker's timings from the report (completed scans). */
  timings?: Record<string, number>
  /** An error's code or message (first 200 characters). */
  detail?: string
  /** ms since the phase started, when the call was sent. */
  sentAt: number
  /** The scan's id, from a completed call's report. */
  scanId?: string
}

/** How long the bench waits for one call: past the service's own wait (SCAN_TIMEOUT_MS, 45 s by default). */
export const CALL_TIMEOUT_MS = 75_000

/** Sorts a tool answer (or a thrown error) into an outcome. */
export function classify(result: unknown, thrown: unknown): Pick<ScanCall, 'outcome' | 'timings' | 'detail' | 'scanId'> {
  if (thrown !== undefined) {
    const msg = errorMessage(thrown)
    return { outcome: /timed out|no answer within|timeout/i.test(msg) ? 'timeout' : 'error', detail: msg.slice(0, 200) }
  }
  let body: any
  try {
    body = payload(result)
  } catch (e) {
    return { outcome: 'error', detail: errorMessage(e).slice(0, 200) }
  }
  if ((result as { isError?: boolean }).isError !== true) {
    const timings = (body?.timings ?? {}) as Record<string, number>
    if (typeof body?.score !== 'number') return { outcome: 'error', detail: 'an answer without a report' }
    return { outcome: 'completed', timings, ...(typeof body.id === 'string' ? { scanId: body.id } : {}) }
  }
  const code = String(body?.error?.code ?? body?.code ?? 'unknown')
  if (code === 'rate_limited') return { outcome: 'rate_limited', detail: code }
  if (code === 'scanner_unavailable' && typeof body?.error?.scanId === 'string') return { outcome: 'queued', detail: code }
  return { outcome: 'error', detail: `${code}: ${String(body?.error?.message ?? '').slice(0, 160)}` }
}

/** One scan_app call; `full`: the whole report (detail "full"), whose timings split the worker's time. */
export async function scanCall(client: Client, url: string, t0: number, full = false): Promise<ScanCall> {
  const sentAt = performance.now() - t0
  const start = performance.now()
  let result: unknown
  let thrown: unknown
  try {
    result = await withTimeout(
      client.callTool({ name: 'scan_app', arguments: { url, ...(full ? { detail: 'full' } : {}) } }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      }),
      CALL_TIMEOUT_MS + 5_000,
      'scan_app',
    )
  } catch (e) {
    thrown = e ?? new Error('unknown error')
  }
  return { ...classify(result, thrown), ms: performance.now() - start, sentAt }
}

/** Counts of each outcome. */
export function tally(calls: ScanCall[]): Record<Outcome, number> {
  const out = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>
  for (const c of calls) out[c.outcome]++
  return out
}

/**
 * Closed loop: `inFlight` callers (spread over the accounts), each sending its next scan as soon as its last
 * one answered, for `durationMs`; a call in flight at the end is waited for (bounded by CALL_TIMEOUT_MS).
 * `maxCalls` caps the calls whatever the duration.
 */
export async function closedLoop(
  accounts: Account[],
  urls: string[],
  opts: { inFlight: number; durationMs: number; maxCalls: number },
): Promise<{ calls: ScanCall[]; wallMs: number }> {
  const t0 = performance.now()
  const end = t0 + opts.durationMs
  const calls: ScanCall[] = []
  let sent = 0
  const caller = async (i: number) => {
    const account = accounts[i % accounts.length]!
    for (let k = 0; k < opts.maxCalls && performance.now() < end && sent < opts.maxCalls; k++) {
      const url = urls[sent++ % urls.length]!
      calls.push(await scanCall(account.client, url, t0))
    }
  }
  await Promise.all(Array.from({ length: opts.inFlight }, (_, i) => caller(i)))
  return { calls, wallMs: performance.now() - t0 }
}

export interface QueueSample {
  atS: number
  queued: number
  running: number
}

/**
 * Open loop: one arrival every 60,000 / perMinute ms for `durationMs`, from the accounts in turn, whatever
 * is in flight (at most `maxOutstanding` calls open: an arrival beyond that is counted as not sent). The
 * queue is sampled every `sampleMs` until every call has answered.
 */
export async function openLoop(
  accounts: Account[],
  urls: string[],
  opts: { perMinute: number; durationMs: number; maxOutstanding: number; sampleMs: number },
  queue: () => Promise<{ queued: number; running: number }>,
): Promise<{ calls: ScanCall[]; samples: QueueSample[]; notSent: number; wallMs: number; owners: Map<string, Client> }> {
  const t0 = performance.now()
  const gap = 60_000 / opts.perMinute
  const owners = new Map<string, Client>()
  const arrivals = Math.max(1, Math.floor(opts.durationMs / gap))
  const calls: ScanCall[] = []
  const samples: QueueSample[] = []
  const open = new Set<Promise<void>>()
  let notSent = 0
  let done = false
  const sampling = (async () => {
    for (let i = 0; i < 100_000 && !done; i++) {
      const q = await withTimeout(queue(), 5_000, 'queue depth').catch(() => null)
      if (q) samples.push({ atS: (performance.now() - t0) / 1000, ...q })
      await Bun.sleep(opts.sampleMs)
    }
  })()
  for (let i = 0; i < arrivals; i++) {
    const due = t0 + i * gap
    const wait = due - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    if (open.size >= opts.maxOutstanding) {
      notSent++
      continue
    }
    const account = accounts[i % accounts.length]!
    const p = scanCall(account.client, urls[i % urls.length]!, t0).then((c) => {
      calls.push(c)
      if (c.scanId) owners.set(c.scanId, account.client)
    })
    const tracked = p.finally(() => open.delete(tracked))
    open.add(tracked)
  }
  await withTimeout(Promise.all([...open]), CALL_TIMEOUT_MS + 10_000, 'the last calls').catch(() => {})
  done = true
  await sampling
  return { calls, samples, notSent, wallMs: performance.now() - t0, owners }
}

/**
 * A completed scan's own account of its time, asked for after the run (get_scan, detail "full"): the worker's
 * timings and how long the scan was queued before a worker took it. null when the answer has neither.
 */
export async function scanRecord(
  client: Client,
  scanId: string,
): Promise<{ timings: Record<string, number>; queuedMs: number | null } | null> {
  try {
    const result = await withTimeout(client.callTool({ name: 'get_scan', arguments: { scanId, detail: 'full' } }), 15_000, 'get_scan')
    const body = payload(result) as { createdAt?: string; startedAt?: string | null; report?: { timings?: Record<string, number> } }
    const queuedMs = body.createdAt && body.startedAt ? Date.parse(body.startedAt) - Date.parse(body.createdAt) : Number.NaN
    return { timings: body.report?.timings ?? {}, queuedMs: Number.isFinite(queuedMs) ? queuedMs : null }
  } catch {
    return null
  }
}

/**
 * Whether the queue stayed bounded: the mean of the last third of the samples taken while arrivals went on
 * is at most the first third's plus `slack` scans.
 */
export function queueBounded(samples: QueueSample[], arrivalsEndS: number, slack = 2): { first: number; last: number; bounded: boolean } {
  const during = samples.filter((s) => s.atS <= arrivalsEndS)
  const third = Math.max(1, Math.floor(during.length / 3))
  const mean = (xs: QueueSample[]) => (xs.length ? xs.reduce((a, s) => a + s.queued, 0) / xs.length : 0)
  const first = mean(during.slice(0, third))
  const last = mean(during.slice(-third))
  return { first, last, bounded: last <= first + slack }
}
