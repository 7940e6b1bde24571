// Scans from the api's side: validate and pre-check the target, record the scan, hand it to the queue
// (start), and wait for a worker to finish it while relaying its progress (waitFor). start is the one way a
// scan is started: scan_app (start, then waitFor), the dashboard, monitors and directory runs. The api never
// opens a browser.
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
import { Reachability } from '../http/reachable.ts'

export interface ScanWaitOptions {
  progress(progress: number, total: number, message: string): Promise<void>
  signal?: AbortSignal
}

export interface ScanStartOptions {
  /**
   * When the queue cannot take the job. 'fail' (someone waits on the scan): the scan is failed and the call
   * throws scanner_unavailable. 'recover' (nobody waits: monitors, directory runs): the scan stays queued,
   * recovery dispatches it once the queue is back, and the call returns its id.
   */
  queueDown?: 'fail' | 'recover'
}

/** Whom a scan is for: the account it belongs to, whose plan caps its scans in flight. */
export interface ScanOwner {
  account: Pick<Principal['account'], 'id' | 'plan'>
}

/** How often the waiter reads Postgres too, in case a pub/sub message was lost. */
const POLL_MS = 1_000

const ended = (row: ScanRow | null) => row?.status === 'completed' || row?.status === 'failed'

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
  private readonly reach: Reachability
  /** Aborted when this api stops: the scan_app calls still waiting answer at once, before the drain cuts them. */
  private stopping = new AbortController()

  constructor(private deps: { config: Config; db: Database; infra: Infra; log: Logger }) {
    this.reach = new Reachability(deps.config)
  }

  /**
   * This api is stopping: every scan_app still waiting answers now, scanner_unavailable with its scanId (the
   * scan goes on; get_scan reads it later, on any replica), instead of a connection cut when the drain ends.
   */
  stopWaiting(): void {
    this.stopping.abort()
  }

  /** scan_app: starts a scan and waits for its report. */
  async scan(principal: Principal, rawUrl: string, opts: ScanWaitOptions): Promise<unknown> {
    const scanId = await this.start(principal, rawUrl)
    await opts.progress(1, 100, 'queued').catch(() => {})
    return this.waitFor(principal, scanId, opts)
  }

  /**
   * Checks the target, records the scan under the account's cap of scans in flight and hands it to the
   * queue; its id. Throws the target's refusal, or rate_limited at the cap (nothing is recorded then).
   */
  async start(owner: ScanOwner, rawUrl: string, opts: ScanStartOptions = {}): Promise<string> {
    const { db, infra } = this.deps
    // Refuse early what the worker's egress guard would refuse anyway, and a target where nothing listens:
    // a clear answer, and no scan, app or queued job for a target the scan would never reach.
    const parsed = parseTargetUrl(rawUrl)
    if (!parsed.ok) throw new AppError('invalid_url', parsed.message)
    const url = parsed.url
    await this.reach.connects(url, 'Nothing was started.')
    const { plan } = owner.account
    const cap = CONCURRENT_SCANS.perPlan[plan]
    const scan = await createScanUnderCap(db.sql, owner.account.id, url.href, {
      maxInFlight: cap,
      windowSeconds: CONCURRENT_SCANS.windowSeconds,
    })
    if (!scan) {
      throw new AppError(
        'rate_limited',
        `This account already has ${cap} scans in progress (the ${plan} plan's limit); retry when one has finished.`,
        {
          retryAfter: CONCURRENT_SCANS.retryAfterSeconds,
          limit: cap,
        },
      )
    }
    const log = this.deps.log.child({ scanId: scan.id })
    try {
      await infra.queue.enqueue({ kind: 'scan', ref: scan.id })
    } catch (e) {
      if (opts.queueDown === 'recover') {
        log.warn('scan not queued; recovery dispatches it', { error: errorMessage(e) })
        return scan.id
      }
      log.error('job queue unreachable', { error: errorMessage(e) })
      await failScan(db.sql, scan.id, { code: 'scanner_unavailable', message: 'The job queue was unreachable' }).catch(() => {})
      throw new AppError('scanner_unavailable', 'The job queue is unreachable right now; the scan was not started. Retry shortly.', {
        scanId: scan.id,
      })
    }
    log.info('scan queued', { url: url.origin })
    return scan.id
  }

  /**
   * Waits for a scan of this account to end, relaying its progress, until SCAN_TIMEOUT_MS or the signal:
   * its report, its failure as an AppError, or scanner_unavailable naming the scan to poll later.
   */
  async waitFor(owner: ScanOwner, scanId: string, opts: ScanWaitOptions): Promise<unknown> {
    const { config, db, infra } = this.deps
    let wake: () => void = () => {}
    let finished = false
    let lastProgress = 0
    const unsubscribe = await infra.pubsub
      .subscribe(scanChannel(scanId), (raw) => {
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
      .catch((e) => {
        // The scan is queued already: without its events, reading Postgres each POLL_MS still sees it end.
        this.deps.log.warn('scan events unreachable; polling', { scanId, error: errorMessage(e) })
        return async () => {}
      })
    const stopping = this.stopping.signal
    const onStop = () => wake()
    stopping.addEventListener('abort', onStop)
    try {
      const deadline = Date.now() + config.SCAN_TIMEOUT_MS
      // Read first: a scan that ended before the subscription sent its 'done' to nobody.
      let row: ScanRow | null = await getScan(db.sql, owner.account.id, scanId).catch(() => null)
      while (!ended(row) && Date.now() < deadline && !opts.signal?.aborted && !stopping.aborted) {
        if (!finished)
          await new Promise<void>((r) => {
            wake = r
            setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now())))
          })
        // A database blip while waiting is not the scan's failure: keep waiting until the deadline.
        row = await getScan(db.sql, owner.account.id, scanId).catch(() => row)
      }
      if (row?.status === 'completed') return row.report
      if (row?.status === 'failed') {
        throw new AppError((row.error?.code as ErrorCode) ?? 'scan_failed', row.error?.message ?? 'The scan failed', { scanId })
      }
      if (stopping.aborted) {
        throw new AppError('scanner_unavailable', 'This server is restarting; the scan goes on: call get_scan with this scanId later.', {
          scanId,
        })
      }
      throw new AppError(
        'scanner_unavailable',
        `No scanner finished the scan within ${config.SCAN_TIMEOUT_MS} ms. It stays queued: call get_scan with this scanId later.`,
        { scanId },
      )
    } finally {
      stopping.removeEventListener('abort', onStop)
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
