// Scans from the api's side: validate and pre-check the target, record the scan, hand it to the queue,
// and wait for a worker to finish it while relaying its progress. The api never opens a browser.
import type { Config } from '../../shared/config.ts'
import type { Database } from '../../shared/db/index.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import {
  createScanUnderCap,
  decodeKeyset,
  encodeKeyset,
  failScan,
  getApp,
  getScan,
  listApps,
  type Keyset,
  type ScanRow,
} from '../../shared/db/scans.ts'
import { listHistory } from '../../shared/db/history.ts'
import { parseTargetUrl } from '../../shared/egress/guard.ts'
import { AppError, type ErrorCode, errorMessage } from '../../shared/errors.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { parseScanEvent, scanChannel } from '../../shared/protocol/scan-events.ts'
import { CONCURRENT_SCANS } from '../../shared/rate-limits.ts'
import { checkTarget } from '../http/target.ts'

export interface ScanWaitOptions {
  progress(progress: number, total: number, message: string): Promise<void>
  signal?: AbortSignal
  /** Called once the scan is recorded and queued, with its id (the dashboard answers then, without waiting). */
  onQueued?(scanId: string): void
}

/** How often the waiter reads Postgres too, in case a pub/sub message was lost. */
const POLL_MS = 1_000

/** The position a listing's cursor names (null: the first page); invalid_params for one the listing did not hand out. */
function readCursor(listing: 'scan_history' | 'list_apps', cursor: string | undefined): Keyset | null {
  if (cursor === undefined) return null
  const after = decodeKeyset(listing, cursor)
  if (after === null) {
    throw new AppError('invalid_params', `cursor is not a ${listing} cursor: pass nextCursor from the previous page unchanged.`, {
      details: [{ path: '/cursor', message: 'Invalid cursor' }],
    })
  }
  return after
}

export class ScanService {
  constructor(private deps: { config: Config; db: Database; infra: Infra; log: Logger }) {}

  async scan(principal: Principal, rawUrl: string, opts: ScanWaitOptions): Promise<unknown> {
    const { config, db, infra } = this.deps
    // Refuse early what the worker's egress guard would refuse anyway: a clear answer, no queued job.
    const url = await checkTarget(config, rawUrl, { refuseUnreachable: true })
    const scan = await createScanUnderCap(db.sql, principal.account.id, url.href, {
      maxInFlight: CONCURRENT_SCANS.perPlan[principal.account.plan],
      windowSeconds: CONCURRENT_SCANS.windowSeconds,
    })
    if (!scan) {
      const cap = CONCURRENT_SCANS.perPlan[principal.account.plan]
      throw new AppError(
        'rate_limited',
        `This account already has ${cap} scans in progress (the ${principal.account.plan} plan's limit); retry when one has finished.`,
        { retryAfter: CONCURRENT_SCANS.retryAfterSeconds, limit: cap },
      )
    }
    const log = this.deps.log.child({ scanId: scan.id })

    let wake: () => void = () => {}
    let finished = false
    let lastProgress = 0
    const queueDown = async (e: unknown): Promise<never> => {
      log.error('job queue unreachable', { error: errorMessage(e) })
      await failScan(db.sql, scan.id, { code: 'scanner_unavailable', message: 'The job queue was unreachable' }).catch(() => {})
      throw new AppError('scanner_unavailable', 'The job queue is unreachable right now; the scan was not started. Retry shortly.', {
        scanId: scan.id,
      })
    }
    const unsubscribe = await infra.pubsub
      .subscribe(scanChannel(scan.id), (raw) => {
        const e = parseScanEvent(raw)
        if (!e) return
        if (e.type === 'done') {
          finished = true
          wake()
        } else if (e.progress > lastProgress) {
          // Progress must only increase; events can arrive late or twice.
          lastProgress = e.progress
          opts.progress(e.progress, e.total, e.message).catch(() => {})
        }
      })
      .catch(queueDown)
    try {
      await infra.queue.enqueue({ kind: 'scan', ref: scan.id }).catch(queueDown)
      log.info('scan queued', { url: url.origin })
      await opts.progress(1, 100, 'queued').catch(() => {})
      opts.onQueued?.(scan.id)
      const deadline = Date.now() + config.SCAN_TIMEOUT_MS
      let row: ScanRow | null = null
      while (Date.now() < deadline && !opts.signal?.aborted) {
        if (!finished)
          await new Promise<void>((r) => {
            wake = r
            setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now())))
          })
        // A database blip while waiting is not the scan's failure: keep waiting until the deadline.
        row = await getScan(db.sql, principal.account.id, scan.id).catch(() => row)
        if (row && (row.status === 'completed' || row.status === 'failed')) break
      }
      if (row?.status === 'completed') return row.report
      if (row?.status === 'failed') {
        throw new AppError((row.error?.code as ErrorCode) ?? 'scan_failed', row.error?.message ?? 'The scan failed', { scanId: scan.id })
      }
      throw new AppError(
        'scanner_unavailable',
        `No scanner finished the scan within ${config.SCAN_TIMEOUT_MS} ms. It stays queued: call get_scan with this scanId later.`,
        { scanId: scan.id },
      )
    } finally {
      await unsubscribe()
    }
  }

  async get(principal: Principal, scanId: string) {
    const row = await getScan(this.deps.db.sql, principal.account.id, scanId)
    if (!row) throw new AppError('not_found', `No scan ${scanId} in this account`)
    return {
      scanId: row.id,
      url: row.url,
      status: row.status,
      createdAt: row.createdAt,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
      ...(row.error ? { error: row.error } : {}),
      ...(row.report ? { report: row.report } : {}),
    }
  }

  /**
   * This account's scans and audits (each marked with its kind), newest first, of one app or one URL's origin
   * when asked; one page and the cursor of the next.
   */
  async history(principal: Principal, filter: { url?: string; appId?: string; cursor?: string; limit: number }) {
    const { db } = this.deps
    const accountId = principal.account.id
    const after = readCursor('scan_history', filter.cursor)
    let origin: string | undefined
    if (filter.url !== undefined) {
      const parsed = parseTargetUrl(filter.url)
      if (!parsed.ok) throw new AppError('invalid_url', parsed.message)
      origin = parsed.url.origin
    }
    if (filter.appId !== undefined && !(await getApp(db.sql, accountId, filter.appId))) {
      throw new AppError('not_found', `No app ${filter.appId} in this account; list_apps lists them.`)
    }
    const page = await listHistory(db.sql, accountId, { appId: filter.appId, origin, after, limit: filter.limit })
    return { origin: origin ?? null, items: page.items, nextCursor: page.next ? encodeKeyset('scan_history', page.next) : null }
  }

  /** This account's apps (one an origin it scanned), most recently active first; one page and the cursor of the next. */
  async apps(principal: Principal, page: { cursor?: string; limit: number }) {
    const after = readCursor('list_apps', page.cursor)
    const found = await listApps(this.deps.db.sql, principal.account.id, { after, limit: page.limit })
    return { items: found.items, nextCursor: found.next ? encodeKeyset('list_apps', found.next) : null }
  }
}
