// Operator commands. `bun run admin create-key [--plan free|launch|scale] [--name NAME]` prints a new
// act_ key for a new account of that plan; `bun run admin incident open|resolve|list` manages the incidents
// of the status endpoint (server/admin-incidents.ts). It talks to the database of this environment
// (DATABASE_URL, or the embedded one under DATA_DIR: stop the embedded service first, PGlite has one user).
import { parseArgs } from 'node:util'
import { loadConfigOrExit } from '../shared/config.ts'
import { createAccount, createApiKey, PLANS, type Plan } from '../shared/db/accounts.ts'
import { openDatabase } from '../shared/db/index.ts'
import { INCIDENT_USAGE, incidentCommand } from './admin-incidents.ts'

const USAGE = [
  `usage: bun run admin create-key [--plan free|launch|scale] [--name NAME]`,
  ...INCIDENT_USAGE.map((u) => `       ${u}`),
].join('\n')

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'incident') return incidentCommand(rest, USAGE)
  if (command !== 'create-key') {
    console.error(command ? `unknown command ${JSON.stringify(command)}\n${USAGE}` : USAGE)
    return 2
  }
  let values: { plan: string; name: string }
  try {
    ;({ values } = parseArgs({ args: rest, options: { plan: { type: 'string', default: 'free' }, name: { type: 'string', default: '' } } }))
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`)
    return 2
  }
  if (!PLANS.includes(values.plan as Plan)) {
    console.error(`--plan must be one of ${PLANS.join(', ')} (got ${JSON.stringify(values.plan)})`)
    return 2
  }
  const config = loadConfigOrExit()
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR })
  try {
    const account = await createAccount(db.sql, values.plan as Plan, values.name ?? '')
    const key = await createApiKey(db.sql, account.id, 'admin')
    console.error(`account ${account.id} (plan ${account.plan}); the key below is shown once:`)
    console.log(key.plaintext)
    return 0
  } finally {
    await db.close()
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)))
