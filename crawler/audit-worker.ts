// The audit worker: takes 'audit' jobs from the queue, holds the audit through a Postgres lease, crawls
// the site storing every page as it arrives and keeping progress current (audit-crawl.ts), and builds
// the result at the end. Errors are sorted by consequence:
//   the start page could not be loaded (blocked, unreachable, nothing loaded) -> failed at once and refunded:
//     the caller got no audit at all, and audit_app already refused (uncharged) a start URL that did not
//     answer when it was asked, so this is a site that went away in between;
//   ours (browser crash, database hiccup)                      -> retried, failed and refunded after the limit;
//   shutdown (SIGTERM)                                         -> handed back uncounted; the next holder resumes.
import { hostname } from 'node:os'
import { auditChannel, type AuditEvent } from '../shared/protocol/audit-events.ts'
import { sleep } from '../shared/lib/async.ts'
import { buildAuditResult } from '../shared/report/audit-report.ts'
import { summaryOf } from '../shared/report/audit-summary.ts'
import {
  claimAudit,
  completeAudit,
  failAuditAndRefund,
  getAuditById,
  isFinished,
  listAuditPages,
  releaseAudit,
  renewAuditLease,
  type AuditRow,
} from '../shared/db/audits.ts'
import { newId } from '../shared/lib/ids.ts'
import type { Logger } from '../shared/lib/log.ts'
import type { Delivery } from '../shared/infra/types.ts'
import { endViewer } from '../shared/protocol/viewer.ts'
import { crawlAndStore } from './audit-crawl.ts'
import { runJob } from '../shared/jobs/job.ts'
import { publishViewerEnd, type ViewerFinal } from './viewer/progress.ts'
import type { RunningWorker, WorkerDeps } from './scan-worker.ts'
import { errorMessage } from '../shared/errors.ts'

export function startAuditWorker(deps: WorkerDeps): RunningWorker {
  const consumer = `${hostname()}-${process.pid}-audit-${newId('w').slice(2, 10)}`
  const log = deps.log.child({ worker: consumer })
  const stopping = new AbortController()
  const done = deps.infra.queue.consume('audit', (d) => handleAudit(deps, d, consumer, log, stopping.signal), {
    consumer,
    concurrency: deps.config.AUDIT_WORKER_CONCURRENCY,
    signal: stopping.signal,
  })
  log.info('audit worker started', { concurrency: deps.config.AUDIT_WORKER_CONCURRENCY, pagesInFlight: deps.config.AUDIT_CONCURRENCY })
  return {
    consumer,
    async stop() {
      // Stops taking jobs and aborts the crawls in flight, which hand their audits back.
      stopping.abort()
      await done
    },
  }
}

async function finish(deps: WorkerDeps, auditId: string, status: 'completed' | 'failed' | 'cancelled', final?: ViewerFinal) {
  const { infra } = deps
  await infra.pubsub.publish(auditChannel(auditId), JSON.stringify({ type: 'done', status } satisfies AuditEvent)).catch(() => {})
  // Viewers see the end state before their sockets close.
  await publishViewerEnd(infra, auditId, status, final)
  await endViewer(infra.pubsub, infra.kv, auditId).catch(() => {})
}

/** Fails the audit for a reason of ours and gives its charge back. */
async function failOurs(deps: WorkerDeps, auditId: string, message: string) {
  await failAuditAndRefund(deps.db.sql, auditId, { code: 'audit_failed', message })
  await finish(deps, auditId, 'failed')
}

/** Said in the failure of an audit whose start page could not be loaded: its charge came back at once. */
const START_PAGE_REFUND_NOTE = 'No page was audited, so the charge was refunded.'
/** How long an audit waits for the scan slots it set aside to close before it crawls anyway. */
const SLOTS_CLOSE_WAIT_MS = 5_000

/** Fails the audit because its start page could not be loaded, and gives its charge back at once. */
async function failStartPage(deps: WorkerDeps, auditId: string, code: string, reason: string) {
  await failAuditAndRefund(deps.db.sql, auditId, { code, message: `${reason} ${START_PAGE_REFUND_NOTE}` })
  await finish(deps, auditId, 'failed')
}

/** A claimed audit: its lease renewed in the background until cleanup. */
interface HeldAudit {
  audit: AuditRow
  crawlAbort: AbortController
  leaseLost(): boolean
  stopRenewing(): void
}

export async function handleAudit(
  deps: WorkerDeps,
  d: Delivery,
  consumer: string,
  parentLog: Logger,
  stopping: AbortSignal,
): Promise<void> {
  const { db, config } = deps
  const auditId = d.job.ref
  const log = parentLog.child({ auditId, delivery: d.deliveryCount })

  await runJob<AuditRow, HeldAudit>(
    d,
    {
      name: 'audit',
      givenUpNote: '; refunded',
      load: (ref) => getAuditById(db.sql, ref),
      isFinished: (audit) => isFinished(audit.status),
      claim: () => claimOrDrop(deps, d, consumer, log, stopping),
      run: async (held) => {
        // No scan page is kept open ahead while the audit crawls and is judged: its lanes get that memory and
        // CPU. The crawl starts once the slots have closed, and they are made again once the audit has ended
        // (either way round, their renderers and the lanes' added up to the crawl's peak, bench/crawl-throughput).
        const resumeWarm = deps.warm?.suspend()
        await deps.warm?.settled(SLOTS_CLOSE_WAIT_MS)
        try {
          await crawlToEnd(deps, d, held, consumer, log, stopping)
        } finally {
          resumeWarm?.()
        }
      },
      failOurs: (ref, message) => failOurs(deps, ref, message),
      // The crawl throws the target's faults only for its start page (crawler/audit/crawl.ts).
      failTarget: (ref, e) =>
        failStartPage(deps, ref, e.code, e.code === 'login_failed' ? e.message : `The start page could not be loaded: ${e.message}.`),
      beforeRetry: (ref) =>
        releaseAudit(db.sql, ref, consumer).then(
          () => {},
          () => {},
        ),
      cleanup: (held) => held.stopRenewing(),
    },
    { maxDeliveries: config.JOB_MAX_DELIVERIES, log },
  )
}

/**
 * Takes the audit's Postgres lease and keeps renewing it; null when another live holder runs it (the
 * delivery is then acked, or handed back uncounted on shutdown).
 */
async function claimOrDrop(deps: WorkerDeps, d: Delivery, consumer: string, log: Logger, stopping: AbortSignal): Promise<HeldAudit | null> {
  const { db, config } = deps
  const auditId = d.job.ref
  const leaseMs = config.JOB_CLAIM_IDLE_MS
  let claimed = await claimAudit(db.sql, auditId, consumer, leaseMs)
  if (!claimed) {
    // Someone holds a live lease: the previous holder may have just died (its lease runs out soon) or be
    // alive (a duplicate delivery). Wait out the lease once, bounded, then decide.
    const current = await getAuditById(db.sql, auditId)
    if (current && !isFinished(current.status) && current.leaseUntil) {
      const wait = Math.min(Math.max(0, current.leaseUntil.getTime() - Date.now()) + 250, leaseMs + 1_000)
      await sleep(wait, stopping)
      if (!stopping.aborted) claimed = await claimAudit(db.sql, auditId, consumer, leaseMs)
    }
    if (!claimed) {
      if (stopping.aborted) {
        await d.release({ countAttempt: false })
        return null
      }
      // A live holder runs it. Should it die, its lease expires and recovery dispatches the audit again.
      log.info('audit held by another live worker; dropping this delivery')
      await d.ack()
      return null
    }
  }

  const crawlAbort = new AbortController()
  let leaseLost = false
  const onStop = () => crawlAbort.abort()
  stopping.addEventListener('abort', onStop, { once: true })
  const lease = setInterval(
    () => {
      renewAuditLease(db.sql, auditId, consumer, leaseMs)
        .then((held) => {
          if (!held && !leaseLost) {
            leaseLost = true
            log.warn('audit lease lost; stopping this crawl')
            crawlAbort.abort()
          }
        })
        .catch((e) => log.warn('lease renewal failed', { error: errorMessage(e) }))
    },
    Math.max(200, Math.floor(leaseMs / 3)),
  )
  return {
    audit: claimed,
    crawlAbort,
    leaseLost: () => leaseLost,
    stopRenewing() {
      clearInterval(lease)
      stopping.removeEventListener('abort', onStop)
    },
  }
}

/** One attempt: crawl (resuming), then hand back on shutdown, or end the audit as its pages say. */
async function crawlToEnd(
  deps: WorkerDeps,
  d: Delivery,
  held: HeldAudit,
  consumer: string,
  log: Logger,
  stopping: AbortSignal,
): Promise<void> {
  const { db } = deps
  const { audit } = held
  const auditId = audit.id
  const outcome = await crawlAndStore(deps, audit, consumer, held.crawlAbort.signal, log)
  if (stopping.aborted && !held.leaseLost() && outcome.stoppedBy === 'aborted') {
    await releaseAudit(db.sql, auditId, consumer)
    await d.release({ countAttempt: false })
    log.info('audit handed back on shutdown', { pagesStored: outcome.progress.pagesScanned + outcome.progress.pagesFailed })
    return
  }
  if (held.leaseLost()) {
    // Cancelled while crawling: this holder is the one to end the viewer. Otherwise another holder has it.
    if ((await getAuditById(db.sql, auditId))?.status === 'cancelled') await finish(deps, auditId, 'cancelled')
    await d.ack()
    return
  }
  const pages = await listAuditPages(db.sql, auditId)
  if (pages.length > 0 && pages.every((p) => !p.ok)) {
    // Nothing loaded, the start page first (blocked, unreachable, an error on every page): refunded.
    const first = pages.find((p) => p.url === audit.url) ?? pages[0]!
    const code = /block/i.test(first.error ?? '') ? 'target_blocked' : 'target_unreachable'
    await failStartPage(deps, auditId, code, `No page of the site could be loaded: ${first.error ?? `HTTP ${first.httpStatus}`}.`)
    await d.ack()
    log.info('audit failed: start page not loaded; refunded', { code })
    return
  }
  const result = buildAuditResult(
    {
      auditId,
      url: audit.url,
      stoppedBy: outcome.stoppedBy,
      pagesDiscovered: outcome.progress.pagesDiscovered,
      finishedAt: new Date().toISOString(),
      ...(audit.authenticated ? { session: { lostAt: outcome.sessionLostAt } } : {}),
    },
    pages,
    outcome.siteChecks,
  )
  const progress = {
    pagesDiscovered: result.pagesDiscovered,
    pagesScanned: result.pagesScanned,
    pagesFailed: result.pagesFailed,
    currentUrl: null,
  }
  if (await completeAudit(db.sql, auditId, consumer, result, summaryOf(result), progress)) {
    const { pagesScanned, pagesFailed, pagesDiscovered } = progress
    await finish(deps, auditId, 'completed', { score: result.score, pagesScanned, pagesFailed, pagesDiscovered })
    log.info('audit completed', { score: result.score, pages: pages.length, stoppedBy: outcome.stoppedBy })
  }
  await d.ack()
}
