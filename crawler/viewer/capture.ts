// Stills of a lane's tab over CDP, and the tab's session for its live screencast. A still is a one-frame
// screencast on a session of its own: Chromium sends the picture the tab shows now, scaled by its
// compositor, without waiting for the page's script or laying the page out again. Page.captureScreenshot
// did both: it waits for the tab's main thread (a still of a tab running 400 ms of script took 400 ms, its
// one-frame screencast 31 ms), and a scaled one emulated a smaller device for its length, laying the page
// out twice and making the live screencast's frames narrow meanwhile. In bench/viewer-fps --busy --quick, an
// audit of 40 static pages took 24.9 s with those and 12.4-14.2 s with one-frame screencasts.
import type { CDPSession, Page } from 'playwright-core'
import { jpegInfo } from '../../shared/lib/jpeg.ts'

/** What the live view did in this process, for bench/viewer-fps (counts only, never read by the crawl). */
export const castStats = {
  /** Frames Chromium sent, whether or not they were published. */
  screencastFrames: 0,
  stills: 0,
  stillMs: 0,
  /** Still frames that came at another size than asked and were asked for again (capture.ts). */
  stillsResized: 0,
  /** Stills that came back empty (the tab closed, or busy past STILL_TIMEOUT_MS). */
  stillsEmpty: 0,
  /** Stills not published because one of a later picture went out first. */
  stillsOutOfOrder: 0,
  /** Stills not published because another lane's frames were shown meanwhile (or nobody watched any more). */
  stillsMovedOn: 0,
  /** Judged pages whose still came back empty at both tries (audit-cast.ts showJudged): not shown. */
  judgedUnshown: 0,
  published: 0,
  /** Screencast frames held for the rate cap and replaced by a newer one before they went out. */
  skippedRate: 0,
  skippedInFlight: 0,
  skippedNarrow: 0,
  publishedBytes: 0,
}

/** A still that takes longer is abandoned (a busy page, a busy machine). */
const STILL_TIMEOUT_MS = 2_000

/** One CDP session per tab for its live screencast (lane-cast.ts). */
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
 * The tab's sessions for its stills, apart from the live screencast's, so a still's screencast never stops
 * or restarts the live one. A session runs one screencast at a time, so its stills take turns; several
 * sessions let stills overlap, which on a loaded machine keeps Chromium's threads busy while each still
 * waits for its turn on the CPU (audit-cast.ts has as many on their way at most).
 */
export const STILL_SESSIONS = 3
interface StillSlot {
  session: Promise<CDPSession> | null
  turn: Promise<unknown>
  queued: number
}
const stillSlots = new WeakMap<Page, StillSlot[]>()

/** A still: the JPEG (base64), and when Chromium made the picture (epoch ms: the frame's own time, else when it came). */
export interface Still {
  data: string
  takenAt: number
}

/** A JPEG of the tab's viewport (base64), scaled; null when the tab is gone or busy past the timeout. */
export async function captureJpeg(page: Page, scale: number, quality: number): Promise<string | null> {
  return (await captureStill(page, scale, quality))?.data ?? null
}

/** captureJpeg with the picture's time: stills on several sessions can come back in another order than asked. */
export function captureStill(page: Page, scale: number, quality: number): Promise<Still | null> {
  let slots = stillSlots.get(page)
  if (!slots) {
    slots = Array.from({ length: STILL_SESSIONS }, () => ({ session: null, turn: Promise.resolve(), queued: 0 }))
    stillSlots.set(page, slots)
  }
  const slot = slots.reduce((a, b) => (b.queued < a.queued ? b : a))
  slot.queued++
  const shot = slot.turn.then(() => shoot(page, slot, scale, quality)).finally(() => slot.queued--)
  slot.turn = shot
  return shot
}

function slotSession(page: Page, slot: StillSlot): Promise<CDPSession> {
  if (!slot.session) {
    const s = page.context().newCDPSession(page)
    s.catch(() => {
      if (slot.session === s) slot.session = null
    })
    slot.session = s
  }
  return slot.session
}

type Frame = { data: string; sessionId: number; metadata?: { timestamp?: number } }

async function shoot(page: Page, slot: StillSlot, scale: number, quality: number): Promise<Still | null> {
  if (page.isClosed()) return null
  let cdp: CDPSession
  try {
    cdp = await slotSession(page, slot)
  } catch {
    return null
  }
  const sized = page.viewportSize()
  const viewport = sized ?? { width: 1280, height: 800 }
  const params = {
    format: 'jpeg' as const,
    quality,
    maxWidth: Math.round(viewport.width * scale),
    maxHeight: Math.round(viewport.height * scale),
    everyNthFrame: 1,
  }
  const data = await new Promise<Still | null>((resolve) => {
    let finished = false
    const done = (d: Still | null) => {
      finished = true
      clearTimeout(timer)
      cdp.off('Page.screencastFrame', onFrame)
      page.off('close', onClose)
      resolve(d)
    }
    // A tab that closes sends no frame: its still ends now, not at the timeout.
    const onClose = () => done(null)
    page.once('close', onClose)
    // Never started again once this still is over (a restart still on its way), so no screencast outlives it.
    const start = () => (finished ? undefined : cdp.send('Page.startScreencast', params).catch(() => done(null)))
    let restarts = 0
    const onFrame = (f: Frame) => {
      cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {})
      // Now and then, on a loaded machine, the first frame comes at the size of the tab's previous one-frame
      // screencast (a replay still just before a judged page's live one): not this still. Asked again, at
      // most twice, since a page that does not repaint sends nothing more by itself.
      const width = sized ? jpegInfo(f.data.slice(0, 1600))?.width : undefined
      if (width !== undefined && Math.abs(width - params.maxWidth) > 2) {
        castStats.stillsResized++
        if (restarts++ < 2)
          void cdp
            .send('Page.stopScreencast')
            .catch(() => {})
            .then(start)
        return
      }
      const at = f.metadata?.timestamp
      done({ data: f.data, takenAt: at ? at * 1000 : Date.now() })
    }
    const timer = setTimeout(() => done(null), STILL_TIMEOUT_MS)
    cdp.on('Page.screencastFrame', onFrame)
    void start()
  })
  // Stopped before the next still starts: a frame sent meanwhile arrives before this answer and is ignored.
  await cdp.send('Page.stopScreencast').catch(() => {})
  return data
}
