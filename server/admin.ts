// Operator commands. `bun run admin create-key [--plan free|launch|scale] [--name NAME]` (or ./scripts/admin
// create-key ...) prints a new act_ key for a new account of that plan; `bun run admin incident
// open|resolve|list` manages the incidents of the status endpoint (server/admin-incidents.ts).
//
// With DATABASE_URL it talks to that database. Without it, the database is the embedded one under DATA_DIR,
// which only one process may hold: when the embedded service is running, the command is run by the service
// itself, sent over its admin channel (a Unix socket under DATA_DIR, server/admin-channel.ts), so a key it
// prints is in the database the service reads. When the service holds the database but does not answer on
// that channel, the command refuses and says so; it never prints a key written where the service cannot see it.
import { parseArgs } from 'node:util'
import { loadConfigOrExit } from '../shared/config.ts'
import { createAccount, createApiKey, PLANS, type Plan } from '../shared/db/accounts.ts'
import { type Database, openDatabase, type Sql } from '../shared/db/index.ts'
import { type AdminIO, INCIDENT_USAGE, type IncidentCommand, parseIncident, runIncident } from './admin-incidents.ts'
import { type AdminAnswer, callAdminChannel } from './admin-channel.ts'
import { holdDataDir } from './data-dir-lock.ts'
import { errorMessage } from '../shared/errors.ts'

export const USAGE = [
  `usage: bun run admin create-key [--plan free|launch|scale] [--name NAME]`,
  ...INCIDENT_USAGE.map((u) => `       ${u}`),
  `       (./scripts/admin ... runs the same where bun is not on PATH)`,
].join('\n')

export type AdminCommand = { kind: 'create-key'; plan: Plan; name: string } | { kind: 'incident'; incident: IncidentCommand }

/** The command line, or what to print (with exit code 2) when it is not one. */
export function parseCommand(argv: string[]): AdminCommand | { usage: string } {
  const [command, ...rest] = argv
  if (command === 'incident') {
    const incident = parseIncident(rest, USAGE)
    return 'usage' in incident ? incident : { kind: 'incident', incident }
  }
  if (command !== 'create-key') return { usage: command ? `unknown command ${JSON.stringify(command)}\n${USAGE}` : USAGE }
  let values: { plan?: string; name?: string }
  try {
    ;({ values } = parseArgs({ args: rest, options: { plan: { type: 'string', default: 'free' }, name: { type: 'string', default: '' } } }))
  } catch (e) {
    return { usage: `${errorMessage(e)}\n${USAGE}` }
  }
  if (!PLANS.includes(values.plan as Plan))
    return { usage: `--plan must be one of ${PLANS.join(', ')} (got ${JSON.stringify(values.plan)})` }
  const name = (values.name ?? '').trim()
  if (name.length > 200 || [...name].some((c) => c < ' ' || c === '\x7f'))
    return { usage: '--name must be one line of at most 200 characters' }
  return { kind: 'create-key', plan: values.plan as Plan, name }
}

/** Runs a parsed command against a database; the same code runs here and inside the running service. */
export async function runCommand(command: AdminCommand, sql: Sql, io: AdminIO): Promise<number> {
  if (command.kind === 'incident') return runIncident(command.incident, sql, io)
  const account = await createAccount(sql, command.plan, command.name)
  const key = await createApiKey(sql, account.id, 'admin')
  io.err(`account ${account.id} (plan ${account.plan}); the key below is shown once:`)
  io.out(key.plaintext)
  return 0
}

/** A command line run inside the running service, for its admin channel: what to print, and the exit code. */
export async function answerArgv(argv: string[], sql: Sql): Promise<AdminAnswer> {
  const answer: AdminAnswer = { stdout: [], stderr: [], code: 2 }
  const command = parseCommand(argv)
  if ('usage' in command) return { ...answer, stderr: [command.usage] }
  answer.code = await runCommand(command, sql, { out: (l) => answer.stdout.push(l), err: (l) => answer.stderr.push(l) })
  return answer
}

const terminal: AdminIO = { out: (l) => console.log(l), err: (l) => console.error(l) }

export async function main(argv: string[]): Promise<number> {
  const command = parseCommand(argv)
  if ('usage' in command) {
    console.error(command.usage)
    return 2
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
