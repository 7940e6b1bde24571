// `bun server/cron-caller.ts`: calls the service's periodic jobs (POST /api/cron/{expire,recover,monitors}
// with CRON_SECRET) every CRON_EVERY_S seconds, for docker-compose.yml, which has no scheduler. Stops on
// SIGTERM. `bun server/cron-caller.ts --once JOB` calls one job once and exits 0 when it answered 200 (the
// CronJobs of k8s/base).
// Settings: CronCallerSchema in shared/config.ts (API_URL, CRON_SECRET, CRON_EVERY_S).
import { CronCallerSchema, loadToolConfigOrExit } from '../shared/config.ts'

const settings = loadToolConfigOrExit(CronCallerSchema)
const apiUrl = settings.API_URL.replace(/\/+$/, '')
const secret = settings.CRON_SECRET
const everyMs = settings.CRON_EVERY_S * 1000
const JOBS = ['recover', 'expire', 'monitors']

async function call(job: string): Promise<number | string> {
  const res = await fetch(`${apiUrl}/api/cron/${job}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}` },
    signal: AbortSignal.timeout(120_000),
  }).catch((e: Error) => e)
  if (res instanceof Error) return res.message
  await res.body?.cancel()
  return res.status
}

const once = process.argv.indexOf('--once')
if (once >= 0) {
  const job = process.argv[once + 1] ?? ''
  if (!JOBS.includes(job)) {
    console.error(`--once takes one of ${JOBS.join(', ')}`)
    process.exit(2)
  }
  const status = await call(job)
  console.log(JSON.stringify({ msg: 'cron job called', job, status }))
  process.exit(status === 200 ? 0 : 1)
}

let stopping = false
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void (stopping = true))
// Bounded: a year of runs at the shortest period, then the container's restart policy starts it again.
for (let round = 0; round < 1_051_200 && !stopping; round++) {
  for (const job of JOBS) console.log(JSON.stringify({ msg: 'cron job called', job, status: await call(job) }))
  for (let waited = 0; waited < everyMs && !stopping; waited += 1000) await Bun.sleep(1000)
}
