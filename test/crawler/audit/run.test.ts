// The crawl's run state: its wall-time cap holds by the clock, however late the event loop runs its timer.
import { describe, expect, test } from 'bun:test'
import { CrawlRun } from '../../../crawler/audit/run.ts'

/** Keeps the event loop busy for ms: no timer can fire meanwhile, as on a machine with every core taken. */
function block(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {}
}

describe('CrawlRun', () => {
  test('past the cap it is halted by maxDuration even before its timer has had a chance to fire', () => {
    const run = new CrawlRun(new AbortController().signal, 200)
    expect(run.halted).toBe(false)
    block(300)
    expect(run.halted).toBe(true)
    expect(run.signal.aborted).toBe(true)
    expect(run.summary(0, []).stoppedBy).toBe('maxDuration')
    run.end()
  })

  test("the caller's abort is the reason when it comes first, and the cap does not replace it", () => {
    const caller = new AbortController()
    const run = new CrawlRun(caller.signal, 200)
    caller.abort()
    block(300)
    expect(run.halted).toBe(true)
    expect(run.summary(0, []).stoppedBy).toBe('aborted')
    run.end()
  })

  test('within the cap it runs on', () => {
    const run = new CrawlRun(new AbortController().signal, 60_000)
    block(5)
    expect(run.halted).toBe(false)
    expect(run.summary(0, []).stoppedBy).toBe('done')
    run.end()
  })
})
