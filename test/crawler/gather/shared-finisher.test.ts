// The worker's one axe finisher (crawler/gather/warm-page.ts SharedFinisher), against a stand-in browser pool:
// one page for every scan, made again when it closed or crashed or the browser was recycled, its context
// closed when it is let go and when the worker closes. The real page and axe's results in it are tested in
// axe.test.ts.
import { describe, expect, test } from 'bun:test'
import type { BrowserPool } from '../../../crawler/browser.ts'
import { SharedFinisher } from '../../../crawler/gather/warm-page.ts'

type Listener = () => void

function fakePool() {
  const contexts: Array<{ closed: boolean; options: unknown }> = []
  const pages: Array<{ emit(e: string): void; evaluated: number }> = []
  const pool = {
    generation: 0,
    async newContext(options: unknown) {
      const ctx = { closed: false, options }
      contexts.push(ctx)
      const context = {
        async newPage() {
          const listeners = new Map<string, Listener>()
          const page = {
            evaluated: 0,
            // axe's source goes through a protocol session of the page (evaluateAxe), its configuration through evaluate.
            context: () => context,
            async evaluate() {
              page.evaluated++
            },
            once(e: string, l: Listener) {
              listeners.set(e, l)
            },
            emit(e: string) {
              listeners.get(e)?.()
            },
            isClosed: () => ctx.closed,
          }
          pages.push(page)
          return page
        },
        async newCDPSession(page: { evaluated: number }) {
          return {
            async send(method: string) {
              if (method === 'Runtime.evaluate') page.evaluated++
              return {}
            },
            async detach() {},
          }
        },
        async close() {
          ctx.closed = true
        },
      }
      return context
    },
  }
  return { pool: pool as unknown as BrowserPool & { generation: number }, contexts, pages }
}

describe('the shared finisher', () => {
  test('one page, with axe and its configuration evaluated once, for every scan', async () => {
    const { pool, contexts, pages } = fakePool()
    const f = new SharedFinisher(pool)
    const a = await f.get()
    const b = await f.get()
    expect(a).not.toBeNull()
    expect(b).toBe(a)
    expect(contexts).toHaveLength(1)
    expect(pages[0]!.evaluated).toBe(2)
    // A context without a proxy of its own: the pool's dead address, it reaches nothing.
    expect(contexts[0]!.options).toEqual({ serviceWorkers: 'block' })
    await f.close()
    expect(contexts[0]!.closed).toBe(true)
  })

  test('made again after it crashed or closed, or after a recycle; the old context is closed', async () => {
    const { pool, contexts, pages } = fakePool()
    const f = new SharedFinisher(pool)
    const first = await f.get()
    pages[0]!.emit('crash')
    const second = await f.get()
    expect(second).not.toBe(first)
    expect(contexts[0]!.closed).toBe(true)
    pages[1]!.emit('close')
    const third = await f.get()
    expect(third).not.toBe(second)
    pool.generation++
    const fourth = await f.get()
    expect(fourth).not.toBe(third)
    expect(contexts.map((c) => c.closed)).toEqual([true, true, true, false])
    await f.close()
    expect(contexts.every((c) => c.closed)).toBe(true)
    expect(await f.get()).toBeNull()
    expect(contexts).toHaveLength(4)
  })

  test('null, never a rejection, when its context cannot be opened; tried again at the next scan', async () => {
    const { pool } = fakePool()
    let fail = true
    const open = pool.newContext.bind(pool)
    pool.newContext = ((o: never) => (fail ? Promise.reject(new Error('browser gone')) : open(o))) as never
    const f = new SharedFinisher(pool)
    expect(await f.get()).toBeNull()
    fail = false
    expect(await f.get()).not.toBeNull()
    await f.close()
  })
})
