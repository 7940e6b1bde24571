// Live frames of a crawl for the viewer: a CDP screencast of one lane's tab, published over pub/sub only while
// someone watches, kept moving on pages that do not repaint, and a still of every page as it is judged.
//
// - Nobody watching: no screencast and no ticker, so Chromium encodes nothing for the viewer and nothing is
//   published (the replay's one still per page is taken anyway; see captureReplayFrame). Watching is the
//   `viewer:watching:<auditId>` key that api replicas keep alive while a socket is open, read once a second
//   per audit, plus 'watch'/'unwatch' control messages so a viewer sees frames at once.
// - One stream per audit: every lane's tab is attached, and the focused one is cast: the lane a viewer chose
//   ('focus:N'), else the lane that started a page most recently ('focus:auto' goes back to that).
// - Screencast frames come only when a page repaints, so a static page would show one frame or none. While
//   someone watches, a ticker takes a still of the focused tab whenever no frame went out for STILL_AFTER_MS,
//   so the picture keeps moving at about 10 frames a second; screencast frames are capped at MAX_FPS.
// - The latest frame is also kept in the store (`viewer:latest:<auditId>`, at most once a second), so a viewer
//   that opens gets a picture at once instead of waiting for the next repaint.
// - 'quality:low' (a viewer on a slow link) makes frames smaller and lighter until 'quality:normal'.
// - Every frame is acknowledged (Chromium stalls the stream otherwise), also the ones that are dropped.
import type { CDPSession, Page } from 'playwright-core'
import type { KeyValue, PubSub } from '../../shared/infra/types.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { parseViewerControl, VIEWER_LATEST_TTL_S, viewerChannels, viewerKeys } from '../../shared/protocol/viewer.ts'
import { errorMessage } from '../../shared/errors.ts'

export interface ScreencastDeps {
  auditId: string
  pubsub: PubSub
  kv: KeyValue
  log: Logger
}

type Quality = 'normal' | 'low'
const SCREENCAST: Record<Quality, { format: 'jpeg'; quality: number; maxWidth: number; maxHeight: number; everyNthFrame: number }> = {
  normal: { format: 'jpeg', quality: 60, maxWidth: 1280, maxHeight: 800, everyNthFrame: 1 },
  low: { format: 'jpeg', quality: 40, maxWidth: 800, maxHeight: 500, everyNthFrame: 1 },
}
/** Stills of the focused tab: a scale of its 1280x800 viewport, and a JPEG quality, per quality (a still takes ~35 ms either way). */
const STILL: Record<Quality, { scale: number; quality: number }> = {
  normal: { scale: 0.75, quality: 50 },
  low: { scale: 0.5, quality: 40 },
}
/** Frames published per second at most, screencast and stills together. */
export const MAX_FPS = 15
/** The ticker's period while someone watches. */
const TICK_MS = 20
/** No frame for this long: the ticker takes a still. With a still's own ~35 ms, about 10 a second. */
const STILL_AFTER_MS = 50
/** A still that takes longer is abandoned (a busy page, a busy machine). */
const STILL_TIMEOUT_MS = 2_000
const POLL_MS = 1_000
/** How long an audit's watch state outlives its last page, waiting for the next one. */
const LINGER_MS = 5_000
/** Publishes still on their way before new frames are dropped (a slow Redis must not pile up memory). */
const MAX_IN_FLIGHT = 4
/** How often the latest frame is written to the store. */
const LATEST_EVERY_MS = 1_000

export interface FrameMessage {
  type: 'frame'
  url: string
  data: string
  ts: number
  lane: number
  lanes: number
  seq: number
}

class AuditCast {
  watching = false
  focused: Cast | null = null
  /** Attached and not yet detached, least recently active first. */
  private attached: Cast[] = []
  refs = 0
  private timer: ReturnType<typeof setInterval> | null = null
  private ticker: ReturnType<typeof setInterval> | null = null
  private linger: ReturnType<typeof setTimeout> | null = null
  private unsubscribe: Promise<() => Promise<void>> | null = null
  inFlight = 0
  quality: Quality = 'normal'
  /** The lane a viewer asked to follow; null: the most recently active. */
  private lane: number | null = null
  lanes = 0
  private seq = 0
  private lastPublishAt = 0
  private lastLatestAt = 0
  private stillRunning = false

  constructor(
    readonly deps: ScreencastDeps,
    private forget: () => void,
  ) {}

  acquire() {
    this.refs++
    if (this.linger) clearTimeout(this.linger)
    this.linger = null
    if (this.timer) return
    this.unsubscribe = this.deps.pubsub
      .subscribe(viewerChannels.control(this.deps.auditId), (m) => this.control(m))
      .catch((e) => {
        this.deps.log.warn('viewer control subscription failed', { auditId: this.deps.auditId, error: errorMessage(e) })
        return async () => {}
      })
    this.timer = setInterval(() => void this.poll(), POLL_MS)
    this.timer.unref?.()
    void this.poll()
  }

  release() {
    this.refs--
    if (this.refs > 0) return
    this.linger = setTimeout(() => void this.dispose(), LINGER_MS)
    this.linger.unref?.()
  }

  private control(message: string) {
    const c = parseViewerControl(message)
    if (!c) return
    if (c.kind === 'watch') this.setWatching(true)
    else if (c.kind === 'unwatch' || c.kind === 'ended') this.setWatching(false)
    else if (c.kind === 'focus') {
      this.lane = c.lane
      this.refocus()
    } else if (c.kind === 'quality' && c.quality !== this.quality) {
      this.quality = c.quality
      void this.focused?.restart()
    }
  }

  private async poll() {
    try {
      this.setWatching((await this.deps.kv.get(viewerKeys.watching(this.deps.auditId))) !== null)
    } catch {
      // A store hiccup: keep the last known state; the next poll decides again.
    }
  }

  private setWatching(w: boolean) {
    if (w === this.watching) return
    this.watching = w
    if (w && !this.ticker) {
      this.ticker = setInterval(() => void this.tick(), TICK_MS)
      this.ticker.unref?.()
    } else if (!w && this.ticker) {
      clearInterval(this.ticker)
      this.ticker = null
    }
    void this.focused?.sync()
  }

  /** While watched: a still of the focused tab when nothing went out for a while (a page that does not repaint). */
  private async tick() {
    const cast = this.focused
    if (!cast || !this.watching || this.stillRunning || this.inFlight >= MAX_IN_FLIGHT || !cast.url()) return
    if (performance.now() - this.lastPublishAt < STILL_AFTER_MS) return
    this.stillRunning = true
    try {
      const data = await cast.still(STILL[this.quality].scale, STILL[this.quality].quality)
      if (data && this.focused === cast && this.watching) this.publish(cast.lane, cast.url(), data, Date.now(), true)
    } finally {
      this.stillRunning = false
    }
  }

  add(c: Cast) {
    this.attached.push(c)
    this.lanes = Math.max(this.lanes, c.lane + 1)
    this.refocus()
  }

  /** The cast's tab started a page: it is the most recently active. */
  touch(c: Cast) {
    const i = this.attached.indexOf(c)
    if (i < 0 || i === this.attached.length - 1) return
    this.attached.splice(i, 1)
    this.attached.push(c)
    this.refocus()
  }

  remove(c: Cast) {
    this.attached = this.attached.filter((x) => x !== c)
    this.refocus()
  }

  private refocus() {
    const chosen = this.lane === null ? null : ([...this.attached].reverse().find((c) => c.lane === this.lane) ?? null)
    const next = chosen ?? this.attached[this.attached.length - 1] ?? null
    if (next === this.focused) return
    const previous = this.focused
    this.focused = next
    void previous?.sync()
    void next?.sync()
  }

  /**
   * Sends a frame to the viewers, unless too soon after the last one (MAX_FPS) or too many are on their way;
   * `force` (a page's still) skips the rate cap. Keeps the latest in the store, at most once a second.
   */
  publish(lane: number, url: string, data: string, ts: number, force = false): boolean {
    const now = performance.now()
    if (!force && now - this.lastPublishAt < 1000 / MAX_FPS) return false
    if (this.inFlight >= MAX_IN_FLIGHT) return false
    this.lastPublishAt = now
    const { pubsub, kv, auditId } = this.deps
    const message = JSON.stringify({ type: 'frame', url, data, ts, lane, lanes: this.lanes, seq: ++this.seq } satisfies FrameMessage)
    if (this.watching) {
      this.inFlight++
      pubsub
        .publish(viewerChannels.frames(auditId), message)
        .catch(() => {})
        .finally(() => this.inFlight--)
    }
    if (now - this.lastLatestAt >= LATEST_EVERY_MS) {
      this.lastLatestAt = now
      kv.set(viewerKeys.latest(auditId), message, VIEWER_LATEST_TTL_S).catch(() => {})
    }
    return true
  }

  private async dispose() {
    if (this.refs > 0) return
    if (this.timer) clearInterval(this.timer)
    if (this.ticker) clearInterval(this.ticker)
    this.timer = null
    this.ticker = null
    this.forget()
    const unsub = await this.unsubscribe
    await unsub?.().catch(() => {})
  }
}

const registry = new WeakMap<PubSub, Map<string, AuditCast>>()

function auditCast(deps: ScreencastDeps): AuditCast {
  let byAudit = registry.get(deps.pubsub)
  if (!byAudit) registry.set(deps.pubsub, (byAudit = new Map()))
  let cast = byAudit.get(deps.auditId)
  if (!cast) {
    const map = byAudit
    cast = new AuditCast(deps, () => map.delete(deps.auditId))
    map.set(deps.auditId, cast)
  }
  return cast
}

/** One CDP session per tab, shared by its screencast, its stills and its replay frames. */
const sessions = new WeakMap<Page, Promise<CDPSession>>()
function sessionOf(page: Page): Promise<CDPSession> {
  let s = sessions.get(page)
  if (!s) {
    s = page.context().newCDPSession(page)
    s.catch(() => sessions.delete(page))
    sessions.set(page, s)
  }
  return s
}

/** A JPEG of the tab's viewport (base64), scaled; null when the tab is gone or busy past the timeout. */
async function captureJpeg(page: Page, scale: number, quality: number): Promise<string | null> {
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

class Cast {
  private cdp: CDPSession | null = null
  private readonly onFrameEvent = (f: { data: string; sessionId: number; metadata: { timestamp?: number } }) => this.onFrame(f)
  private casting = false
  detached = false
  /** start/stop run one at a time, each re-reading what is wanted when its turn comes. */
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private page: Page,
    private audit: AuditCast,
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
      await this.cdp.send('Page.startScreencast', SCREENCAST[this.audit.quality])
      this.casting = true
    } else if (!want && this.casting) {
      this.casting = false
      await this.cdp?.send('Page.stopScreencast')
    }
  }

  still(scale: number, quality: number): Promise<string | null> {
    return captureJpeg(this.page, scale, quality)
  }

  private onFrame(f: { data: string; sessionId: number; metadata: { timestamp?: number } }) {
    this.cdp?.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {})
    const url = this.url()
    if (!this.casting || !this.wanted() || !url) return
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

export interface AttachedCast {
  /** The tab started a page (`url`): the viewer follows it unless a lane was chosen. */
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
  const cast = new Cast(page, audit, lane)
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

/** The replay's frame of a judged page: a small JPEG of its viewport (about 480 pixels wide). */
export const REPLAY_FRAME = { scale: 0.375, quality: 50 } as const

/**
 * Takes the replay's still of a page that was just judged and offers it to the live view too (so every
 * page shows at least once, static ones included). Returns the JPEG's bytes, or null.
 */
export async function captureReplayFrame(page: Page, deps: ScreencastDeps, lane: number): Promise<Buffer | null> {
  const data = await captureJpeg(page, REPLAY_FRAME.scale, REPLAY_FRAME.quality)
  if (!data) return null
  const audit = registry.get(deps.pubsub)?.get(deps.auditId)
  audit?.publish(lane, page.url(), data, Date.now(), true)
  return Buffer.from(data, 'base64')
}
