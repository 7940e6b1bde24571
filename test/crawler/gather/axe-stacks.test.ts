// axe evaluated without recording its load-time error's stack (crawler/gather/axe.ts withoutErrorStacks): the
// work V8 skips, counted in a Chromium trace, and the page's own Error.stackTraceLimit left as it was. Real
// Chromium, pages made in place.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { BrowserPool, chromiumPath } from '../../../crawler/browser.ts'
import { AXE_SOURCE, evaluateAxe, withoutErrorStacks } from '../../../crawler/gather/axe.ts'
import { createLogger } from '../../../shared/lib/log.ts'

let pool: BrowserPool
const TRACE = join(tmpdir(), `axe-stacks-${process.pid}.json`)

beforeAll(() => {
  pool = new BrowserPool(chromiumPath(''), createLogger('warn'))
})

afterAll(async () => {
  await pool?.close()
  rmSync(TRACE, { force: true })
})

/** Runs fn on a fresh page holding the given markup; the context is closed after. */
async function onPage<T>(html: string, fn: (page: Page) => Promise<T>): Promise<T> {
  const context = await pool.newContext({})
  try {
    const page = await context.newPage()
    await page.setContent(html)
    return await fn(page)
  } finally {
    await context.close()
  }
}

/** How many times V8 went back to a function's source for its lines and columns while fn ran in the page. */
async function positionsCollected(page: Page, fn: () => Promise<unknown>): Promise<number> {
  const browser = page.context().browser()
  if (!browser) throw new Error('no browser')
  await browser.startTracing(page, { path: TRACE, categories: ['disabled-by-default-v8.compile'] })
  try {
    await fn()
  } finally {
    await browser.stopTracing()
  }
  const trace = JSON.parse(readFileSync(TRACE, 'utf8'))
  const events: { name: string }[] = Array.isArray(trace) ? trace : trace.traceEvents
  return events.filter((e) => e.name === 'V8.CollectSourcePositions').length
}

describe("axe's evaluation in a page", () => {
  test("records no error stack: V8 parses none of axe's functions again for lines and columns", async () => {
    // As sent before: the error axe's core-js makes at load has its stack recorded, axe's outer functions
    // parsed again.
    const plain = await onPage('<p>plain</p>', async (page) => {
      const session = await page.context().newCDPSession(page)
      return positionsCollected(page, () => session.send('Runtime.evaluate', { expression: AXE_SOURCE, silent: true }))
    })
    expect(plain).toBeGreaterThan(0)
    const ours = await onPage('<p>ours</p>', (page) =>
      positionsCollected(page, async () => {
        await evaluateAxe(page)
        expect(await page.evaluate('typeof window.axe.run')).toBe('function')
      }),
    )
    expect(ours).toBe(0)
  }, 60_000)

  test("leaves the page's Error.stackTraceLimit as the page had it: its own value, the default, none, or frozen", async () => {
    const limitAfter = (setup: string, source = 'window.__ran = true') =>
      onPage(`<script>${setup}</script>`, async (page) => {
        const threw = await evaluateAxe(page, source).then(
          () => false,
          () => true,
        )
        const seen = await page.evaluate(() => ({
          own: Object.hasOwn(Error, 'stackTraceLimit'),
          limit: Error.stackTraceLimit as number | undefined,
          stack: typeof new Error('after').stack,
        }))
        return { threw, ...seen }
      })
    expect(await limitAfter('')).toEqual({ threw: false, own: true, limit: 10, stack: 'string' })
    expect(await limitAfter('Error.stackTraceLimit = 42')).toEqual({ threw: false, own: true, limit: 42, stack: 'string' })
    expect(await limitAfter('delete Error.stackTraceLimit')).toEqual({ threw: false, own: false, limit: undefined, stack: 'undefined' })
    // A page that froze Error: the delete fails quietly, the source runs, the limit stays.
    expect(await limitAfter('Object.freeze(Error)')).toEqual({ threw: false, own: true, limit: 10, stack: 'string' })
    // A source that throws: the error still reaches the caller and the limit is back.
    expect(await limitAfter('Error.stackTraceLimit = 7', 'throw new Error("broken")')).toEqual({
      threw: true,
      own: true,
      limit: 7,
      stack: 'string',
    })
  }, 60_000)

  test('runs the source as a script of its own, with its last line ending in a comment', () => {
    const script = withoutErrorStacks('var x = 1 // a comment at the end')
    expect(script).toContain('\nvar x = 1 // a comment at the end\n')
    expect(() => new Function(script)).not.toThrow()
  })
})
