// Operator commands. `bun run admin create-key [--plan free|launch|scale] [--name NAME]` (or ./scripts/admin
// create-key ...) prints a new act_ key for a new account of that plan, and says that its scans are not the
// local user's; `create-key --account local` prints a key of the embedded default's local account, whose
// scans are on the local dashboard; `bun run admin incident open|resolve|list` manages the incidents of the
// status endpoint (server/admin-incidents.ts). `--help` prints the usage.
//
// With DATABASE_URL it talks to that database. Without it, the database is the embedded one under DATA_DIR,
// which only one process may hold: when the embedded service is running, the command is run by the service
// itself, sent over its admin channel (a Unix socket under DATA_DIR, server/admin-channel.ts), so a key it
// prints is in the database the service reads. When the service holds the database but does not answer on
// that channel, the command refuses and says so; it never prints a key written where the service cannot see it.
import { parseArgs } from 'node:util'
import { loadConfigOrExit } from '../shared/config.ts'
import { createAccount, createApiKey, LOCAL_ACCOUNT_NAME, PLANS, type Plan } from '../shared/db/accounts.ts'
import { type Database, openDatabase, type Sql } from '../shared/db/index.ts'
import { type AdminIO, INCIDENT_USAGE, type IncidentCommand, parseIncident, runIncident } from './admin-incidents.ts'
import { type AdminAnswer, callAdminChannel } from './admin-channel.ts'
import { holdDataDir } from './data-dir-lock.ts'
import { errorMessage } from '../shared/errors.ts'

export const USAGE = [
  `usage: bun run admin create-key [--plan free|launch|scale] [--name NAME]   a key of a new account`,
  `       bun run admin create-key --account local [--name NAME]            a key of the local account (the dashboard's)`,
  ...INCIDENT_USAGE.map((u) => `       ${u}`),
  `       (./scripts/admin ... runs the same where bun is not on PATH)`,
].join('\n')

export type AdminCommand =
  | { kind: 'create-key'; plan: Plan; name: string; account: 'new' | 'local' }
  | { kind: 'incident'; incident: IncidentCommand }

const HELP = ['--help', '-h', 'help']

/** The command line, or what to print when it is not one: the usage asked for (exit 0), or a mistake (exit 2). */
export function parseCommand(argv: string[]): AdminCommand | { usage: string; code?: 0 } {
  const [command, ...rest] = argv
  if (command !== undefined && HELP.includes(command)) return { usage: USAGE, code: 0 }
  if (command === 'incident') {
    const incident = parseIncident(rest, USAGE)
    return 'usage' in incident ? incident : { kind: 'incident', incident }
  }
  if (command !== 'create-key') return { usage: command ? `unknown command ${JSON.stringify(command)}\n${USAGE}` : USAGE }
  if (rest.some((a) => HELP.includes(a))) return { usage: USAGE, code: 0 }
  let values: { plan?: string; name?: string; account?: string }
  try {
    const options = { plan: { type: 'string' }, name: { type: 'string', default: '' }, account: { type: 'string' } } as const
    ;({ values } = parseArgs({ args: rest, options }))
  } catch (e) {
    return { usage: `${errorMessage(e)}\n${USAGE}` }
  }
  if (values.account !== undefined && values.account !== LOCAL_ACCOUNT_NAME)
    return { usage: `--account takes only "local", the local account (got ${JSON.stringify(values.account)})` }
  if (values.account !== undefined && values.plan !== undefined)
    return { usage: '--account local and --plan do not go together: the local account keeps its own plan' }
  const plan = values.plan ?? 'free'
  if (!PLANS.includes(plan as Plan)) return { usage: `--plan must be one of ${PLANS.join(', ')} (got ${JSON.stringify(plan)})` }
  const name = (values.name ?? '').trim()
  if (name.length > 200 || [...name].some((c) => c < ' ' || c === '\x7f'))
    return { usage: '--name must be one line of at most 200 characters' }
  return { kind: 'create-key', plan: plan as Plan, name, account: values.account ? 'local' : 'new' }
}

/** Runs a parsed command against a database; the same code runs here and inside the running service. */
export async function runCommand(command: AdminCommand, sql: Sql, io: AdminIO): Promise<number> {
  if (command.kind === 'incident') return runIncident(command.incident, sql, io)
  if (command.account === 'local') return createLocalKey(sql, command.name, io)
  const account = await createAccount(sql, command.plan, command.name)
  const key = await createApiKey(sql, account.id, 'admin')
  io.err(`account ${account.id} (plan ${account.plan}), a new account; the key below is shown once.`)
  // The one surprise of this command: a new account is not the local user's, whose dashboard shows its own scans.
  io.err(
    `What this key scans is not on the local user's dashboard. For a key of the local account: ` +
      `create-key --account local, or the dashboard's Settings → Agents and MCP → Create key.`,
  )
  io.out(key.plaintext)
  return 0
}

/** A key of the local account (made by the embedded default's first start); 1 when this database has none. */
async function createLocalKey(sql: Sql, name: string, io: AdminIO): Promise<number> {
  const [local] = await sql<{ id: string }[]>`SELECT id FROM accounts WHERE name = ${LOCAL_ACCOUNT_NAME} ORDER BY created_at LIMIT 1`
  if (!local) {
    io.err('This database has no local account: the embedded default makes it at its first start (./scripts/start).')
    return 1
  }
  const key = await createApiKey(sql, local.id, name || 'admin')
  io.err(`account ${local.id}, the local account: its scans are on the local dashboard. The key below is shown once:`)
  io.out(key.plaintext)
  return 0
}

/** A command line run inside the running service, for its admin channel: what to print, and the exit code. */
export async function answerArgv(argv: string[], sql: Sql): Promise<AdminAnswer> {
  const answer: AdminAnswer = { stdout: [], stderr: [], code: 2 }
  const command = parseCommand(argv)
  if ('usage' in command)
    return command.code === 0 ? { ...answer, stdout: [command.usage], code: 0 } : { ...answer, stderr: [command.usage] }
  answer.code = await runCommand(command, sql, { out: (l) => answer.stdout.push(l), err: (l) => answer.stderr.push(l) })
  return answer
}

const terminal: AdminIO = { out: (l) => console.log(l), err: (l) => console.error(l) }

export async function main(argv: string[]): Promise<number> {
  const command = parseCommand(argv)
  if ('usage' in command) {
    if (command.code === 0) console.log(command.usage)
    else console.error(command.usage)
    return command.code ?? 2
  }
  const config = loadConfigOrExit()
  let release: (() => void) | null = null
  if (!config.DATABASE_URL) {
    // The embedded database: the running service runs the command, or nobody holds it and we open it here.
    const sent = await callAdminChannel(config.DATA_DIR, argv)
    if (sent.kind === 'answered') {
      for (const l of sent.stderr) console.error(l)
      for (const l of sent.stdout) console.log(l)
      return sent.code
    }
    if (sent.kind === 'refused') {
      console.error(sent.message)
      return 1
    }
    const held = holdDataDir(config.DATA_DIR, 'admin')
    if (!held.ok) {
      console.error(held.message)
      return 1
    }
    release = held.release
  }
  let db: Database
  try {
    db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR })
  } catch (e) {
    release?.()
    console.error(`cannot open the database: ${errorMessage(e)}`)
    return 1
  }
  try {
    return await runCommand(command, db.sql, terminal)
  } finally {
    await db.close()
    release?.()
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)))
