// Starts what this process's ROLE asks for: the HTTP api, the crawler workers, or both (the embedded
// default). Used by the entry points and by tests, which boot real services on port 0.
import type { Config } from '../shared/config.ts'
import { openDatabase } from '../shared/db/index.ts'
import type { Logger } from '../shared/log.ts'
import { openInfra } from '../shared/infra/index.ts'
import type { Infra } from '../shared/infra/types.ts'
import { createApp, deliberateError, type AppOptions } from '../api/app.ts'
import { rememberPeer } from '../api/http/client-ip.ts'
import { unroutable } from '../api/http/host.ts'
import { createViewerSockets, type ViewerSocketData } from '../api/viewer/service.ts'
import { createServices, type Services } from '../api/services.ts'
import { localSignInPassword } from './local-secrets.ts'

export interface Running {
  services: Services
  /** Where the api listens, when this process runs it. */
  url: string | null
  port: number | null
  /** The embedded default's local identity provider and its development user, when one was started. */
  localSignIn: { issuer: string; user: string; password: string; passwordFile: string | null } | null
  stop(): Promise<void>
}

export async function boot(config: Config, log: Logger): Promise<Running> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, log })
  let infra: Infra
  try {
    infra = await openInfra(config, log)
  } catch (e) {
    await db.close()
    throw e
  }
  const services = createServices(config, db, infra, log)
  const stops: Array<() => Promise<void>> = []

  let server: Bun.Server<ViewerSocketData> | null = null
  let localSignIn: Running['localSignIn'] = null
  if (config.ROLE !== 'crawler') {
    const appOptions: AppOptions = {}
    // The embedded default signs people in at a real local OpenID provider; deployments with a
    // database of their own name their provider in OIDC_ISSUER (or have no sign-in).
    if (!config.OIDC_ISSUER && !config.DATABASE_URL) {
      const { startEmbeddedSignIn } = await import('../api/signin/local-idp.ts')
      // The development user's password stays the same across restarts (saved under DATA_DIR).
      const saved = localSignInPassword(config.DATA_DIR, config.LOCAL_IDP_PASSWORD)
      const embedded = await startEmbeddedSignIn({ ...config, LOCAL_IDP_PASSWORD: saved.password })
      stops.push(() => embedded.idp.stop())
      appOptions.oidc = embedded.oidc
      localSignIn = { issuer: embedded.idp.issuer, user: embedded.user, password: embedded.password, passwordFile: saved.path }
    }
    const app = createApp(services, appOptions)
    // No scheduler calls /api/cron/* in the embedded default: it runs those jobs itself, every 5 minutes.
    if (!config.DATABASE_URL) {
      const { startCronSchedule } = await import('../api/cron/service.ts')
      const cron = startCronSchedule(services)
      stops.push(() => cron.stop())
    }
    // Live-viewer sockets are upgraded here: Elysia's .ws() works only with app.listen.
    const viewer = createViewerSockets({ config, pubsub: infra.pubsub, kv: infra.kv, log })
    server = Bun.serve({
      hostname: config.HOST,
      port: config.PORT,
      fetch: (req, srv) => {
        if (!URL.canParse(req.url)) return unroutable()
        rememberPeer(req, srv.requestIP(req)?.address)
        const ws = viewer.upgrade(req, srv)
        return ws === 'upgraded' ? undefined : (ws ?? app.handle(req))
      },
      websocket: viewer.websocket,
      idleTimeout: 120,
      // Never Bun's development error page (paths, stack, source lines): an error that escapes the app and
      // the viewer is logged and answered with a bare 500.
      development: false,
      error: (e) => deliberateError('UNKNOWN', e, null, log),
    })
    stops.push(async () => server?.stop(true))
  }

  if (config.ROLE !== 'api') {
    // Browsers live only in the crawler: loaded here, never by the api role.
    const { startCrawler } = await import('../crawler/start.ts')
    const crawler = await startCrawler({ config, db, infra, log })
    stops.push(() => crawler.stop())
  }

  return {
    services,
    url: server ? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${server.port}` : null,
    port: server?.port ?? null,
    localSignIn,
    async stop() {
      // Stop taking work first (api, then workers hand back jobs), then close the stores.
      for (const s of stops) await s().catch((e) => log.warn('stop step failed', { error: (e as Error).message }))
      await infra.close().catch(() => {})
      await db.close().catch(() => {})
    },
  }
}
