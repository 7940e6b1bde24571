// The viewer's WebSocket side: checks the upgrade (Host, Origin), takes the token as the first message,
// then relays the audit's frames from pub/sub. Any replica can serve any viewer: each process subscribes
// once per audit that has sockets open here, and keeps the audit's "watching" key alive meanwhile.
import type { Server, ServerWebSocket, WebSocketHandler } from 'bun'
import type { Config } from '../../shared/config.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { KeyValue, PubSub } from '../../shared/infra/types.ts'
import {
  CLOSE_ENDED,
  CLOSE_POLICY,
  VIEWER_WATCH_TTL_S,
  isViewerAuditId,
  isViewerEnded,
  isViewerRequest,
  viewerChannels,
  viewerKeys,
  viewerTokenState,
  type ViewerControl,
} from '../../shared/protocol/viewer.ts'
import { hostRules } from '../http/host.ts'
import { errorMessage } from '../../shared/errors.ts'

export interface ViewerSocketData {
  auditId: string
  state: 'awaiting-token' | 'checking' | 'live' | 'closed'
  timer: ReturnType<typeof setTimeout> | null
  /** Set while live: the relay this socket gets frames from. */
  relay: { remove(ws: ViewerSocket): void; request(message: string): void } | null
  /** When this socket last asked for something (a lane, a quality): at most one request per REQUEST_GAP_MS. */
  lastRequestAt?: number
}

export type ViewerSocket = ServerWebSocket<ViewerSocketData>

const WS_PATH = /^\/viewer\/([^/]+)\/ws$/
/** A socket that has not sent its token by then is closed. */
const TOKEN_WAIT_MS = 10_000
/** Refresh of the watching key and re-check of the ended mark (in case an 'ended' message was lost). */
const REFRESH_MS = 2_000
/** A viewer this far behind gets frames dropped, not queued: it only ever wants the latest. */
const MAX_BUFFERED_BYTES = 512 * 1024
/** Frames dropped within windowMs that switch the crawl to lighter frames, and how long without drops switches back. */
const ADAPT = { dropsForLow: 8, windowMs: 5_000, calmMsForNormal: 30_000 } as const
/** A viewer's requests (focus, quality) closer together than this are ignored: a script cannot flood the crawl. */
const REQUEST_GAP_MS = 250

export const ENDED_REASON = 'This crawl has ended'
export const INVALID_REASON = 'This viewer link is not valid'

/** What the relays of this process did, for bench/viewer-fps (counts only). */
export const relayStats = { frames: 0, sent: 0, dropped: 0, lowRequests: 0 }

/** The audits this process relays, each with its sockets and subscriptions. */
class AuditRelay {
  sockets = new Set<ViewerSocket>()
  /** The newest frame relayed here: a viewer that joins gets it without asking the store. */
  latest: string | null = null
  private unsubs: Array<() => Promise<void>> = []
  private timer: ReturnType<typeof setInterval> | null = null
  stopped = false

  constructor(
    private auditId: string,
    private deps: { pubsub: PubSub; kv: KeyValue; log: Logger },
    private forget: () => void,
  ) {}

  async start() {
    const { pubsub } = this.deps
    this.unsubs.push(await pubsub.subscribe(viewerChannels.frames(this.auditId), (m) => this.relay(m)))
    this.unsubs.push(
      await pubsub.subscribe(viewerChannels.control(this.auditId), (m) => {
        if ((m as ViewerControl) === 'ended') this.end()
        // Another replica's last viewer left and it dropped the key: ours still watch.
        else if (m === 'unwatch' && this.sockets.size) void this.announce()
      }),
    )
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS)
    this.timer.unref?.()
    await this.announce()
  }

  private relay(message: string) {
    // Progress is small and always sent; a frame is dropped for a viewer that is behind (it wants the latest only).
    const isFrame = message.startsWith('{"type":"frame"')
    if (isFrame) {
      relayStats.frames++
      this.latest = message
    }
    for (const ws of this.sockets) {
      if (ws.data.state !== 'live') continue
      if (isFrame && ws.getBufferedAmount() >= MAX_BUFFERED_BYTES) {
        relayStats.dropped++
        this.dropped()
      } else {
        if (isFrame) relayStats.sent++
        ws.send(message)
      }
    }
    if (isFrame) this.adapt()
  }

  // A viewer on a slow link drops frames: ask the crawl for lighter ones, and go back once nothing drops.
  private drops: number[] = []
  private lowQuality = false
  private lastDropAt = 0
  private dropped() {
    const now = performance.now()
    this.lastDropAt = now
    this.drops.push(now)
    while (this.drops.length && now - this.drops[0]! > ADAPT.windowMs) this.drops.shift()
  }
  private adapt() {
    const now = performance.now()
    if (!this.lowQuality && this.drops.length >= ADAPT.dropsForLow) {
      this.lowQuality = true
      this.drops = []
      relayStats.lowRequests++
      this.request('quality:low')
    } else if (this.lowQuality && now - this.lastDropAt > ADAPT.calmMsForNormal) {
      this.lowQuality = false
      this.request('quality:normal')
    }
  }

  /** What a viewer asked for (follow a lane, lighter frames): passed to the crawl as is, validated first. */
  request(message: string) {
    if (!isViewerRequest(message)) return
    void this.deps.pubsub.publish(viewerChannels.control(this.auditId), message).catch(() => {})
  }

  private async announce() {
    const { kv, pubsub } = this.deps
    await kv.set(viewerKeys.watching(this.auditId), '1', VIEWER_WATCH_TTL_S).catch(() => {})
    await pubsub.publish(viewerChannels.control(this.auditId), 'watch' satisfies ViewerControl).catch(() => {})
  }

  private async refresh() {
    try {
      if (await isViewerEnded(this.deps.kv, this.auditId)) return this.end()
      await this.deps.kv.set(viewerKeys.watching(this.auditId), '1', VIEWER_WATCH_TTL_S)
    } catch (e) {
      this.deps.log.warn('viewer refresh failed', { auditId: this.auditId, error: errorMessage(e) })
    }
  }

  end() {
    const sockets = [...this.sockets]
    void this.stop(false)
    for (const ws of sockets) closeSocket(ws, CLOSE_ENDED, ENDED_REASON)
  }

  /** Drops one socket; the last one stops the relay and tells the crawler nobody watches from here. */
  remove(ws: ViewerSocket) {
    this.sockets.delete(ws)
    if (this.sockets.size === 0 && !this.stopped) void this.stop(true)
  }

  private async stop(unwatch: boolean) {
    if (this.stopped) return
    this.stopped = true
    this.forget()
    if (this.timer) clearInterval(this.timer)
    const { kv, pubsub } = this.deps
    for (const u of this.unsubs) await u().catch(() => {})
    if (unwatch) {
      await kv.del(viewerKeys.watching(this.auditId)).catch(() => {})
      await pubsub.publish(viewerChannels.control(this.auditId), 'unwatch' satisfies ViewerControl).catch(() => {})
    }
  }
}

function closeSocket(ws: ViewerSocket, code: number, reason: string) {
  if (ws.data.state === 'closed') return
  ws.data.state = 'closed'
  if (ws.data.timer) clearTimeout(ws.data.timer)
  ws.close(code, reason)
}

/** Origin must be this service itself: the page's own host, or BASE_URL's origin behind a proxy. */
export function sameOrigin(req: Request, baseUrl: string): boolean {
  const origin = req.headers.get('origin')
  if (!origin) return false
  let o: URL
  try {
    o = new URL(origin)
  } catch {
    return false
  }
  if (o.protocol !== 'http:' && o.protocol !== 'https:') return false
  if (o.origin === new URL(baseUrl).origin) return true
  const host = (req.headers.get('host') ?? new URL(req.url).host).toLowerCase()
  return o.host === host
}

/** The relays this process runs: one per audit with sockets open here, started once. */
class Relays {
  private readonly relays = new Map<string, Promise<AuditRelay>>()

  constructor(private readonly deps: { pubsub: PubSub; kv: KeyValue; log: Logger }) {}

  private relayFor(auditId: string): Promise<AuditRelay> {
    let p = this.relays.get(auditId)
    if (!p) {
      const relay = new AuditRelay(auditId, this.deps, () => this.relays.delete(auditId))
      p = relay.start().then(() => relay)
      p.catch(() => this.relays.delete(auditId))
      this.relays.set(auditId, p)
    }
    return p
  }

  /** The audit's running relay; null when none could start. */
  async live(auditId: string): Promise<AuditRelay | null> {
    // A relay found stopping (its last socket just left) is replaced by a fresh one.
    let relay: AuditRelay | null = null
    for (let i = 0; i < 3 && (!relay || relay.stopped); i++) relay = await this.relayFor(auditId).catch(() => null)
    return relay && !relay.stopped ? relay : null
  }
}

/** A socket's token arrived: it is checked, and a valid one makes the socket live on the audit's relay. */
async function admit(ws: ViewerSocket, token: string, c: { kv: KeyValue; log: Logger; relays: Relays }) {
  const { kv, log } = c
  const { auditId } = ws.data
  const state = await viewerTokenState(kv, auditId, token).catch(() => 'unavailable' as const)
  if (ws.data.state !== 'checking') return
  if (state === 'ended') return closeSocket(ws, CLOSE_ENDED, ENDED_REASON)
  if (state === 'invalid') {
    log.info('viewer link refused', { auditId })
    return closeSocket(ws, CLOSE_POLICY, INVALID_REASON)
  }
  if (state === 'unavailable') return closeSocket(ws, 1011, 'The live view is unavailable; try again shortly')
  const relay = await c.relays.live(auditId)
  if (!relay) return closeSocket(ws, 1011, 'The live view is unavailable; try again shortly')
  relay.sockets.add(ws)
  if (ws.data.state !== 'checking') return relay.remove(ws)
  ws.data.state = 'live'
  ws.data.relay = relay
  ws.send(JSON.stringify({ type: 'ready', auditId }))
  // The picture and the counts as they last were, at once: the next frame may be a moment away.
  const [progress, latest] = await Promise.all([
    kv.get(viewerKeys.progress(auditId)).catch(() => null),
    relay.latest ?? kv.get(viewerKeys.latest(auditId)).catch(() => null),
  ])
  if (ws.data.state !== 'live') return
  if (progress) ws.send(progress)
  if (latest) ws.send(latest)
  log.info('viewer connected', { auditId })
  // endViewer may have run between the check and the subscription: its message would be missed.
  if (await isViewerEnded(kv, auditId).catch(() => false)) relay.end()
}

/**
 * The viewer sockets' limits, fixed when the server is made (server/api-server.ts binds it before the viewer
 * exists): only the token ever comes from the client.
 */
export const VIEWER_SOCKET_LIMITS = { maxPayloadLength: 1_024, idleTimeout: 60, sendPings: true } as const

/** The sockets' life: the token first (within TOKEN_WAIT_MS), then only a viewer's few requests. */
function socketHandler(onToken: (ws: ViewerSocket, token: string) => Promise<void>): WebSocketHandler<ViewerSocketData> {
  return {
    ...VIEWER_SOCKET_LIMITS,
    open(ws) {
      ws.data.timer = setTimeout(() => closeSocket(ws, CLOSE_POLICY, 'No viewer token was sent'), TOKEN_WAIT_MS)
    },
    message(ws, message) {
      // Read-only: after the token, the page is never touched. A viewer may only choose which lane it follows
      // and ask for lighter frames (focus:N, focus:auto, quality:low, quality:normal); anything else is ignored.
      if (ws.data.state === 'live' && typeof message === 'string') {
        const now = performance.now()
        if (now - (ws.data.lastRequestAt ?? -Infinity) < REQUEST_GAP_MS) return
        ws.data.lastRequestAt = now
        return ws.data.relay?.request(message)
      }
      if (ws.data.state !== 'awaiting-token') return
      if (ws.data.timer) clearTimeout(ws.data.timer)
      ws.data.timer = null
      ws.data.state = 'checking'
      void onToken(ws, typeof message === 'string' ? message : '')
    },
    close(ws) {
      ws.data.state = 'closed'
      if (ws.data.timer) clearTimeout(ws.data.timer)
      ws.data.relay?.remove(ws)
      ws.data.relay = null
    },
  }
}

export function createViewerSockets(deps: { config: Config; pubsub: PubSub; kv: KeyValue; log: Logger }) {
  const { config, pubsub, kv } = deps
  const log = deps.log.child({ component: 'viewer' })
  const rules = hostRules(config)
  const relays = new Relays({ pubsub, kv, log })

  return {
    websocket: socketHandler((ws, token) => admit(ws, token, { kv, log, relays })),
    /**
     * For Bun.serve's fetch: undefined when the request is not for a viewer socket (the app handles it),
     * a Response when it is refused, or 'upgraded' when the socket is open.
     */
    upgrade(req: Request, server: Server<ViewerSocketData>, path = new URL(req.url).pathname): Response | 'upgraded' | undefined {
      const m = WS_PATH.exec(path)
      if (!m) return undefined
      // Audit ids are plain [A-Za-z0-9_]: nothing to decode, and a malformed escape (%ZZ) is simply not one.
      const auditId = m[1]!
      const refused = rules.check(req)
      if (refused) return refused
      if (!isViewerAuditId(auditId)) return new Response('Not found\n', { status: 404 })
      if (req.method !== 'GET' || req.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
        return new Response('WebSocket upgrade required\n', { status: 426, headers: { upgrade: 'websocket' } })
      }
      // Against cross-site WebSocket hijacking and DNS rebinding: only the viewer page itself may connect.
      if (!sameOrigin(req, config.baseUrl)) return new Response('Origin not allowed\n', { status: 403 })
      const ok = server.upgrade(req, { data: { auditId, state: 'awaiting-token', timer: null, relay: null } })
      return ok ? 'upgraded' : new Response('WebSocket upgrade failed\n', { status: 400 })
    },
  }
}

export type ViewerSockets = ReturnType<typeof createViewerSockets>
