// Live frames of a crawl for the viewer: a CDP screencast of the page the crawl started most recently,
// published over pub/sub only while someone watches.
//
// - Nobody watching: no CDP session, no screencast, so Chromium encodes nothing and nothing is published.
//   Watching is the `viewer:watching:<auditId>` key that api replicas keep alive while a socket is open,
//   read once a second per audit, plus 'watch'/'unwatch' control messages so a viewer sees frames at once.
// - One stream per audit: with several pages in flight, the most recently attached page is shown. An
//   attach that takes the focus stops the previous page's screencast; when the shown page detaches, the
//   latest page still attached takes over.
// - Every frame is acknowledged (Chromium stalls the stream otherwise), also the ones that are dropped.
// - attach is cheap: a map lookup and, for the first page of an audit, one subscription. The audit's
//   watch state lingers briefly after its last page detaches, so detach-then-attach does not resubscribe.
import type { CDPSession, Page } from 'playwright-core'
import type { Logger } from '../../shared/log.ts'
import type { KeyValue, PubSub } from '../../shared/infra/types.ts'
import { viewerChannels, viewerKeys } from '../../shared/viewer.ts'

export interface ScreencastDeps {
  auditId: string
  pubsub: PubSub
  kv: KeyValue
  log: Logger
}

/** Chromium sends up to ~60 frames a second; every 3rd is plenty for a human watching a crawl. */
const SCREENCAST = { format: 'jpeg', quality: 60, maxWidth: 1280, maxHeight: 720, everyNthFrame: 3 } as const
const POLL_MS = 1_000
/** How long an audit's watch state outlives its last page, waiting for the next one. */
const LINGER_MS = 5_000
/** Publishes still on their way before new frames are dropped (a slow Redis must not pile up memory). */
const MAX_IN_FLIGHT = 4

class AuditCast {
  watching = false
  focused: Cast | null = null
  /** Attached and not yet detached, oldest first. */
  private attached: Cast[] = []
  refs = 0
  private timer: ReturnType<typeof setInterval> | null = null
  private linger: ReturnType<typeof setTimeout> | null = null
  private unsubscribe: Promise<() => Promise<void>> | null = null
  inFlight = 0

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
      .subscribe(viewerChannels.control(this.deps.auditId), (m) => {
        if (m === 'watch') this.setWatching(true)
        else if (m === 'unwatch' || m === 'ended') this.setWatching(false)
      })
      .catch((e) => {
        this.deps.log.warn('viewer control subscription failed', { auditId: this.deps.auditId, error: (e as Error).message })
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
    void this.focused?.sync()
  }

  add(c: Cast) {
    this.attached.push(c)
    this.refocus()
  }

  remove(c: Cast) {
    this.attached = this.attached.filter((x) => x !== c)
    this.refocus()
  }

  private refocus() {
    const next = this.attached[this.attached.length - 1] ?? null
    if (next === this.focused) return
    const previous = this.focused
    this.focused = next
    void previous?.sync()
    void next?.sync()
  }

  private async dispose() {
    if (this.refs > 0) return
    if (this.timer) clearInterval(this.timer)
    this.timer = null
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

class Cast {
  private cdp: CDPSession | null = null
  private casting = false
  detached = false
  /** start/stop run one at a time, each re-reading what is wanted when its turn comes. */
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private page: Page,
    private audit: AuditCast,
  ) {}

  private wanted() {
    return !this.detached && this.audit.watching && this.audit.focused === this && !this.page.isClosed()
  }

  sync(): Promise<void> {
    this.chain = this.chain
      .then(() => this.step())
      .catch((e) => {
        this.casting = false
        if (!this.page.isClosed())
          this.audit.deps.log.debug('screencast step failed', { auditId: this.audit.deps.auditId, error: (e as Error).message })
      })
    return this.chain
  }

  private async step() {
    const want = this.wanted()
    if (want && !this.casting) {
      if (!this.cdp) {
        this.cdp = await this.page.context().newCDPSession(this.page)
        this.cdp.on('Page.screencastFrame', (f) => this.onFrame(f))
      }
      if (!this.wanted()) return
      await this.cdp.send('Page.startScreencast', SCREENCAST)
      this.casting = true
    } else if (!want && this.casting) {
      this.casting = false
      await this.cdp?.send('Page.stopScreencast')
    }
  }

  private onFrame(f: { data: string; sessionId: number; metadata: { timestamp?: number } }) {
    this.cdp?.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {})
    if (!this.casting || !this.wanted() || this.audit.inFlight >= MAX_IN_FLIGHT) return
    const { pubsub, auditId } = this.audit.deps
    const message = JSON.stringify({
      type: 'frame',
      url: this.page.url(),
      data: f.data,
      ts: f.metadata.timestamp ? Math.round(f.metadata.timestamp * 1000) : Date.now(),
    })
    this.audit.inFlight++
    pubsub
      .publish(viewerChannels.frames(auditId), message)
      .catch(() => {})
      .finally(() => this.audit.inFlight--)
  }

  async detach() {
    if (this.detached) return
    this.detached = true
    this.audit.remove(this)
    await this.sync()
    const cdp = this.cdp
    this.cdp = null
    await cdp?.detach().catch(() => {})
    this.audit.release()
  }
}

/**
 * Screencasts `page` to the audit's viewers from now on (and takes the focus from the audit's previous
 * page). Safe to call for every page; never throws for a page that closes under it. detach() is
 * idempotent and also happens by itself when the page closes.
 */
export async function attachScreencast(page: Page, deps: ScreencastDeps): Promise<{ detach(): Promise<void> }> {
  const audit = auditCast(deps)
  audit.acquire()
  const cast = new Cast(page, audit)
  audit.add(cast)
  page.once('close', () => void cast.detach())
  return { detach: () => cast.detach() }
}
