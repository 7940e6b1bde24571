// An audit's progress while it crawls: pages discovered and stored (scanned, failed), the current URL and
// the findings so far. Written to Postgres, the audit's event channel and the live viewer at most once a
// second, with a trailing write so the last change before a pause is never lost.
import { type AuditProgress, type AuditPageRow, updateAuditProgress } from '../shared/db/audits.ts'
import type { Sql } from '../shared/db/index.ts'
import { errorMessage } from '../shared/errors.ts'
import type { Infra } from '../shared/infra/types.ts'
import type { Logger } from '../shared/lib/log.ts'
import { auditChannel, type AuditEvent } from '../shared/protocol/audit-events.ts'
import type { CrawledPage } from '../shared/report/crawled-page.ts'
import { publishViewerProgress, severityCounts } from './viewer/progress.ts'

/** Progress goes to Postgres and pub/sub at most this often. */
const PROGRESS_EVERY_MS = 1_000

export interface ProgressDeps {
  sql: Sql
  infra: Pick<Infra, 'kv' | 'pubsub'>
  auditId: string
  /** The holder of the audit's lease: a write from a holder that lost it is refused. */
  consumer: string
  log: Logger
  /** When the audit first started (the viewer's clock). */
  startedAt: Date
  /** The crawl's lanes, for the viewer. */
  lanes: number
}

export class ProgressReporter {
  /** The counts as they stand; the caller reads the final ones here. */
  readonly progress: AuditProgress
  /** Findings so far, for the viewer: the checks failing or warning on any page, by severity. */
  private readonly failing = new Map<string, string>()
  private lastWrite = 0
  private pendingWrite: ReturnType<typeof setTimeout> | null = null
  /** The writes started so far, chained: each waits for the one before it. */
  private writes: Promise<void> = Promise.resolve()

  /** Counting on from the pages an earlier holder stored and the discovered count it wrote. */
  constructor(
    private readonly deps: ProgressDeps,
    previous: AuditProgress,
    stored: AuditPageRow[],
  ) {
    this.progress = {
      pagesDiscovered: Math.max(previous.pagesDiscovered, stored.length),
      pagesScanned: stored.filter((p) => p.ok).length,
      pagesFailed: stored.filter((p) => !p.ok).length,
      currentUrl: null,
    }
    for (const p of stored) this.noteFindings(p.checks)
  }

  /** The counts resumed from, written before the crawl starts. */
  async start(): Promise<void> {
    await updateAuditProgress(this.deps.sql, this.deps.auditId, this.deps.consumer, this.progress)
  }

  discovered(total: number): void {
    this.progress.pagesDiscovered = Math.max(this.progress.pagesDiscovered, total)
    this.touch()
  }

  /** A lane started `url` (scrubbed of credentials already, behind a login). */
  pageStarted(url: string): void {
    this.progress.currentUrl = url
    this.touch()
  }

  /** A page was stored. */
  pageStored(page: CrawledPage): void {
    if (page.ok) this.progress.pagesScanned++
    else this.progress.pagesFailed++
    this.noteFindings(page.checks)
    this.touch()
  }

  /** The last change is written now rather than dropped: the viewer's end state shows the final counts. */
  async flush(): Promise<void> {
    if (!this.pendingWrite) return this.writes
    clearTimeout(this.pendingWrite)
    await this.write()
  }

  private noteFindings(checks: CrawledPage['checks']): void {
    for (const c of checks) if (c.status === 'fail' || c.status === 'warn') this.failing.set(c.id, c.severity)
  }

  // Throttled with a trailing write, so the last change before a pause is never lost.
  private touch(): void {
    if (this.pendingWrite) return
    const wait = Math.max(0, PROGRESS_EVERY_MS - (Date.now() - this.lastWrite))
    this.pendingWrite = setTimeout(() => void this.write(), wait)
  }

  /**
   * Writes the counts as they stand. Writes go one after the other, in order: one that started earlier and
   * is still waiting on the database never lands after a later one, so the last write holds the last counts.
   */
  private write(): Promise<void> {
    this.lastWrite = Date.now()
    this.pendingWrite = null
    const snapshot = { ...this.progress }
    const findings = severityCounts(this.failing)
    this.writes = this.writes.then(() => this.send(snapshot, findings))
    return this.writes
  }

  private async send(snapshot: AuditProgress, findings: ReturnType<typeof severityCounts>): Promise<void> {
    const { sql, infra, auditId, consumer, log } = this.deps
    await updateAuditProgress(sql, auditId, consumer, snapshot).catch((e) => log.warn('progress write failed', { error: errorMessage(e) }))
    await infra.pubsub
      .publish(auditChannel(auditId), JSON.stringify({ type: 'progress', ...snapshot } satisfies AuditEvent))
      .catch(() => {})
    await publishViewerProgress(infra, auditId, {
      // Crawling from the first page started: its frames are on screen before it is judged.
      state: snapshot.currentUrl || snapshot.pagesScanned + snapshot.pagesFailed > 0 ? 'crawling' : 'waiting',
      ...snapshot,
      findings,
      startedAt: this.deps.startedAt.toISOString(),
      lanes: this.deps.lanes,
    }).catch(() => {})
  }
}
