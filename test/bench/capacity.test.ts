// The capacity benches' own logic, without a browser or a service: CPU accounting from /proc-shaped data,
// the sorting of scan_app answers, the closed and open loops' counts against a stand-in client, the queue
// verdict and the machines arithmetic. The service and the fixtures they drive are the harness's, tested
// elsewhere; the benches themselves are run by hand (bench/README.md).
import { describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { groupSeconds, parseStat, type ProcStat, reapedChildrenSeconds, spent } from '../../bench/capacity-lib/cpu.ts'
import { classify, closedLoop, openLoop, queueBounded, tally } from '../../bench/capacity-lib/drive.ts'
import type { Account } from '../../bench/capacity-lib/layout.ts'
import { slowestCalls, type OpenRun } from '../../bench/capacity-lib/phases.ts'
import { machinesFor, slowestLine } from '../../bench/capacity-lib/report.ts'

const text = (body: unknown, isError = false) => ({ isError, content: [{ type: 'text', text: JSON.stringify(body) }] })

describe('CPU accounting', () => {
  test('a stat line whose command name holds spaces and parentheses', () => {
    const line = '4242 (Web Content (x)) S 17 4242 4242 0 -1 4194560 1 0 0 0 250 30 7 3 20 0 1 0 100 0 0'
    expect(parseStat(4242, line)).toEqual({ pid: 4242, ppid: 17, comm: 'Web Content (x)', own: 280, children: 10 })
  })

  test('groups: the client alone, the crawler apart from its Chromium, waited-for children, processes by name', () => {
    const p = (pid: number, ppid: number, comm: string, own: number, children = 0): [number, ProcStat] => [
      pid,
      { pid, ppid, comm, own, children },
    ]
    const all = new Map<number, ProcStat>([
      p(10, 1, 'bun', 100, 5), // the bench: its own 100 ticks only
      p(11, 10, 'bun', 200), // api
      p(12, 10, 'bun', 300, 40), // crawler; 40 ticks of a Chromium it waited for
      p(13, 12, 'chromium', 500, 60), // browser; 60 ticks of renderers the zygote reaped, say
      p(14, 13, 'chromium', 70),
      p(20, 1, 'postgres', 30, 9),
      p(21, 20, 'postgres', 11),
      p(30, 1, 'redis-server', 8),
    ])
    const g = groupSeconds(
      {
        roots: [
          { group: 'bench client', pid: 10, ownOnly: true },
          { group: 'api', pid: 11 },
          { group: 'crawler', pid: 12, childGroup: 'chromium' },
        ],
        comms: [
          { group: 'postgres', comm: 'postgres' },
          { group: 'redis', comm: /^redis-server/ },
        ],
      },
      all,
    )
    expect(g).toEqual({ 'bench client': 1, api: 2, crawler: 3, chromium: 6.7, postgres: 0.5, redis: 0.08 })
  })

  test('a tree counts its root and everything below it', () => {
    const all = new Map<number, ProcStat>([
      [5, { pid: 5, ppid: 1, comm: 'node', own: 100, children: 10 }],
      [6, { pid: 6, ppid: 5, comm: 'chrome', own: 200, children: 0 }],
      [7, { pid: 7, ppid: 6, comm: 'chrome', own: 50, children: 0 }],
    ])
    expect(groupSeconds({ trees: [{ group: 'lighthouse', pid: 5 }] }, all)).toEqual({ lighthouse: 3.6 })
  })

  test('a command this process ran and waited for counts in its reaped children', async () => {
    const before = reapedChildrenSeconds()
    // The child spins until it has used 300 ms of CPU by its own count: the work is fixed, not the time.
    const code = 'const t = process.cpuUsage(); while ((u => u.user + u.system)(process.cpuUsage(t)) < 300_000) {}'
    const child = Bun.spawn([process.execPath, '-e', code], { stdout: 'ignore', stderr: 'ignore' })
    expect(await child.exited).toBe(0)
    expect(reapedChildrenSeconds() - before).toBeGreaterThanOrEqual(0.25)
  })

  test('spent: differences, and the rest of the machine as "other"', () => {
    const s = spent({ at: 0, machine: 10, groups: { api: 1, crawler: 2 } }, { at: 2_000, machine: 16, groups: { api: 2, crawler: 4 } })
    expect(s).toEqual({ wallS: 2, machine: 6, groups: { api: 1, crawler: 2, other: 3 } })
  })
})

describe('scan_app answers', () => {
  test('each kind of answer is sorted into its outcome', () => {
    expect(classify(text({ score: 90, timings: { total: 5 } }), undefined)).toEqual({ outcome: 'completed', timings: { total: 5 } })
    expect(classify(text({ error: { code: 'rate_limited', message: 'x' } }, true), undefined).outcome).toBe('rate_limited')
    expect(classify(text({ error: { code: 'scanner_unavailable', scanId: 'scn_1' } }, true), undefined).outcome).toBe('queued')
    expect(classify(text({ error: { code: 'scanner_unavailable' } }, true), undefined).outcome).toBe('error')
    expect(classify(text({ error: { code: 'invalid_url' } }, true), undefined).outcome).toBe('error')
    expect(classify(text({ status: 'done' }), undefined).outcome).toBe('error')
    expect(classify(undefined, new Error('scan_app: no answer within 80000 ms')).outcome).toBe('timeout')
    expect(classify(undefined, new Error('Request timed out')).outcome).toBe('timeout')
    expect(classify(undefined, new Error('fetch failed')).outcome).toBe('error')
  })
})

describe('loops', () => {
  /** A stand-in client: every third call rate_limited, the others a report, each after a few ms. */
  function accounts(n: number): { accounts: Account[]; calls: string[] } {
    const calls: string[] = []
    const client = {
      async callTool(req: { arguments: { url: string } }) {
        const n = calls.push(req.arguments.url)
        await Bun.sleep(5)
        return n % 3 === 0 ? text({ error: { code: 'rate_limited' } }, true) : text({ score: 80, timings: {} })
      },
    } as unknown as Client
    return { accounts: Array.from({ length: n }, (_, i) => ({ name: `a${i}`, key: 'k', client })), calls }
  }

  test('closed loop: at most maxCalls, over the pages in turn', async () => {
    const { accounts: acc, calls } = accounts(2)
    const r = await closedLoop(acc, ['u1', 'u2'], { inFlight: 3, durationMs: 60_000, maxCalls: 9 })
    expect(r.calls).toHaveLength(9)
    expect(calls.filter((u) => u === 'u1')).toHaveLength(5)
    expect(tally(r.calls)).toEqual({ completed: 6, rate_limited: 3, queued: 0, timeout: 0, error: 0 })
  })

  test('open loop: one arrival per gap, every call answered, the queue sampled', async () => {
    const { accounts: acc } = accounts(3)
    let samples = 0
    const r = await openLoop(acc, ['u'], { perMinute: 600, durationMs: 1_000, maxOutstanding: 100, sampleMs: 100 }, async () => {
      samples++
      return { queued: 0, running: 1 }
    })
    expect(r.calls).toHaveLength(10)
    expect(r.notSent).toBe(0)
    expect(r.samples.length).toBe(samples)
    expect(r.samples.length).toBeGreaterThan(0)
  })

  test('the queue verdict: flat is bounded, growing is not', () => {
    const flat = Array.from({ length: 30 }, (_, i) => ({ atS: i, queued: i % 2, running: 2 }))
    const growing = Array.from({ length: 30 }, (_, i) => ({ atS: i, queued: i, running: 2 }))
    expect(queueBounded(flat, 30).bounded).toBe(true)
    expect(queueBounded(growing, 30).bounded).toBe(false)
  })
})

test("a run's slowest completed calls, and where their time went", () => {
  const call = (ms: number, outcome: 'completed' | 'timeout', timings?: Record<string, number>) => ({
    outcome,
    ms,
    sentAt: ms * 10,
    timings,
  })
  const calls = [
    call(500, 'completed', { pageOpen: 0, pageLoad: 60, axe: 100, browser: 400, total: 450 }),
    call(75_000, 'timeout'),
    { ...call(2_200, 'completed', { pageOpen: 1_400, pageLoad: 70, axe: 120, browser: 1_700, total: 1_800 }), scanId: 'scn_1' },
    call(900, 'completed', { pageOpen: 20, pageLoad: 40, total: 880 }),
    call(600, 'completed'),
  ]
  const slow = slowestCalls(calls)
  expect(slow.map((c) => c.ms)).toEqual([2_200, 900, 600]) // a timeout is not a completed call
  expect(slow[0]).toEqual({ ms: 2_200, sentS: 22, timings: calls[2]!.timings!, queuedMs: null, scanId: 'scn_1' })
  const line = slowestLine({ slowest: [{ ...slow[0]!, queuedMs: 150 }, slow[1]!, slow[2]!] } as OpenRun)
  expect(line.split(' | ')).toEqual([
    '2200 ms sent at 22.0 s: queued 150 ms, worker 1800 ms (pageOpen 1400, pageLoad 70, axe 120), the rest 400 ms',
    '900 ms sent at 9.0 s: queued ?, worker 880 ms (no phase over 50 ms), the rest 20 ms',
    '600 ms sent at 6.0 s: no timings', // an answer without them, and no record asked for
  ])
})

test('machines for 1,000 scans an hour, by rate and by CPU', () => {
  const m = machinesFor(60, 2, 2)
  expect(m.byRate).toBeCloseTo(1_000 / (0.8 * 3_600), 6)
  expect(m.byCpu).toBeCloseTo(2_000 / (3_600 * 2 * 0.8), 6)
  expect(m.lines).toHaveLength(2)
})
