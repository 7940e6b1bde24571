// Starts what this process's ROLE asks for: the HTTP api, the crawler workers, or both (the embedded
// default). Used by the entry points and by tests, which boot real services on port 0.
import type { Config } from '../shared/config.ts'
import { openDatabase } from '../shared/db/index.ts'
import type { Logger } from '../shared/lib/log.ts'
import { openInfra } from '../shared/infra/index.ts'
import type { Infra } from '../shared/infra/types.ts'
import { createApp, deliberateError, type AppOptions } from '../api/app.ts'
import { rememberPeer } from '../api/http/client-ip.ts'
import { unroutable } from '../api/http/host.ts'
import { createViewerSockets, type ViewerSocketData } from '../api/viewer/service.ts'
import { createServices, type Services } from '../api/services.ts'
import { answerArgv } from './admin.ts'
import { type AdminChannel, serveAdminChannel } from './admin-channel.ts'
import { holdDataDir } from './data-dir-lock.ts'
import { recoverDirectoryRuns } from '../shared/jobs/recovery.ts'
import { healthResponse, type Probe, readiness } from '../shared/lib/health.ts'
import pkg from '../package.json' with { type: 'json' }
import { keepLocalKey, linkLocalUser, localApiKey, localSecretsKey, localSignInPassword } from './local-secrets.ts'
import { errorMessage } from '../shared/errors.ts'

export interface Running {
  services: Services
  /** Where the api listens, when this process runs it. */
  url: string | null
  port: number | null
  /** The embedded default's local identity provider and its development user, when one was started. */
  localSignIn: { issuer: string; user: string; password: string; passwordFile: string | null } | null
  /** The embedded default's local API key (kept in DATA_DIR/local-api-key), which the local sign-in user's account owns. */
  localKey: { plaintext: string; path: string; isNew: boolean } | null
  /** The embedded default's admin channel (DATA_DIR/admin.sock), when it listens. */
  adminSocket: string | null
  /** Where /healthz and /readyz answer: the api's port, or a crawler's own (HEALTH_PORT). */
  healthPort: number | null
  stop(): Promise<void>
}

/** How long a stopping api lets requests in flight finish before it closes what is left. */
const DRAIN_MS = 10_000

/** DATA_DIR is held by another process (an admin command, or another service): start-up stops, and says so. */
export class DataDirInUse extends Error {}

export async function boot(given: Config, log: Logger): Promise<Running> {
  const embeddedDb = !given.DATABASE_URL
  // The embedded default keeps a secrets key of its own in DATA_DIR when none is configured.
  const config: Config = embeddedDb && !given.SECRETS_KEY ? { ...given, SECRETS_KEY: localSecretsKey(given.DATA_DIR) } : given
  // The embedded database has one user: hold DATA_DIR before opening it, so an admin command or a second
  // service never writes a database this one does not see.
  let releaseDataDir = () => {}
  if (embeddedDb) {
    const held = holdDataDir(config.DATA_DIR, 'service')
    if (!held.ok) throw new DataDirInUse(held.message)
    releaseDataDir = held.release
  }
  let db: Awaited<ReturnType<typeof openDatabase>>
  let infra: Infra
  try {
    db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, log })
  } catch (e) {
    releaseDataDir()
    throw e
  }
  try {
    infra = await openInfra(config, log)
  } catch (e) {
    await db.close()
    releaseDataDir()
    throw e
  }
  const services = createServices(config, db, infra, log)
  const stops: Array<() => Promise<void>> = []
  // Readiness: the stores this process needs, and (added below) the browser of a crawler.
  const probes: Probe[] = [
    { name: 'database', check: () => db.sql`SELECT 1` },
    { name: config.REDIS_URL ? 'redis' : 'store', check: () => infra.kv.get('health:probe') },
  ]
  const health = (path: string) =>
    healthResponse(
      path,
      () => readiness(probes, () => stopping),
      { role: config.ROLE, version: pkg.version },
      (checks) => log.warn('not ready', { checks }),
    )
  let healthServer: Bun.Server<undefined> | null = null

  let server: Bun.Server<ViewerSocketData> | null = null
  let localSignIn: Running['localSignIn'] = null
  let localKey: Running['localKey'] = null
  let admin: AdminChannel | null = null
  // Stop taking work first (admin channel, api, then workers hand back jobs), then close the stores and
  // let go of DATA_DIR. Also run when a step of start-up fails, so nothing is left half started.
  let stopping = false
  async function stop() {
    // Not ready from now on: /readyz answers 503, so a load balancer sends nothing new while this drains.
    stopping = true
    for (const s of stops) await s().catch((e) => log.warn('stop step failed', { error: errorMessage(e) }))
    await infra.close().catch(() => {})
    await db.close().catch(() => {})
    releaseDataDir()
  }
  try {
    if (embeddedDb) {
      // The local key, the same at every start until it is revoked or regenerated (then the new one is kept).
      localKey = await localApiKey(db.sql, config.DATA_DIR)
      // Admin commands are run here, on the database this process holds (server/admin-channel.ts).
      try {
        admin = await serveAdminChannel(config.DATA_DIR, (argv) => answerArgv(argv, db.sql), log)
        stops.push(() => admin!.stop())
      } catch (e) {
        log.warn('admin channel not started; admin commands are refused while this service runs', { error: errorMessage(e) })
      }
    }
    if (config.ROLE !== 'crawler') {
      const appOptions: AppOptions = {}
      // A local key regenerated in settings replaces the one kept in DATA_DIR, so the next start uses it.
      if (embeddedDb) appOptions.keepLocalKey = (key) => keepLocalKey(config.DATA_DIR, key)
      // The embedded default signs people in at a real local OpenID provider; deployments with a
      // database of their own name their provider in OIDC_ISSUER (or have no sign-in).
      if (!config.OIDC_ISSUER && !config.DATABASE_URL) {
        const { startEmbeddedSignIn, LOCAL_IDENTITY_ISSUER, localSubject } = await import('../api/signin/local-idp.ts')
        // The development user's password stays the same across restarts (saved under DATA_DIR).
        const saved = localSignInPassword(config.DATA_DIR, config.LOCAL_IDP_PASSWORD)
        const embedded = await startEmbeddedSignIn({ ...config, LOCAL_IDP_PASSWORD: saved.password })
        stops.push(() => embedded.idp.stop())
        appOptions.oidc = embedded.oidc
        localSignIn = { issuer: embedded.idp.issuer, user: embedded.user, password: embedded.password, passwordFile: saved.path }
        // One local identity: the sign-in user belongs to the local account, the one the local key is of, so
        // what an MCP client scans with the key shows on the dashboard.
        const linked = await linkLocalUser(db.sql, {
          issuer: LOCAL_IDENTITY_ISSUER,
          subject: localSubject(embedded.user),
          email: embedded.user,
        })
        if (linked.previousAccountId) {
          log.info('local sign-in user moved to the local account', { from: linked.previousAccountId, to: linked.accountId })
        }
      }
      const app = createApp(services, appOptions)
      // No scheduler calls /api/cron/* in the embedded default: it runs those jobs itself, every 5 minutes.
      if (!config.DATABASE_URL) {
        const { startCronSchedule } = await import('../api/cron/service.ts')
        const cron = startCronSchedule(services)
        stops.push(() => cron.stop())
      }
      // Directory runs are driven by api processes: light work (starting scans and audits, reading outcomes).
      // Runs this process's queue lost at a restart are dispatched again at once (the embedded queue lives in memory).
      const driving = new AbortController()
      const driver = services.directoryRuns.startDriver(driving.signal)
      stops.push(async () => {
        driving.abort()
        await driver
      })
      void recoverDirectoryRuns(db.sql, infra.queue, log, 0).catch((e) =>
        log.warn('directory run recovery failed', { error: errorMessage(e) }),
      )
      // Live-viewer sockets are upgraded here: Elysia's .ws() works only with app.listen.
      const viewer = createViewerSockets({ config, pubsub: infra.pubsub, kv: infra.kv, log })
      server = Bun.serve({
        hostname: config.HOST,
        port: config.PORT,
        fetch: (req, srv) => {
          // The target is parsed once here and handed on: every request pays for it.
          const url = URL.parse(req.url)
          if (!url) return unroutable()
          const probe = req.method === 'GET' ? health(url.pathname) : null
          if (probe) return probe
          // The MCP endpoint, the hot path, skips the router: the same rules and handler as the app's route
          // (its limits are per credential and account, never per address).
          if (url.pathname === '/api/mcp') return app.serveMcp(req, url)
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
      // Draining: no new connections, requests in flight may finish (a long stream is cut at the deadline).
      stops.push(async () => {
        const srv = server
        if (!srv) return
        void srv.stop(false)
        for (let waited = 0; waited < DRAIN_MS && srv.pendingRequests > 0; waited += 100) await Bun.sleep(100)
        await srv.stop(true)
      })
    }

    if (config.ROLE !== 'api') {
      // Browsers live only in the crawler: loaded here, never by the api role.
      const { startCrawler } = await import('../crawler/start.ts')
      const crawler = await startCrawler({ config, db, infra, log })
      stops.push(() => crawler.stop())
      probes.push({ name: 'browser', check: () => crawler.browser.check() })
      if (config.ROLE === 'crawler') {
        // A crawler has no api: its probes get a small port of their own.
        healthServer = Bun.serve({
          hostname: config.HEALTH_HOST,
          port: config.HEALTH_PORT,
          development: false,
          fetch: (req) =>
            (req.method === 'GET' && URL.canParse(req.url) ? health(new URL(req.url).pathname) : null) ??
            new Response('Not found\n', { status: 404 }),
        })
        const hs = healthServer
        // Last to go: it says "not ready" while the crawler hands its work back.
        stops.push(async () => void hs.stop(true))
        log.info('crawler health server listening', { port: hs.port })
      }
    }
  } catch (e) {
    await stop()
    throw e
  }

  return {
    services,
    url: server ? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${server.port}` : null,
    port: server?.port ?? null,
    localSignIn,
    localKey,
    adminSocket: admin?.path ?? null,
    healthPort: healthServer?.port ?? server?.port ?? null,
    stop,
  }
}
