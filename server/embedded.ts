// What only the embedded default (no DATABASE_URL: PGlite under DATA_DIR, one machine, one command) starts
// beside the api and the crawler: a secrets key and a lock of its own in DATA_DIR, the local API key, the
// admin channel, the local identity provider and its development user, and the cron schedule that a
// deployment's scheduler runs instead.
import type { AppOptions } from '../api/app.ts'
import type { Services } from '../api/services.ts'
import type { Config } from '../shared/config.ts'
import { errorMessage } from '../shared/errors.ts'
import { answerArgv } from './admin.ts'
import { serveAdminChannel } from './admin-channel.ts'
import { holdDataDir } from './data-dir-lock.ts'
import { keepLocalKey, linkLocalUser, localApiKey, localSecretsKey, localSignInPassword } from './local-secrets.ts'

/** DATA_DIR is held by another process (an admin command, or another service): start-up stops, and says so. */
export class DataDirInUse extends Error {}

export interface EmbeddedExtras {
  /** The local API key (kept in DATA_DIR/local-api-key), which the local sign-in user's account owns. */
  localKey: { plaintext: string; path: string; isNew: boolean }
  /** The admin channel's socket (DATA_DIR/admin.sock), when it listens. */
  adminSocket: string | null
  /** The local identity provider and its development user, when this process serves the api. */
  localSignIn: { issuer: string; user: string; password: string; passwordFile: string | null } | null
  /** What the api does differently here: sign-in at the local provider, a regenerated key kept in DATA_DIR. */
  appOptions: AppOptions
}

/** The embedded default keeps a secrets key of its own in DATA_DIR when none is configured. */
export function embeddedConfig(given: Config): Config {
  return given.SECRETS_KEY ? given : { ...given, SECRETS_KEY: localSecretsKey(given.DATA_DIR) }
}

/**
 * The embedded database has one user: DATA_DIR is held before it is opened, so an admin command or a second
 * service never writes a database this one does not see. Returns the function that lets it go.
 */
export function holdEmbeddedDataDir(dataDir: string): () => void {
  const held = holdDataDir(dataDir, 'service')
  if (!held.ok) throw new DataDirInUse(held.message)
  return held.release
}

/**
 * Starts the embedded default's extras; `onStop` gets what to undo, in the order it should be undone. The
 * local sign-in and the cron schedule belong to the api, so they start only when `withApi`.
 */
export async function startEmbeddedExtras(
  services: Services,
  onStop: (step: () => Promise<void>) => void,
  withApi: boolean,
): Promise<EmbeddedExtras> {
  const { config, db, log } = services
  // The local key, the same at every start until it is revoked or regenerated (then the new one is kept).
  const localKey = await localApiKey(db.sql, config.DATA_DIR)
  let adminSocket: string | null = null
  // Admin commands are run here, on the database this process holds (server/admin-channel.ts).
  try {
    const admin = await serveAdminChannel(config.DATA_DIR, (argv) => answerArgv(argv, db.sql), log)
    onStop(() => admin.stop())
    adminSocket = admin.path
  } catch (e) {
    log.warn('admin channel not started; admin commands are refused while this service runs', { error: errorMessage(e) })
  }
  const extras: EmbeddedExtras = { localKey, adminSocket, localSignIn: null, appOptions: {} }
  if (!withApi) return extras
  // A local key regenerated in settings replaces the one kept in DATA_DIR, so the next start uses it.
  extras.appOptions.keepLocalKey = (key) => keepLocalKey(config.DATA_DIR, key)
  // The embedded default signs people in at a real local OpenID provider, unless OIDC_ISSUER names one.
  if (!config.OIDC_ISSUER) await startLocalSignIn(services, extras, onStop)
  // No scheduler calls /api/cron/* in the embedded default: it runs those jobs itself, every 5 minutes.
  const { startCronSchedule } = await import('../api/cron/service.ts')
  const cron = startCronSchedule(services)
  onStop(() => cron.stop())
  return extras
}

/** The local identity provider, with a development user whose password stays the same across restarts. */
async function startLocalSignIn(services: Services, extras: EmbeddedExtras, onStop: (step: () => Promise<void>) => void) {
  const { config, db, log } = services
  const { startEmbeddedSignIn, LOCAL_IDENTITY_ISSUER, localSubject } = await import('../api/signin/local-idp.ts')
  // The development user's password stays the same across restarts (saved under DATA_DIR).
  const saved = localSignInPassword(config.DATA_DIR, config.LOCAL_IDP_PASSWORD)
  const embedded = await startEmbeddedSignIn({ ...config, LOCAL_IDP_PASSWORD: saved.password })
  onStop(() => embedded.idp.stop())
  extras.appOptions.oidc = embedded.oidc
  extras.localSignIn = { issuer: embedded.idp.issuer, user: embedded.user, password: embedded.password, passwordFile: saved.path }
  // One local identity: the sign-in user belongs to the local account, the one the local key is of, so
  // what an MCP client scans with the key shows on the dashboard.
  const linked = await linkLocalUser(db.sql, { issuer: LOCAL_IDENTITY_ISSUER, subject: localSubject(embedded.user), email: embedded.user })
  if (linked.previousAccountId) {
    log.info('local sign-in user moved to the local account', { from: linked.previousAccountId, to: linked.accountId })
  }
}
