// One attempt's crawl of an audit: resumed from the pages an earlier holder stored, each page stored as it
// arrives (scrubbed of every credential behind a login), with the progress reporter, the replay recorder
// and the live view's casts fed from the crawl's hooks.
import type { AuditAuth } from '../shared/protocol/audit-auth.ts'
import { authPurpose, scrubber, scrubDeep, secretsOf } from '../shared/protocol/audit-auth.ts'
import {
  type AuditPageRow,
  type AuditProgress,
  type AuditRow,
  listAuditPages,
  readAuditCredentials,
  storeAuditPage,
} from '../shared/db/audits.ts'
import type { Sql } from '../shared/db/index.ts'
import { policyFromConfig } from '../shared/egress/guard.ts'
import { SecretBox } from '../shared/lib/secret-box.ts'
import type { Logger } from '../shared/lib/log.ts'
import type { CheckResult } from '../shared/report/scan-report.ts'
import { type CrawlHooks, type CrawlOptions, crawlSite, type CrawlSummary } from './audit/crawl.ts'
import { ProgressReporter } from './audit-progress.ts'
import { ReplayRecorder } from './viewer/replay.ts'
import { TabCasts } from './viewer/screencast.ts'
import { trustedSpki, type WorkerDeps } from './scan-worker.ts'

export interface CrawlOutcome {
  stoppedBy: CrawlSummary['stoppedBy']
  siteChecks: CheckResult[]
  progress: AuditProgress
  sessionLostAt: string | null
}

type Credentials = NonNullable<CrawlOptions['auth']>

/** Runs the crawl, resuming from the pages an earlier holder stored, and stores each page as it arrives. */
export async function crawlAndStore(
  deps: WorkerDeps,
  audit: AuditRow,
  consumer: string,
  signal: AbortSignal,
  log: Logger,
): Promise<CrawlOutcome> {
  const { db, infra, config } = deps
  const auditId = audit.id
  const auth = audit.authenticated ? await openCredentials(deps, auditId) : undefined
  const stored = await listAuditPages(db.sql, auditId)
  const startedAt = audit.startedAt ?? new Date()
  const reporter = new ProgressReporter(
    { sql: db.sql, infra, auditId, consumer, log, startedAt, lanes: config.AUDIT_CONCURRENCY },
    audit.progress,
    stored,
  )
  // The time budget counts from the first start, so a takeover does not restart the clock.
  const budgetMs = audit.options.maxDurationSeconds * 1000 - (Date.now() - startedAt.getTime())
  const pagesLeft = audit.options.maxPages - stored.length
  if (stored.length > 0 && (budgetMs <= 0 || pagesLeft <= 0)) {
    return { stoppedBy: budgetMs <= 0 ? 'maxDuration' : 'maxPages', siteChecks: [], progress: reporter.progress, sessionLostAt: null }
  }

  const castDeps = { auditId, pubsub: infra.pubsub, kv: infra.kv, log }
  // Every lane's tab is attached to the live view once; the view follows the lane a viewer chose, or the latest.
  const casts = new TabCasts(castDeps)
  const replay = await ReplayRecorder.open(db.sql, castDeps)
  if (stored.length) log.info('resuming audit', { pagesStored: stored.length })
  await reporter.start()

  try {
    const summary = await crawlSite(
      crawlOptions(deps, audit, stored, Math.max(1_000, budgetMs), signal, auth),
      {
        browser: deps.browser,
        policy: policyFromConfig(config),
        log,
        trustedSpki: trustedSpki(config),
        probeTimeoutMs: config.PROBE_TIMEOUT_MS,
      },
      storingHooks({ sql: db.sql, auditId, consumer, reporter, replay, casts, ...(auth ? { auth } : {}) }),
    )
    return {
      stoppedBy: summary.stoppedBy,
      siteChecks: summary.siteChecks,
      progress: reporter.progress,
      sessionLostAt: summary.sessionLostAt,
    }
  } finally {
    await replay.flush()
    await reporter.flush()
    await casts.detachAll()
  }
}

function crawlOptions(
  deps: WorkerDeps,
  audit: AuditRow,
  stored: AuditPageRow[],
  maxDurationMs: number,
  signal: AbortSignal,
  auth: Credentials | undefined,
): CrawlOptions {
  const { config } = deps
  return {
    startUrl: audit.url,
    maxPages: audit.options.maxPages,
    maxDepth: audit.options.maxDepth,
    maxDurationMs,
    concurrency: config.AUDIT_CONCURRENCY,
    navTimeoutMs: config.NAV_TIMEOUT_MS,
    signal,
    resume: stored.map((p) => ({ url: p.url, depth: p.depth, links: p.links })),
    ...(auth ? { auth } : {}),
  }
}

/** The crawl's hooks: each page stored as it arrives, and the progress, the live view and the replay fed. */
function storingHooks(h: {
  sql: Sql
  auditId: string
  consumer: string
  auth?: Credentials
  reporter: ProgressReporter
  replay: ReplayRecorder
  casts: TabCasts
}): CrawlHooks {
  const { auth } = h
  const startedAt = new Map<string, Date>()
  return {
    onDiscovered: (total) => h.reporter.discovered(total),
    onPageStart(url, page, lane) {
      startedAt.set(url, new Date())
      h.reporter.pageStarted(auth ? auth.scrub(url) : url)
      h.casts.pageStarted(page, url, lane)
    },
    inView: (lane) => h.casts.inView(lane),
    async onPage(page, tab) {
      // Behind a login, nothing a page reports may carry a credential (an error, evidence echoing a header).
      const record = auth ? scrubDeep(page, auth.scrub) : page
      // No replay of pages behind a login: a picture of an account page cannot be scrubbed of what it shows.
      // The still is taken while the page is stored: the tab shows the page until this hook returns.
      const still = tab && !auth ? h.replay.capture(tab.page) : null
      const ok = await storeAuditPage(h.sql, h.auditId, h.consumer, record, startedAt.get(page.url) ?? null)
      startedAt.delete(page.url)
      if (!ok) return void (await still)
      h.reporter.pageStored(page)
      if (tab && !auth) await h.replay.record(tab.page, tab.lane, page.url, still)
    },
  }
}

/**
 * An authenticated audit's credentials, opened for this crawl only (they stay sealed in the database until
 * the audit ends and are never written anywhere else), with the scrubber for everything the crawl reports.
 * A missing key or value is our fault: the attempt fails and is retried, then refunded.
 */
async function openCredentials(deps: WorkerDeps, auditId: string): Promise<Credentials> {
  const box = SecretBox.fromConfig(deps.config)
  if (!box) throw new Error('this crawler has no SECRETS_KEY, so it cannot open the credentials of an authenticated audit')
  const sealed = await readAuditCredentials(deps.db.sql, auditId)
  if (!sealed) throw new Error('the credentials of this authenticated audit are gone')
  const credentials = JSON.parse(box.open(sealed, authPurpose(auditId))) as AuditAuth
  return { credentials, scrub: scrubber(secretsOf(credentials)) }
}
