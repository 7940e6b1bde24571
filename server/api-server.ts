// The api role: the Elysia app, the directory-run driver, and the one HTTP server in front of them. The
// server's fetch is the only router above the app, and the only mount of /api/mcp:
//   /healthz, /readyz (GET)       answered here, before anything else
//   /api/mcp                      straight to the MCP handler with the app's host rules (the hot path
//                                 skips the router; its limits are per credential and account, never
//                                 per address, so the peer's address is not looked up)
//   /viewer/... WebSocket         upgraded here (Elysia's .ws() works only with app.listen)
//   everything else               the Elysia app (api/app.ts)
import { type App, type AppOptions, createApp, deliberateError } from '../api/app.ts'
import { rememberPeer } from '../api/http/client-ip.ts'
import { unroutable } from '../api/http/host.ts'
import type { Services } from '../api/services.ts'
import { createViewerSockets, VIEWER_SOCKET_LIMITS, type ViewerSocketData } from '../api/viewer/service.ts'
import type { Config } from '../shared/config.ts'
import { errorMessage } from '../shared/errors.ts'
import type { Logger } from '../shared/lib/log.ts'
import { recoverDirectoryRuns } from '../shared/jobs/recovery.ts'
import { listenOrExplain } from './port-in-use.ts'

/** The answer to a health probe's path, or null for any other path. */
export type HealthProbe = (path: string) => Response | Promise<Response> | null

/** How long a stopping api lets requests in flight finish before it closes what is left. */
const DRAIN_MS = 10_000

type Fetch = (req: Request, server: Bun.Server<ViewerSocketData>) => Response | Promise<Response> | undefined

/**
 * The api's HTTP server, bound before the rest of the api is made: with PORT=0 and no BASE_URL the service
 * learns its own URL (its links, the OAuth issuer, the viewer's origin check) only from the port it got.
 * Until `serve` hands it the app, a request is answered 503 with Retry-After; a WebSocket is never upgraded.
 */
export interface ApiListener {
  port: number
  /** Hands the server the app's fetch and the viewer's socket handlers (its limits are the server's: VIEWER_SOCKET_LIMITS). */
  serve(handlers: { fetch: Fetch; websocket: Bun.WebSocketHandler<ViewerSocketData> }): Bun.Server<ViewerSocketData>
  /** Closes the server at once (a start that failed before serve). */
  stop(): void
}

export function listenApi(config: Pick<Config, 'HOST' | 'PORT'>, log: Logger): ApiListener {
  let fetch: Fetch | null = null
  let ws: Bun.WebSocketHandler<ViewerSocketData> | null = null
  const server = listenOrExplain('PORT', config.HOST, config.PORT, () =>
    Bun.serve<ViewerSocketData>({
      hostname: config.HOST,
      port: config.PORT,
      fetch: (req, srv) => (fetch ? fetch(req, srv) : starting()),
      websocket: {
        ...VIEWER_SOCKET_LIMITS,
        open: (s) => ws?.open?.(s),
        message: (s, m) => ws?.message?.(s, m),
        close: (s, code, reason) => ws?.close?.(s, code, reason),
        drain: (s) => ws?.drain?.(s),
      },
      idleTimeout: 120,
      // Never Bun's development error page (paths, stack, source lines): an error that escapes the app and
      // the viewer is logged and answered with a bare 500.
      development: false,
      error: (e) => deliberateError('UNKNOWN', e, null, log),
    }),
  )
  return {
    port: server.port ?? config.PORT,
    serve(handlers) {
      fetch = handlers.fetch
      ws = handlers.websocket
      return server
    },
    stop: () => void server.stop(true),
  }
}

const starting = () => new Response('Starting\n', { status: 503, headers: { 'retry-after': '1', 'content-type': 'text/plain' } })

/**
 * Starts the api on the listener's server; `onStop` gets what to undo (the driver, then the server draining),
 * in that order.
 */
export function startApi(
  services: Services,
  appOptions: AppOptions,
  health: HealthProbe,
  onStop: (step: () => Promise<void>) => void,
  listener: ApiListener,
): Bun.Server<ViewerSocketData> {
  const app = createApp(services, appOptions)
  driveDirectoryRuns(services, onStop)
  const server = serveHttp(services, app, health, listener)
  onStop(() => {
    // Calls that wait on a scan answer now (its scanId, to read later), while their connections still carry it.
    services.scans.stopWaiting()
    return drain(server)
  })
  return server
}

/**
 * Directory runs are driven by api processes: light work (starting scans and audits, reading outcomes).
 * Runs this process's queue lost at a restart are dispatched again at once (the embedded queue lives in memory).
 */
function driveDirectoryRuns(services: Services, onStop: (step: () => Promise<void>) => void): void {
  const { db, infra, log } = services
  const driving = new AbortController()
  const driver = services.directoryRuns.startDriver(driving.signal)
  onStop(async () => {
    driving.abort()
    await driver
  })
  void recoverDirectoryRuns(db.sql, infra.queue, log, 0).catch((e) => log.warn('directory run recovery failed', { error: errorMessage(e) }))
}

/** /api/mcp, with or without the trailing slash the router also took for it. */
const isMcpPath = (path: string) => path === '/api/mcp' || path === '/api/mcp/'

function serveHttp(services: Services, app: App, health: HealthProbe, listener: ApiListener): Bun.Server<ViewerSocketData> {
  const { config, infra, log } = services
  const viewer = createViewerSockets({ config, pubsub: infra.pubsub, kv: infra.kv, log })
  return listener.serve({
    fetch: (req, srv) => {
      // The target is parsed once here and handed on: every request pays for it.
      const url = URL.parse(req.url)
      if (!url) return unroutable()
      const probe = req.method === 'GET' ? health(url.pathname) : null
      if (probe) return probe
      if (isMcpPath(url.pathname)) return app.serveMcp(req, url)
      rememberPeer(req, srv.requestIP(req)?.address)
      const ws = viewer.upgrade(req, srv, url.pathname)
      return ws === 'upgraded' ? undefined : (ws ?? app.handle(req))
    },
    websocket: viewer.websocket,
  })
}

/** Draining: no new connections, requests in flight may finish (a long stream is cut at the deadline). */
async function drain(server: Bun.Server<ViewerSocketData>): Promise<void> {
  void server.stop(false)
  for (let waited = 0; waited < DRAIN_MS && server.pendingRequests > 0; waited += 100) await Bun.sleep(100)
  await server.stop(true)
}
