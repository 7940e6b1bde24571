// The browser context a crawl's lanes share: opened once for lanes that ask together, replaced after a
// recycle or a break, closed by the last lane that lets go, and a context that will not close recycles the
// browser. No browser: a counting stand-in for the pool and its contexts.
import { describe, expect, test } from 'bun:test'
import type { BrowserContext } from 'playwright-core'
import type { BrowserPool } from '../../../crawler/browser.ts'
import { LaneContexts } from '../../../crawler/audit/lane-context.ts'
import { createLogger } from '../../../shared/lib/log.ts'

function fakes(o: { closeHangs?: boolean } = {}) {
  const pool = {
    generation: 0,
    recycles: 0,
    recycle() {
      this.recycles++
      this.generation++
    },
  }
  const opened: Array<{ id: number; closed: boolean }> = []
  const open = async () => {
    const c = { id: opened.length, closed: false }
    opened.push(c)
    await Bun.sleep(1)
    return {
      id: c.id,
      close: () => {
        c.closed = true
        return o.closeHangs ? new Promise<void>(() => {}) : Promise.resolve()
      },
    } as unknown as BrowserContext
  }
  const contexts = new LaneContexts(pool as unknown as BrowserPool, open, 50, createLogger('error'))
  return { pool, opened, contexts }
}

describe('the lanes’ shared context', () => {
  test('lanes that ask at once share one context; it closes when the last lets go', async () => {
    const { opened, contexts } = fakes()
    const holds = await Promise.all([contexts.acquire(), contexts.acquire(), contexts.acquire(), contexts.acquire()])
    expect(opened.length).toBe(1)
    expect(new Set(holds.map((h) => h.context)).size).toBe(1)
    for (const h of holds.slice(0, 3)) await contexts.release(h)
    expect(opened[0]!.closed).toBe(false)
    await contexts.release(holds[3]!)
    expect(opened[0]!.closed).toBe(true)
    // The next lane to ask gets a new one.
    const again = await contexts.acquire()
    expect(opened.length).toBe(2)
    await contexts.release(again)
  })

  test('after a recycle the next hold is on a new context; the old one closes when its lanes let go', async () => {
    const { pool, opened, contexts } = fakes()
    const a = await contexts.acquire()
    const b = await contexts.acquire()
    pool.recycle()
    expect(contexts.usable(a)).toBe(false)
    await contexts.release(a)
    const a2 = await contexts.acquire()
    expect(opened.length).toBe(2)
    expect(a2.context).not.toBe(b.context)
    expect(opened[0]!.closed).toBe(false)
    await contexts.release(b)
    expect(opened[0]!.closed).toBe(true)
    await contexts.release(a2)
    expect(opened[1]!.closed).toBe(true)
  })

  test('a context one lane found broken is not handed out again, and the others move on', async () => {
    const { opened, contexts } = fakes()
    const a = await contexts.acquire()
    const b = await contexts.acquire()
    await contexts.release(a, true)
    expect(contexts.usable(b)).toBe(false)
    const a2 = await contexts.acquire()
    expect(opened.length).toBe(2)
    await contexts.release(b)
    await contexts.release(a2)
    expect(opened.every((c) => c.closed)).toBe(true)
  })

  test('a context that will not close recycles the browser', async () => {
    const { pool, contexts } = fakes({ closeHangs: true })
    await contexts.release(await contexts.acquire())
    expect(pool.recycles).toBe(1)
  })

  test('a context that fails to open is not kept: the next lane tries again', async () => {
    const pool = { generation: 0, recycle() {} }
    let calls = 0
    const contexts = new LaneContexts(
      pool as unknown as BrowserPool,
      async () => {
        if (++calls === 1) throw new Error('browser gone')
        return { close: async () => {} } as unknown as BrowserContext
      },
      50,
      createLogger('error'),
    )
    await expect(contexts.acquire()).rejects.toThrow('browser gone')
    const h = await contexts.acquire()
    expect(calls).toBe(2)
    await contexts.release(h)
  })
})
