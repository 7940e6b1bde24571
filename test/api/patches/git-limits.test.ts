// A git host that never finishes: git is stopped by its low-speed limit or, at the latest, by the command's
// deadline, with every process it started (no git-remote-http is left holding the connection), and one
// account's slow host never holds another account's patch jobs (JobSlots).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { GitError, Workspace } from '../../../api/patches/git.ts'
import { JobSlots } from '../../../api/patches/slots.ts'

const POLICY = { allowPrivate: true, trustedHosts: [] }
/** Bytes the tarpit sends at most (one each TRICKLE_MS): bounded, and far longer than any limit below. */
const MAX_TRICKLE = 240
const TRICKLE_MS = 500

let tarpit: ReturnType<typeof Bun.serve>
let requests = 0

beforeAll(() => {
  tarpit = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      requests++
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          await Bun.sleep(TRICKLE_MS)
          if (sent++ >= MAX_TRICKLE) return c.close()
          c.enqueue(new TextEncoder().encode('0'))
        },
      })
      return new Response(body, { headers: { 'content-type': 'application/x-git-upload-pack-advertisement' } })
    },
  })
})
afterAll(() => tarpit.stop(true))

const repoUrl = () => `http://127.0.0.1:${tarpit.port}/acme/site.git`

/** Processes whose command line names the tarpit (git, git-remote-http), read from /proc. */
function processesNamingTarpit(): string[] {
  const mark = `127.0.0.1:${tarpit.port}`
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      if (cmd.includes(mark) && !cmd.includes('bun')) found.push(`${pid} ${cmd}`)
    } catch {}
  }
  return found
}

async function refusal(p: Promise<unknown>): Promise<GitError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(GitError)
  return e as GitError
}

describe('a git host that trickles bytes', () => {
  test('git gives up on its own when the host sends less than the low-speed limit', async () => {
    const e = await refusal(
      Workspace.probe({ url: repoUrl(), token: 'tok-12345678' }, POLICY, { commandMs: 120_000, lowSpeedBytes: 1_000, lowSpeedSeconds: 2 }),
    )
    expect(e.message).toContain('less than 1000 bytes a second for 2 s')
    expect(e.message).not.toContain('tok-12345678')
  }, 60_000)

  test('at the deadline the whole process group is killed, helpers included, and the call fails at once', async () => {
    const before = requests
    const e = await refusal(
      Workspace.probe({ url: repoUrl(), token: 'tok-12345678' }, POLICY, { commandMs: 3_000, lowSpeedBytes: 0, lowSpeedSeconds: 0 }),
    )
    expect(requests).toBeGreaterThan(before)
    expect(e.message).toContain('did not finish within 3 s')
    // SIGKILL is delivered at once; the processes are gone as soon as the kernel has torn them down.
    let left = processesNamingTarpit()
    for (let i = 0; i < 50 && left.length; i++) {
      await Bun.sleep(100)
      left = processesNamingTarpit()
    }
    expect(left).toEqual([])
  }, 60_000)
})

describe('JobSlots', () => {
  /** A job that runs until released, recording that it started. */
  function held(started: string[], name: string) {
    let release!: () => void
    const done = new Promise<void>((r) => {
      release = r
    })
    return { job: () => (started.push(name), done), release: () => release() }
  }

  test("one account's jobs wait for its own slot; another account's job runs at once", async () => {
    const slots = new JobSlots(4, 1)
    const started: string[] = []
    const a1 = held(started, 'a1')
    const a2 = held(started, 'a2')
    const b1 = held(started, 'b1')
    const runs = [slots.run('a', a1.job), slots.run('a', a2.job), slots.run('b', b1.job)]
    await Bun.sleep(0)
    expect(started).toEqual(['a1', 'b1'])
    expect(slots.counts).toEqual({ running: 2, waiting: 1 })
    a1.release()
    await runs[0]
    await Bun.sleep(0)
    expect(started).toEqual(['a1', 'b1', 'a2'])
    a2.release()
    b1.release()
    await Promise.all(runs)
    expect(slots.counts).toEqual({ running: 0, waiting: 0 })
  })

  test('the process-wide limit holds, and a freed slot goes to the oldest job that may run', async () => {
    const slots = new JobSlots(2, 1)
    const started: string[] = []
    const jobs = ['a', 'b', 'a', 'c'].map((k, i) => ({ k, h: held(started, `${k}${i}`) }))
    const runs = jobs.map(({ k, h }) => slots.run(k, h.job))
    await Bun.sleep(0)
    expect(started).toEqual(['a0', 'b1'])
    // b finishes: a's second job may not run yet (a still holds its slot), so c goes first.
    jobs[1]!.h.release()
    await runs[1]
    await Bun.sleep(0)
    expect(started).toEqual(['a0', 'b1', 'c3'])
    jobs[0]!.h.release()
    await runs[0]
    await Bun.sleep(0)
    expect(started).toEqual(['a0', 'b1', 'c3', 'a2'])
    jobs[2]!.h.release()
    jobs[3]!.h.release()
    await Promise.all(runs)
  })

  test('a job that throws frees its slot', async () => {
    const slots = new JobSlots(1, 1)
    await expect(slots.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await slots.run('a', async () => 'next')).toBe('next')
  })
})
