// bench/frame-cost.ts end to end, with few frames: each step prints the CPU a frame took by kind of process,
// and it lands on the processes that do the work (the crawler's browser encodes a still and its GPU process
// copies the picture; the viewer's renderer decodes it). Amounts are this machine's; only their presence and
// order are checked: a full-size still costs more than the replay's small one.
import { expect, test } from 'bun:test'
import { join } from 'node:path'

test('the cost of a frame on each side of the live view, by kind of process', async () => {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, '../../bench/frame-cost.ts'), '--frames=5', '--rounds=1'], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill(), 150_000)
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  clearTimeout(timer)
  expect(await proc.exited, err).toBe(0)
  const row = (step: string) => {
    const line = out.split('\n').find((l) => l.startsWith(step))
    expect(line, out).toBeDefined()
    const [ms, cores] = (line as string).slice(step.length).trim().split(/\s+/).map(Number)
    return { line: line as string, ms: ms as number, cores: cores as number }
  }
  const live = row('live still 1280x800 q60')
  const replay = row('replay still 480x300 q50')
  const viewer = row("viewer's page shows a frame")
  row('its screencast, a frame')
  expect(live.line).toMatch(/browser \d/)
  expect(live.line).toMatch(/gpu-process \d/)
  expect(viewer.line).toMatch(/renderer \d/)
  expect(live.ms).toBeGreaterThan(replay.ms)
  expect(viewer.ms).toBeGreaterThan(0)
  expect(live.cores).toBeCloseTo(live.ms / 100, 1)
  // The viewer is shown pictures it has not decoded before (a decoded data: URL is cached).
  const distinct = /different pictures: (\d+) of (\d+)/.exec(out)
  expect(distinct, out).not.toBeNull()
  expect(Number(distinct![1])).toBeGreaterThan(Number(distinct![2]) / 2)
}, 180_000)
