// `bun server/migrate.ts`: applies the database migrations and exits (0 done, 1 failed). Run once before new
// api and crawler pods roll out (k8s/base/migrate-job.yaml); every process also applies what is missing when
// it starts, one at a time across replicas (an advisory lock), so this only moves the wait out of start-up.
import { loadConfigOrExit } from '../shared/config.ts'
import { openDatabase } from '../shared/db/index.ts'
import { createLogger } from '../shared/lib/log.ts'
import { errorMessage } from '../shared/errors.ts'

const config = loadConfigOrExit()
const log = createLogger(config.LOG_LEVEL, { role: 'migrate' })
if (!config.DATABASE_URL) {
  console.error('DATABASE_URL is not set: the embedded database migrates itself when the service starts.')
  process.exit(2)
}
try {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, log, max: 1 })
  await db.close()
  log.info('migrations done')
} catch (e) {
  log.error('migrations failed', { error: errorMessage(e) })
  process.exit(1)
}
