// Stills of a lane's tab over CDP: one session per tab, shared by its screencast, its live stills and its
// replay frames, and a JPEG of the viewport that never waits past a bound. A tab's stills are taken one at
// a time: Chromium takes a scaled still (the replay's) by emulating a smaller device for its length, and a
// full-size still taken meanwhile came out at the replay's 480 pixels.
import type { CDPSession, Page } from 'playwright-core'

/** What the live view did in this process, for bench/viewer-fps (counts only, never read by the crawl). */
export const castStats = {
  /** Frames Chromium sent, whether or not they were published. */
  screencastFrames: 0,
  stills: 0,
  stillMs: 0,
  published: 0,
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

/** The last still of each tab, taken or on its way: the next one starts after it. */
const stillOf = new WeakMap<Page, Promise<unknown>>()

/** A JPEG of the tab's viewport (base64), scaled; null when the tab is gone or busy past the timeout. */
export function captureJpeg(page: Page, scale: number, quality: number): Promise<string | null> {
  const next = (stillOf.get(page) ?? Promise.resolve()).then(() => shoot(page, scale, quality))
  stillOf.set(page, next)
  return next
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
