// One audit's live stream: every lane's tab attached to it, the focused one cast, whether anyone watches
// (the store's key, polled, and control messages), the ticker of stills for pages that do not repaint, and
// the frames published within the rate cap with the latest kept in the store. See screencast.ts.
import type { KeyValue, PubSub } from '../../shared/infra/types.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { parseViewerControl, VIEWER_LATEST_TTL_S, viewerChannels, viewerKeys } from '../../shared/protocol/viewer.ts'
import { errorMessage } from '../../shared/errors.ts'
import type { LaneCast, Quality } from './lane-cast.ts'

export interface ScreencastDeps {
  auditId: string
  pubsub: PubSub
  kv: KeyValue
  log: Logger
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

  add(c: LaneCast) {
    this.attached.push(c)
    this.lanes = Math.max(this.lanes, c.lane + 1)
    this.refocus()
  }

  /** The cast's tab started a page: it is the most recently active. */
  touch(c: LaneCast) {
    const i = this.attached.indexOf(c)
    if (i < 0 || i === this.attached.length - 1) return
    this.attached.splice(i, 1)
    this.attached.push(c)
    this.refocus()
  }

  remove(c: LaneCast) {
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
