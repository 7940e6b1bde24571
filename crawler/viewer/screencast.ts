// Live frames of a crawl for the viewer: a CDP screencast of one lane's tab, published over pub/sub only while
// someone watches, kept moving on pages that do not repaint, and a still of a judged page that never showed.
//
// - Nobody watching: no screencast and no ticker, so Chromium encodes nothing for the viewer and nothing is
//   published (the replay's one still per page is taken anyway; see replay.ts). Watching is the
//   `viewer:watching:<auditId>` key that api replicas keep alive while a socket is open, read once a second
//   per audit, plus 'watch'/'unwatch' control messages so a viewer sees frames at once.
// - One stream per audit: every lane's tab is attached, and the focused one is cast: the lane a viewer chose
//   ('focus:N'), else the lane that started a page most recently ('focus:auto' goes back to that).
// - Screencast frames come only when a page repaints, so a static page would show one frame or none. While
//   someone watches, a ticker takes a still of the focused tab whenever its screencast has been quiet for
//   SCREENCAST_QUIET_MS, one every STILL_EVERY_MS (two at most on their way), so the picture keeps moving on
//   static pages; on a page that repaints the screencast alone is shown (stills beside it slowed it down).
//   Frames are capped at MAX_FPS.
// - Text stays readable: a live frame is the whole 1280x800 viewport at its CSS width, JPEG quality 60
//   (LIVE_FRAME, READABLE in lane-cast.ts), and a narrower one is never published. The replay's small stills
//   (replay.ts) are not sent live; a judged page that never showed gets a full-size still instead.
// - Following the latest page, the view stays at least MIN_FOCUS_MS on a lane before a newer page in
//   another lane takes it (a page shown for a fifth of a second cannot be read).
// - The latest frame is also kept in the store (`viewer:latest:<auditId>`, at most once a second), so a viewer
//   that opens gets a picture at once instead of waiting for the next repaint.
// - 'quality:low' (a viewer whose socket's buffer fills: a slow link, judged in api/viewer/service.ts, never
//   the machine's load) makes frames smaller and lighter until 'quality:normal'.
// - Every frame is acknowledged first, before anything else is done with it (Chromium sends the next frame
//   only once the last is acknowledged), also the ones that are dropped.
//
// Here: attaching a tab, and the registry of one crawl's tabs. The audit's stream is audit-cast.ts, a tab's
// screencast lane-cast.ts, the stills capture.ts.
import type { Page } from 'playwright-core'
import { errorMessage } from '../../shared/errors.ts'
import { auditCast, liveAuditCast, type ScreencastDeps } from './audit-cast.ts'
import { LaneCast } from './lane-cast.ts'

export { type FrameMessage, MAX_FPS, type ScreencastDeps } from './audit-cast.ts'

export interface AttachedCast {
  /** The tab has a page (`url`), its document loaded: the viewer follows it unless a lane was chosen. */
  touch(url?: string): void
  detach(): Promise<void>
}

/**
 * Screencasts `page` (lane `lane`'s tab) to the audit's viewers while it has the focus. Safe to call for
 * every tab; never throws for a tab that closes under it. detach() is idempotent and also happens by itself
 * when the tab closes.
 */
export async function attachScreencast(page: Page, deps: ScreencastDeps, lane = 0): Promise<AttachedCast> {
  const audit = auditCast(deps)
  audit.acquire()
  const cast = new LaneCast(page, audit, lane)
  audit.add(cast)
  page.once('close', () => void cast.detach())
  return {
    touch: (url) => {
      if (url) cast.target = url
      audit.touch(cast)
    },
    detach: () => cast.detach(),
  }
}

/** One crawl's tabs in the live view: each lane's tab attached once, when it first starts a page. */
export class TabCasts {
  private readonly casts = new Map<Page, Promise<AttachedCast | null>>()

  constructor(private readonly deps: ScreencastDeps) {}

  /**
   * Lane `lane`'s tab starts `url`: attached if new, and once the page's document is there the view follows
   * it unless a viewer chose a lane. Not at the start: a tab still navigating shows nothing new (its old page,
   * then a blank one), and on a busy machine the view went without frames for as long as the load took.
   */
  pageStarted(page: Page, url: string, lane: number): void {
    let cast = this.casts.get(page)
    if (!cast) {
      cast = attachScreencast(page, this.deps, lane).catch((e) => {
        this.deps.log.debug('screencast not attached', { error: errorMessage(e) })
        return null
      })
      this.casts.set(page, cast)
      page.once('close', () => this.casts.delete(page))
    }
    page.once('domcontentloaded', () => void cast.then((c) => c?.touch(url)))
  }

  /** Lane `lane`'s tab is the one the audit's viewers see now. */
  inView(lane: number): boolean {
    const audit = liveAuditCast(this.deps)
    return audit !== undefined && audit.watching && audit.focused?.lane === lane
  }

  async detachAll(): Promise<void> {
    const all = [...this.casts.values()]
    this.casts.clear()
    for (const c of all) await (await c)?.detach().catch(() => {})
  }
}
