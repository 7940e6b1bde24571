// One lane's tab in its audit's live view: the CDP screencast runs only while someone watches and this tab
// has the focus, is restarted for a new quality, and every frame is acknowledged (Chromium stalls the
// stream otherwise), also the ones that are dropped.
import type { CDPSession, Page } from 'playwright-core'
import type { Logger } from '../../shared/lib/log.ts'
import { errorMessage } from '../../shared/errors.ts'
import { castStats, sessionOf } from './capture.ts'

export type Quality = 'normal' | 'low'

/**
 * What a live frame is, screencast or still. Normal: the whole 1280x800 viewport at its CSS size and JPEG
 * quality 60, so a page's text reads as it does in a browser (the floor test/crawler/viewer/readable.test.ts
 * holds every frame to). Low, only while a viewer's link is slow (its socket's buffer fills, see
 * api/viewer/service.ts), never for the machine's load: 800 pixels wide at quality 40.
 */
export const LIVE_FRAME: Record<Quality, { scale: number; quality: number; maxWidth: number; maxHeight: number }> = {
  normal: { scale: 1, quality: 60, maxWidth: 1280, maxHeight: 800 },
  low: { scale: 0.625, quality: 40, maxWidth: 800, maxHeight: 500 },
}
/** The floor of a normal live frame: its width in CSS pixels of the viewport, and its JPEG quality. */
export const READABLE = { minWidth: 1280, minQuality: 60 } as const

function screencastOf(q: Quality) {
  const f = LIVE_FRAME[q]
  // Every frame Chromium paints is offered; the ack goes back before anything else is done with a frame
  // (Chromium sends the next one only once the last is acknowledged), and the rate cap is ours (MAX_FPS).
  return { format: 'jpeg' as const, quality: f.quality, maxWidth: f.maxWidth, maxHeight: f.maxHeight, everyNthFrame: 1 }
}

/** What a lane's cast reads and calls of its audit's stream (audit-cast.ts). */
export interface CastStream {
  readonly deps: { auditId: string; log: Logger }
  readonly watching: boolean
  readonly focused: LaneCast | null
  readonly quality: Quality
  publish(lane: number, url: string, data: string, ts: number): boolean
  screencastFrame(url: string): void
  remove(c: LaneCast): void
  release(): void
}

type ScreencastFrame = { data: string; sessionId: number; metadata: { timestamp?: number } }

export class LaneCast {
  private cdp: CDPSession | null = null
  private readonly onFrameEvent = (f: ScreencastFrame) => this.onFrame(f)
  private casting = false
  detached = false
  /** start/stop run one at a time, each re-reading what is wanted when its turn comes. */
  private chain: Promise<void> = Promise.resolve()

  constructor(
    readonly page: Page,
    private audit: CastStream,
    readonly lane: number,
  ) {}

  /** The page the tab was last sent to (a navigation that has not committed yet still shows about:blank). */
  target = ''

  url(): string {
    const now = this.page.isClosed() ? '' : this.page.url()
    return now && now !== 'about:blank' ? now : this.target
  }

  private wanted() {
    return !this.detached && this.audit.watching && this.audit.focused === this && !this.page.isClosed()
  }

  sync(): Promise<void> {
    this.chain = this.chain
      .then(() => this.step())
      .catch((e) => {
        this.casting = false
        if (!this.page.isClosed())
          this.audit.deps.log.debug('screencast step failed', { auditId: this.audit.deps.auditId, error: errorMessage(e) })
      })
    return this.chain
  }

  /** Stops and starts the screencast again (a new quality). */
  async restart() {
    if (!this.casting) return
    this.casting = false
    await this.cdp?.send('Page.stopScreencast').catch(() => {})
    await this.sync()
  }

  private async step() {
    const want = this.wanted()
    if (want && !this.casting) {
      if (!this.cdp) {
        this.cdp = await sessionOf(this.page)
        this.cdp.on('Page.screencastFrame', this.onFrameEvent)
      }
      if (!this.wanted()) return
      await this.cdp.send('Page.startScreencast', screencastOf(this.audit.quality))
      this.casting = true
    } else if (!want && this.casting) {
      this.casting = false
      await this.cdp?.send('Page.stopScreencast')
    }
  }

  private onFrame(f: ScreencastFrame) {
    this.cdp?.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {})
    castStats.screencastFrames++
    const url = this.url()
    if (!this.casting || !this.wanted() || !url) return
    this.audit.screencastFrame(url)
    this.audit.publish(this.lane, url, f.data, f.metadata.timestamp ? Math.round(f.metadata.timestamp * 1000) : Date.now())
  }

  async detach() {
    if (this.detached) return
    this.detached = true
    this.audit.remove(this)
    await this.sync()
    this.cdp?.off('Page.screencastFrame', this.onFrameEvent)
    this.cdp = null
    this.audit.release()
  }
}
