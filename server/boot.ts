// Starts what this process's ROLE asks for: the HTTP api, the crawler workers, or both (the embedded
// default). Used by the entry points and by tests, which boot real services on port 0. The steps, in order:
//   listenApi       the api's port, bound first: on port 0 the service's URL is the port it got (withOwnUrl)
//   openStores      the database and the infra (the embedded default holds DATA_DIR first)
//   embeddedExtras  the embedded default only: local key, admin channel, local sign-in, cron (embedded.ts)
//   startApi        the app, handed to that server (api-server.ts)
//   startCrawler    browsers and workers, with a health port of their own on a crawler-only process
// Stopping undoes them in the same order: stop taking work first (admin channel, api, then workers hand
// back jobs), then close the stores and let go of DATA_DIR. A step that fails stops what was started.
import type { Services } from '../api/services.ts'
import type { Config } from '../shared/config.ts'
import { type Database, openDatabase } from '../shared/db/index.ts'
import { errorMessage } from '../shared/errors.ts'
import { openInfra } from '../shared/infra/index.ts'
import type { Infra } from '../shared/infra/types.ts'
import { healthResponse, type Probe, readiness } from '../shared/lib/health.ts'
import type { Logger } from '../shared/lib/log.ts'
import pkg from '../package.json' with { type: 'json' }
import type { ApiListener, HealthProbe } from './api-server.ts'
import { type EmbeddedExtras, embeddedConfig, holdEmbeddedDataDir, startEmbeddedExtras } from './embedded.ts'
import { listenOrExplain } from './port-in-use.ts'

export interface Running {
  /**
   * The api's services; null in a crawler-only process on a database (production's crawler), which never
   * loads the api's modules (about 24 MB of its resident set at rest: the app, MCP, OAuth, reports).
   */
  services: Services | null
  /** Where the api listens, when this process runs it. */
  url: string | null
  port: number | null
  /** The embedded default's local identity provider and its development user, when one was started. */
  localSignIn: EmbeddedExtras['localSignIn']
  /** The embedded default's local API key (kept in DATA_DIR/local-api-key), which the local sign-in user's account owns. */
  localKey: EmbeddedExtras['localKey'] | null
  /** The embedded default's admin channel (DATA_DIR/admin.sock), when it listens. */
  adminSocket: string | null
  /** Where /healthz and /readyz answer: the api's port, or a crawler's own (HEALTH_PORT). */
  healthPort: number | null
  stop(): Promise<void>
}

export async function boot(given: Config, log: Logger): Promise<Running> {
  const embedded = !given.DATABASE_URL
  const withApi = given.ROLE !== 'crawler'
  const apiServer = withApi ? await import('./api-server.ts') : null
  // The api's port first: on port 0 its URL is known only once it is bound, and everything made below
  // writes links with it.
  const listener = apiServer?.listenApi(given, log) ?? null
  let stores: Stores
  let config: Config
  try {
    config = withOwnUrl(embedded ? embeddedConfig(given) : given, listener)
    stores = await openStores(config, log)
  } catch (e) {
    listener?.stop()
    throw e
  }
  const life = lifecycle(config, log, stores)
  try {
    // The embedded default's extras (its local key, sign-in and admin channel) need them even beside a crawler.
    const services = withApi || embedded ? (await import('../api/services.ts')).createServices(config, stores.db, stores.infra, log) : null
    const extras = services && embedded ? await startEmbeddedExtras(services, life.onStop, withApi) : null
    if (apiServer && listener && services) apiServer.startApi(services, extras?.appOptions ?? {}, life.health, life.onStop, listener)
    const crawlerHealth = config.ROLE !== 'api' ? await startCrawlerRole(config, log, stores, life) : null
    return {
      services,
      url: listener ? urlOn(config.HOST, listener.port) : null,
      port: listener?.port ?? null,
      localSignIn: extras?.localSignIn ?? null,
      localKey: extras?.localKey ?? null,
      adminSocket: extras?.adminSocket ?? null,
      healthPort: crawlerHealth?.port ?? listener?.port ?? null,
      stop: life.stop,
    }
  } catch (e) {
    await life.stop()
    // Drained by the api's own stop step once it started; closed here if the start failed before.
    listener?.stop()
    throw e
  }
}

/**
 * The configuration with the service's own URL: BASE_URL when set, else http://localhost:PORT (config.ts);
 * with PORT=0 the URL of the port it got, on HOST when that is one address (localhost when it is all of them).
 */
export function withOwnUrl(config: Config, listener: Pick<ApiListener, 'port'> | null): Config {
  if (config.BASE_URL || config.PORT !== 0 || !listener) return config
  const everyAddress = ['', '0.0.0.0', '::'].includes(config.HOST)
  return { ...config, baseUrl: urlOn(everyAddress ? 'localhost' : config.HOST, listener.port) }
}

/** http://HOST:PORT, an IPv6 address in brackets. */
const urlOn = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`

interface Stores {
  db: Database
  infra: Infra
  /** Closes the infra and the database, then lets go of DATA_DIR. */
  close(): Promise<void>
}

/** The database and the infra this process runs on; when one fails to open, nothing is left open or held. */
async function openStores(config: Config, log: Logger): Promise<Stores> {
  const release = config.DATABASE_URL ? () => {} : holdEmbeddedDataDir(config.DATA_DIR)
  let db: Database
  try {
    db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, log })
  } catch (e) {
    release()
    throw e
  }
  let infra: Infra
  try {
    infra = await openInfra(config, log)
  } catch (e) {
    await db.close()
    release()
    throw e
  }
  return {
    db,
    infra,
    async close() {
      await infra.close().catch(() => {})
      await db.close().catch(() => {})
      release()
    },
  }
}

interface Lifecycle {
  /** Adds a step to undo at stop, after those added before it. */
  onStop(step: () => Promise<void>): void
  /** Adds what readiness waits for. */
  addProbe(probe: Probe): void
  health: HealthProbe
  stop(): Promise<void>
}

/** What this process undoes when it stops, and what /readyz checks: the stores, and a crawler's browser. */
function lifecycle(config: Config, log: Logger, stores: Stores): Lifecycle {
  const stops: Array<() => Promise<void>> = []
  const probes: Probe[] = [
    { name: 'database', check: () => stores.db.sql`SELECT 1` },
    { name: config.REDIS_URL ? 'redis' : 'store', check: () => stores.infra.kv.get('health:probe') },
  ]
  let stopping = false
  return {
    onStop: (step) => void stops.push(step),
    addProbe: (probe) => void probes.push(probe),
    health: (path) =>
      healthResponse(
        path,
        () => readiness(probes, () => stopping),
        { role: config.ROLE, version: pkg.version },
        (checks) => log.warn('not ready', { checks }),
      ),
    async stop() {
      // Not ready from now on: /readyz answers 503, so a load balancer sends nothing new while this drains.
      stopping = true
      for (const s of stops) await s().catch((e) => log.warn('stop step failed', { error: errorMessage(e) }))
      await stores.close()
    },
  }
}

/**
 * The crawler's browsers and workers; browsers are loaded here, never by the api role. A crawler-only
 * process has no api, so its probes get a small port of their own, bound before the browser starts (a taken
 * HEALTH_PORT is said at once; until the crawler runs, /readyz says its browser is not ready) and the last
 * thing to stop: it says "not ready" while the crawler hands its work back.
 */
async function startCrawlerRole(config: Config, log: Logger, stores: Stores, life: Lifecycle): Promise<Bun.Server<undefined> | null> {
  const { startCrawler } = await import('../crawler/start.ts')
  let crawler: Awaited<ReturnType<typeof startCrawler>> | null = null
  life.addProbe({ name: 'browser', check: () => (crawler ? crawler.browser.check() : Promise.reject(new Error('starting'))) })
  const server = config.ROLE === 'crawler' ? listenHealth(config, life) : null
  try {
    crawler = await startCrawler({ config, db: stores.db, infra: stores.infra, log })
  } catch (e) {
    server?.stop(true)
    throw e
  }
  const started = crawler
  life.onStop(() => started.stop())
  if (server) {
    life.onStop(async () => void server.stop(true))
    log.info('crawler health server listening', { port: server.port })
  }
  return server
}

/** A crawler-only process's /healthz and /readyz on HEALTH_PORT (a taken port: PortInUse). */
function listenHealth(config: Config, life: Lifecycle): Bun.Server<undefined> {
  return listenOrExplain('HEALTH_PORT', config.HEALTH_HOST, config.HEALTH_PORT, () =>
    Bun.serve({
      hostname: config.HEALTH_HOST,
      port: config.HEALTH_PORT,
      development: false,
      fetch: (req) =>
        (req.method === 'GET' && URL.canParse(req.url) ? life.health(new URL(req.url).pathname) : null) ??
        new Response('Not found\n', { status: 404 }),
    }),
  )
}
