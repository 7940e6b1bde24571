// Stills of a lane's tab over CDP: one session per tab, shared by its screencast, its live stills and its
// replay frames, and a JPEG of the viewport that never waits past a bound. A scaled still (the replay's) has
// its tab to itself: Chromium takes it by emulating a smaller device for its length, and a full-size still
// taken meanwhile came out at the replay's 480 pixels.
import type { CDPSession, Page } from 'playwright-core'

/** What the live view did in this process, for bench/viewer-fps (counts only, never read by the crawl). */
export const castStats = {
  /** Frames Chromium sent, whether or not they were published. */
  screencastFrames: 0,
  stills: 0,
  stillMs: 0,
  published: 0,
  /** Screencast frames held for the rate cap and replaced by a newer one before they went out. */
  skippedRate: 0,
  skippedInFlight: 0,
  skippedNarrow: 0,
  publishedBytes: 0,
}

/** A still that takes longer is abandoned (a busy page, a busy machine). */
const STILL_TIMEOUT_MS = 2_000

/** One CDP session per tab, shared by its screencast, its stills and its replay frames. */
const sessions = new WeakMap<Page, Promise<CDPSession>>()
export function sessionOf(page: Page): Promise<CDPSession> {
  let s = sessions.get(page)
  if (!s) {
    s = page.context().newCDPSession(page)
    s.catch(() => sessions.delete(page))
    sessions.set(page, s)
  }
  return s
}

/**
 * Per tab: the scaled still on its way, which has the tab to itself, and the full-size ones on their way,
 * which may overlap (two at once keep Chromium busy while each waits for its frame on a loaded machine).
 */
const gates = new WeakMap<Page, { scaled: Promise<unknown>; full: Set<Promise<unknown>> }>()

/** A JPEG of the tab's viewport (base64), scaled; null when the tab is gone or busy past the timeout. */
export function captureJpeg(page: Page, scale: number, quality: number): Promise<string | null> {
  let gate = gates.get(page)
  if (!gate) gates.set(page, (gate = { scaled: Promise.resolve(), full: new Set() }))
  const g = gate
  if (scale === 1) {
    const shot = g.scaled.then(() => shoot(page, 1, quality))
    g.full.add(shot)
    void shot.finally(() => g.full.delete(shot))
    return shot
  }
  const shot = Promise.allSettled([g.scaled, ...g.full]).then(() => shoot(page, scale, quality))
  g.scaled = shot
  return shot
}

async function shoot(page: Page, scale: number, quality: number): Promise<string | null> {
  if (page.isClosed()) return null
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const cdp = await sessionOf(page)
    const viewport = page.viewportSize() ?? { width: 1280, height: 800 }
    // Handled here: it may fail after the timeout below has won the race (a tab closed meanwhile).
    const shot = cdp
      .send('Page.captureScreenshot', {
        format: 'jpeg',
        quality,
        optimizeForSpeed: true,
        ...(scale !== 1 ? { clip: { x: 0, y: 0, width: viewport.width, height: viewport.height, scale } } : {}),
      })
      .catch(() => null)
    const timeout = new Promise<null>((r) => {
      timer = setTimeout(() => r(null), STILL_TIMEOUT_MS)
    })
    const r = await Promise.race([shot, timeout])
    return r?.data ?? null
  } catch {
    return null
  } finally {
    clearTimeout(timer)
  }
}
