// One audit's live stream: every lane's tab attached to it, the focused one cast, whether anyone watches
// (the store's key, polled, and control messages), the ticker of stills for pages that do not repaint, and
// the frames published within the rate cap with the latest kept in the store. See screencast.ts.
import type { Page } from 'playwright-core'
import type { KeyValue, PubSub } from '../../shared/infra/types.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { parseViewerControl, VIEWER_LATEST_TTL_S, viewerChannels, viewerKeys } from '../../shared/protocol/viewer.ts'
import { errorMessage } from '../../shared/errors.ts'
import { jpegInfo } from '../../shared/lib/jpeg.ts'
import { captureStill, castStats, STILL_SESSIONS } from './capture.ts'
import { LIVE_FRAME, type LaneCast, type Quality } from './lane-cast.ts'
import { framesInRow, MAX_FPS, stillDue, tickerStillWanted } from './still-rules.ts'

export { MAX_FPS } from './still-rules.ts'

export interface ScreencastDeps {
  auditId: string
  pubsub: PubSub
  kv: KeyValue
  log: Logger
}

/** The ticker's period while someone watches. */
const TICK_MS = 20
/**
 * Stills on their way at once, one on each of the tab's still sessions (capture.ts): on a loaded machine a
 * still waits mostly for its turn on the CPU, and three overlapping kept a static site's view at 10-11
 * frames a second where two gave 9 (bench/viewer-fps --busy).
 */
const STILLS_IN_FLIGHT = STILL_SESSIONS
const POLL_MS = 1_000
/** How long an audit's watch state outlives its last page, waiting for the next one. */
const LINGER_MS = 5_000
/** Publishes still on their way before new frames are dropped (a slow Redis must not pile up memory). */
const MAX_IN_FLIGHT = 4
/** How often the latest frame is written to the store. */
const LATEST_EVERY_MS = 1_000
/**
 * Following the latest page, the view stays on a lane at least this long before another lane's new page takes
 * it: a page shown for a fifth of a second cannot be read, and each switch restarts Chromium's screencast.
 */
const MIN_FOCUS_MS = 1_000
/** Pages remembered as shown, so a judged page that never was gets a still of its own. */
const SHOWN_MEMORY = 1_000

export interface FrameMessage {
  type: 'frame'
  url: string
  data: string
  ts: number
  lane: number
  lanes: number
  seq: number
}

export class AuditCast {
  watching = false
  focused: LaneCast | null = null
  /** Attached and not yet detached, least recently active first. */
  private attached: LaneCast[] = []
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
  private lastStillAt = 0
  /** The focused tab's last screencast frame (at 0: none yet), its page, and how many came in a row of it (framesInRow). */
  private stream = { url: '', at: 0, frames: 0 }
  /** Stills on their way, and the time of the newest picture published by one (epoch ms). */
  private stills = 0
  private lastStillShown = 0
  /** The lane of the last frame published (-1: none yet). */
  private shownLane = -1
  private focusedAt = 0
  private refocusTimer: ReturnType<typeof setTimeout> | null = null
  /** A frame that came too soon after the last one, sent when the rate cap allows; its timer. */
  private held: { lane: number; url: string; data: string; ts: number } | null = null
  private heldTimer: ReturnType<typeof setTimeout> | null = null
  /** The pages shown so far (the latest SHOWN_MEMORY). */
  private readonly shown = new Set<string>()

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
      this.refocus(true)
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

  /**
   * While watched: a still of the focused tab when its screencast is quiet (a page that does not repaint),
   * one every STILL_EVERY_MS, at most STILLS_IN_FLIGHT at once. One that comes back after the view moved to
   * another lane is still shown until that lane has shown a frame (tickerStillWanted): on a loaded machine a
   * still took 0.6 s and the view moved between a crawl's two lanes every second or so, and dropping them
   * threw away 51 of a static site's 139 stills in a run of bench/viewer-fps --busy --quick.
   */
  private async tick() {
    const cast = this.focused
    if (!cast || !this.watching || this.stills >= STILLS_IN_FLIGHT || this.inFlight >= MAX_IN_FLIGHT || !cast.url()) return
    const now = performance.now()
    if (!stillDue(now, { lastStill: this.lastStillAt, lastScreencast: this.stream.at, streamFrames: this.stream.frames })) return
    this.lastStillAt = now
    await this.still(
      cast.page,
      () => tickerStillWanted(this.focused === cast, cast.lane, this.shownLane),
      cast.lane,
      () => cast.url(),
    )
  }

  /**
   * A still of `page` published if `stillWanted()` holds once it is taken and, for the ticker's stills of the
   * focused tab (`inOrder`), no still of a later picture went out first. Ordered by the picture's time, not by
   * when each was asked for: stills on several sessions come back in either order, and 7 of the 11 that came
   * back after a later-asked one held the newer picture (one run of bench/viewer-fps --busy --quick). A judged page's still is not in that order: it
   * shows another page, once, whatever the focused tab's stills did meanwhile. False when none could be
   * taken (the tab closed, or the machine too busy to take it within its bound).
   */
  private async still(page: Page, stillWanted: () => boolean, lane: number, url: () => string, inOrder = true): Promise<boolean> {
    this.stills++
    const t0 = performance.now()
    try {
      const still = await captureStill(page, LIVE_FRAME[this.quality].scale, LIVE_FRAME[this.quality].quality)
      castStats.stills++
      castStats.stillMs += performance.now() - t0
      if (!still) {
        castStats.stillsEmpty++
        return false
      }
      if (!this.watching || !stillWanted()) {
        castStats.stillsMovedOn++
        return true
      }
      if (inOrder && still.takenAt < this.lastStillShown) {
        castStats.stillsOutOfOrder++
        return true
      }
      if (this.publish(lane, url(), still.data, Date.now(), true)) this.lastStillShown = Math.max(this.lastStillShown, still.takenAt)
      return true
    } finally {
      this.stills--
    }
  }

  /** A screencast frame came from the focused tab (published or not): the page repaints by itself. */
  screencastFrame(url: string) {
    const now = performance.now()
    this.stream = { url, at: now, frames: framesInRow(this.stream, url, now) }
  }

  /**
   * A lane's page was judged: while someone watches and it never showed (another lane had the view all its
   * time), a still of it at the live size, so every page shows at least once. Nothing while nobody watches.
   */
  async showJudged(page: Page, lane: number, url: string): Promise<void> {
    if (!this.watching || this.shown.has(url) || page.isClosed()) return
    // The crawl waits for this before the tab moves on: the still shows the judged page. One more try when a
    // loaded machine could not take it within its bound (capture.ts), so the page shows once all the same.
    for (let attempt = 0; attempt < 2 && this.watching && !page.isClosed(); attempt++)
      if (
        await this.still(
          page,
          () => !page.isClosed(),
          lane,
          () => url,
          false,
        )
      )
        return
    if (this.watching && !page.isClosed()) castStats.judgedUnshown++
  }

  /** A tab is attached: the least recently active until it starts a page (touch), unless it is the only one. */
  add(c: LaneCast) {
    this.attached.unshift(c)
    this.lanes = Math.max(this.lanes, c.lane + 1)
    this.refocus(false)
  }

  /** The cast's tab started a page: it is the most recently active. */
  touch(c: LaneCast) {
    const i = this.attached.indexOf(c)
    if (i < 0 || i === this.attached.length - 1) return
    this.attached.splice(i, 1)
    this.attached.push(c)
    this.refocus(false)
  }

  remove(c: LaneCast) {
    this.attached = this.attached.filter((x) => x !== c)
    this.refocus(true)
  }

  /**
   * Focuses the chosen lane, else the most recently active one; a switch to a newer page waits until the
   * view has stayed MIN_FOCUS_MS on its lane (`now`: a lane was chosen, or the focused tab went).
   */
  private refocus(now: boolean) {
    const chosen = this.lane === null ? null : ([...this.attached].reverse().find((c) => c.lane === this.lane) ?? null)
    const next = chosen ?? this.attached[this.attached.length - 1] ?? null
    if (next === this.focused) return
    const held = performance.now() - this.focusedAt
    if (!now && this.focused && this.attached.includes(this.focused) && held < MIN_FOCUS_MS) {
      if (!this.refocusTimer) {
        this.refocusTimer = setTimeout(() => {
          this.refocusTimer = null
          this.refocus(true)
        }, MIN_FOCUS_MS - held)
        this.refocusTimer.unref?.()
      }
      return
    }
    const previous = this.focused
    this.focused = next
    this.focusedAt = performance.now()
    // The new tab's screencast has yet to send anything: a still may come at once.
    this.stream = { url: '', at: 0, frames: 0 }
    this.lastStillAt = 0
    void previous?.sync()
    void next?.sync()
  }

  /**
   * Sends a frame to the viewers, unless too many are on their way; one that comes too soon after the last
   * (MAX_FPS) is held and sent once the cap allows, unless a newer frame replaces it first (Chromium sends
   * frames in bursts on a loaded machine: dropping the early ones of a burst threw away a third of them).
   * `force` (a still) skips the rate cap. Keeps the latest in the store, at most once a second.
   */
  publish(lane: number, url: string, data: string, ts: number, force = false): boolean {
    const now = performance.now()
    const wait = 1000 / MAX_FPS - (now - this.lastPublishAt)
    if (!force && wait > 0) {
      this.hold({ lane, url, data, ts }, wait)
      return false
    }
    if (this.inFlight >= MAX_IN_FLIGHT) {
      castStats.skippedInFlight++
      return false
    }
    // Never a frame narrower than the quality asks (now and then a screencast frame painted while the
    // replay's scaled one-frame screencast ran came out at its size): its text could not be read.
    const width = jpegInfo(data.slice(0, 1600))?.width
    if (width !== undefined && width < LIVE_FRAME[this.quality].maxWidth) {
      castStats.skippedNarrow++
      return false
    }
    this.lastPublishAt = now
    this.shownLane = lane
    // A frame held back is older than this one: it is never sent after it.
    this.held = null
    castStats.published++
    castStats.publishedBytes += data.length
    if (this.shown.size >= SHOWN_MEMORY) this.shown.clear()
    this.shown.add(url)
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

  private hold(frame: { lane: number; url: string; data: string; ts: number }, wait: number) {
    if (this.held) castStats.skippedRate++
    this.held = frame
    if (this.heldTimer) return
    this.heldTimer = setTimeout(() => {
      this.heldTimer = null
      const f = this.held
      this.held = null
      if (f && this.watching) this.publish(f.lane, f.url, f.data, f.ts)
    }, wait)
    this.heldTimer.unref?.()
  }

  private async dispose() {
    if (this.refs > 0) return
    if (this.timer) clearInterval(this.timer)
    if (this.ticker) clearInterval(this.ticker)
    if (this.refocusTimer) clearTimeout(this.refocusTimer)
    if (this.heldTimer) clearTimeout(this.heldTimer)
    this.refocusTimer = null
    this.heldTimer = null
    this.held = null
    this.timer = null
    this.ticker = null
    this.forget()
    const unsub = await this.unsubscribe
    await unsub?.().catch(() => {})
  }
}

const registry = new WeakMap<PubSub, Map<string, AuditCast>>()

export function auditCast(deps: ScreencastDeps): AuditCast {
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

/** The audit's stream while any of its tabs is attached; undefined otherwise. */
export function liveAuditCast(deps: ScreencastDeps): AuditCast | undefined {
  return registry.get(deps.pubsub)?.get(deps.auditId)
}
