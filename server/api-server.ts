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
import { createViewerSockets, type ViewerSocketData } from '../api/viewer/service.ts'
import { errorMessage } from '../shared/errors.ts'
import { recoverDirectoryRuns } from '../shared/jobs/recovery.ts'

/** The answer to a health probe's path, or null for any other path. */
export type HealthProbe = (path: string) => Response | Promise<Response> | null

/** How long a stopping api lets requests in flight finish before it closes what is left. */
const DRAIN_MS = 10_000

/**
 * Starts the api on config.HOST:PORT; `onStop` gets what to undo (the driver, then the server draining), in
 * that order.
 */
export function startApi(
  services: Services,
  appOptions: AppOptions,
  health: HealthProbe,
  onStop: (step: () => Promise<void>) => void,
): Bun.Server<ViewerSocketData> {
  const app = createApp(services, appOptions)
  driveDirectoryRuns(services, onStop)
  const server = serveHttp(services, app, health)
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

function serveHttp(services: Services, app: App, health: HealthProbe): Bun.Server<ViewerSocketData> {
  const { config, infra, log } = services
  const viewer = createViewerSockets({ config, pubsub: infra.pubsub, kv: infra.kv, log })
  return Bun.serve({
    hostname: config.HOST,
    port: config.PORT,
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
    idleTimeout: 120,
    // Never Bun's development error page (paths, stack, source lines): an error that escapes the app and
    // the viewer is logged and answered with a bare 500.
    development: false,
    error: (e) => deliberateError('UNKNOWN', e, null, log),
  })
}

/** Draining: no new connections, requests in flight may finish (a long stream is cut at the deadline). */
async function drain(server: Bun.Server<ViewerSocketData>): Promise<void> {
  void server.stop(false)
  for (let waited = 0; waited < DRAIN_MS && server.pendingRequests > 0; waited += 100) await Bun.sleep(100)
  await server.stop(true)
}
