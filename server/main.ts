// `bun run start`: the service. With no DATABASE_URL and no REDIS_URL it is the embedded default:
// PGlite under DATA_DIR, in-process queue, crawler workers in the same process.
import { type Config, loadConfigOrExit } from '../shared/config.ts'
import { errorMessage } from '../shared/errors.ts'
import { createLogger } from '../shared/lib/log.ts'
import { boot, type Running } from './boot.ts'
import { DataDirInUse } from './embedded.ts'
import { PortInUse } from './port-in-use.ts'

/** Starts the service; `overrides` fix settings an entry point decides (server/crawler.ts: ROLE=crawler). */
export async function runService(overrides: Partial<Record<'ROLE', Config['ROLE']>> = {}): Promise<void> {
  const config = loadConfigOrExit(overrides)
  const log = createLogger(config.LOG_LEVEL, { role: config.ROLE })
  let running: Running
  try {
    running = await boot(config, log)
  } catch (e) {
    // Another process holds the embedded database or the port: say which, and what to do, rather than a stack.
    if (!(e instanceof DataDirInUse || e instanceof PortInUse)) throw e
    console.error(`App Audit cannot start: ${e.message}`)
    process.exit(1)
  }

  // Before the banner: whoever waits for it (a supervisor, a test) may stop the service at once.
  let stopping = false
  const stop = async (code: number) => {
    if (stopping) return
    stopping = true
    // Audits in flight are handed back and scans finish within seconds; should a step hang, leave anyway
    // before the orchestrator's SIGKILL (30 s by default), so the exit is at least logged. What was not
    // handed back is taken over from the pending list.
    setTimeout(() => {
      log.error('shutdown took too long; exiting')
      process.exit(1)
    }, 25_000).unref()
    await running.stop().catch((e) => log.error('stop failed', { error: errorMessage(e) }))
    process.exit(code)
  }
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      if (!stopping) log.info('shutting down', { signal: sig })
      void stop(0)
    })
  }
  // An error nothing caught (a library's promise rejected with no handler, a throw in a callback) leaves the
  // process in a state nobody planned: it says so in one log line, stops as on SIGTERM (audits handed back)
  // and exits 1, for its supervisor to start it again.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    process.on(event, (e: unknown) => {
      log.error('unexpected error; stopping', { event, error: errorMessage(e), stack: e instanceof Error ? e.stack : undefined })
      void stop(1)
    })
  }
  // A turn of the event loop, so the handlers are in place before anyone can read the banner.
  await new Promise((resolve) => setImmediate(resolve))

  // Its own configuration: with PORT=0 and no BASE_URL, the URL is the one of the port it got (boot.ts).
  if (running.url && running.services) console.log(bannerLines(running.services.config, running).join('\n'))
}

/** What the banner says: where the service is, how to use it, and how to stop it. */
export function bannerLines(config: Config, running: Pick<Running, 'url' | 'localKey' | 'localSignIn'>): string[] {
  // The canonical base URL: OAuth issuer, resource and sign-in callback all use it, and strict MCP clients
  // compare them with the URL they were given.
  const base = config.baseUrl
  // Secrets are printed only to a person at a terminal: where stdout is collected (a log, CI, a
  // supervisor) the banner says where they are instead.
  const show = process.stdout.isTTY === true
  const lines = [`App Audit is running.`, `  base URL:     ${base}`, `  MCP endpoint: ${base}/api/mcp`]
  if (running.localKey) {
    // Embedded default: the local user's key, the same at every start until it is revoked or regenerated.
    const key = running.localKey
    const shown = show ? key.plaintext : `$(cat ${key.path})`
    lines.push(
      show ? `  API key:      ${key.plaintext}` : `  API key:      in ${key.path} (readable by its owner only)`,
      ``,
      `Try it:`,
      `  curl -s ${running.url}/api/mcp -H "Authorization: Bearer ${shown}" \\`,
      `    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\`,
      `    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_account","arguments":{}}}'`,
    )
  } else {
    // A deployment with its own database prints no key: say where keys come from.
    lines.push(`  API keys:     bun run admin create-key --plan launch${config.OIDC_ISSUER ? `, or the dashboard's Settings` : ''}`)
  }
  if (running.localSignIn) {
    const { issuer, user, password, passwordFile } = running.localSignIn
    lines.push(
      ``,
      `Dashboard:      ${config.baseUrl}/dashboard`,
      `  sign in at the local identity provider (${issuer}) as ${user}`,
      `  password:     ${show ? password : passwordFile ? `in ${passwordFile}` : 'as set in LOCAL_IDP_PASSWORD'}`,
    )
  } else if (!config.OIDC_ISSUER) {
    lines.push(`  dashboard:    off: no sign-in without OIDC_ISSUER (README, "Signing in"); MCP clients use a key`)
  }
  if (!running.localKey && !config.CRON_SECRET) {
    lines.push(`  cron jobs:    off: set CRON_SECRET and run a caller (bun server/cron-caller.ts; README, "Cron jobs")`)
  }
  // One way to stop it, said once: Ctrl-C (SIGINT) and SIGTERM both stop it cleanly, exit code 0.
  lines.push(``, `Stop it with Ctrl-C (or: kill ${process.pid}).`)
  return lines
}

if (import.meta.main) await runService()
