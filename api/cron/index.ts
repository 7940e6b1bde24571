// Internal routes: POST /api/cron/{expire,recover,monitors}, called by a scheduler (Kubernetes
// CronJobs in production). Rules enforced, in this order:
//   - with CRON_SECRET empty the routes do not exist for anyone: 404, whatever the request (a deployment
//     that set no secret must not expose jobs an anonymous caller could trigger);
//   - `Authorization: Bearer <CRON_SECRET>` is required, compared in constant time over SHA-256 digests
//     (equal lengths, so neither the secret's content nor its length leaks through timing): 401 otherwise;
//   - only POST runs a job (405 otherwise: a job changes state, and GETs get prefetched and retried);
//   - an unknown job is 404; a job that fails or overruns its deadline is 503 with Retry-After.
// The body is never read (jobs take no input), and nothing here sends CORS headers: no browser calls these.
import { createHash, timingSafeEqual } from 'node:crypto'
import Elysia from 'elysia'
import { requestBodies } from '../http/body.ts'
import type { Services } from '../services.ts'
import { CRON_JOBS, CronJobError, CronService, isCronJob } from './service.ts'
import { errorMessage } from '../../shared/errors.ts'

const HEADERS = { 'cache-control': 'no-store' }
const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { ...HEADERS, ...extra } })

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/** True when the request carries the secret as a bearer token. */
export function hasCronSecret(req: Request, expected: Buffer): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.get('authorization') ?? '')
  return m !== null && timingSafeEqual(digest(m[1]!), expected)
}

export function cronRoutes(services: Pick<Services, 'config' | 'db' | 'infra' | 'log' | 'monitors'>) {
  const secret = services.config.CRON_SECRET
  const expected = secret ? digest(secret) : null
  const service = new CronService(services)
  const log = services.log.child({ component: 'cron' })

  return new Elysia({ name: 'cron' }).use(requestBodies).all(
    '/api/cron/*',
    async ({ request }) => {
      if (!expected) return json(404, { error: 'not_found', message: 'Not found.' })
      if (!hasCronSecret(request, expected)) {
        return json(
          401,
          { error: 'unauthorized', message: 'Send the cron secret as Authorization: Bearer <CRON_SECRET>.' },
          { 'www-authenticate': 'Bearer realm="cron"' },
        )
      }
      if (request.method !== 'POST') {
        return json(405, { error: 'method_not_allowed', message: 'Cron jobs run on POST.' }, { allow: 'POST' })
      }
      const job = new URL(request.url).pathname.slice('/api/cron/'.length)
      if (!isCronJob(job)) return json(404, { error: 'unknown_job', message: `Jobs: ${CRON_JOBS.join(', ')}.`, jobs: CRON_JOBS })
      try {
        return json(200, await service.run(job))
      } catch (e) {
        const kind = e instanceof CronJobError ? e.kind : 'failed'
        log.error('cron job did not finish', { job, kind, error: errorMessage(e) })
        const message =
          kind === 'timeout'
            ? 'The job overran its deadline; it may still be finishing. The next run picks up what is left.'
            : 'The job failed (details in the service log); what it finished stays done, and the next run goes on.'
        return json(503, { error: kind === 'timeout' ? 'job_timeout' : 'job_failed', job, message }, { 'retry-after': '60' })
      }
    },
    { noBody: true },
  )
}
