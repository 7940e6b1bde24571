// Audits and their pages. The audit row is the source of truth for its state and progress; the queue
// carries only its id. A worker holds an audit through a lease (worker, lease_until) taken atomically,
// so two workers never crawl the same audit at once, and every write of a holder checks it still holds it.
import { AppError } from '../errors.ts'
import { newId } from '../lib/ids.ts'
import type { Sql } from './index.ts'
import { claimLease, releaseLease, renewLease, unheldRows } from './lease.ts'
import type { StoredAuditSummary } from '../report/audit-summary.ts'
import {
  allowanceExhausted,
  BALANCE_COLUMNS,
  type BalanceRow,
  type ChargeSource,
  payingSource,
  refundAuditIn,
  toBalance,
  type Tx,
  WEEKLY_AUDIT_ALLOWANCE,
} from './ledger.ts'
import type { CrawledPage } from '../report/crawled-page.ts'
import type { CheckResult } from '../report/schema.ts'

export type AuditStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled'

export interface AuditOptions {
  maxPages: number
  maxDepth: number
  maxDurationSeconds: number
}

export interface AuditProgress {
  pagesDiscovered: number
  pagesScanned: number
  pagesFailed: number
  currentUrl: string | null
}

export interface AuditRow {
  id: string
  accountId: string
  appId: string
  url: string
  options: AuditOptions
  status: AuditStatus
  progress: AuditProgress
  result: unknown
  error: { code: string; message: string } | null
  attempts: number
  worker: string | null
  leaseUntil: Date | null
  chargedFrom: ChargeSource
  refunded: boolean
  createdAt: Date
  startedAt: Date | null
  finishedAt: Date | null
  /** Audited behind a login (audit_authenticated); its credentials are wiped when it ends. */
  authenticated: boolean
}

export type AuditRaw = {
  id: string
  account_id: string
  app_id: string
  url: string
  options: AuditOptions
  status: AuditStatus
  pages_discovered: number
  pages_scanned: number
  pages_failed: number
  current_url: string | null
  result: unknown
  error: AuditRow['error']
  attempts: number
  worker: string | null
  lease_until: Date | null
  charged_from: ChargeSource
  refunded: boolean
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
  authenticated?: boolean
}

export const toAudit = (r: AuditRaw): AuditRow => ({
  id: r.id,
  accountId: r.account_id,
  appId: r.app_id,
  url: r.url,
  options: r.options,
  status: r.status,
  progress: { pagesDiscovered: r.pages_discovered, pagesScanned: r.pages_scanned, pagesFailed: r.pages_failed, currentUrl: r.current_url },
  result: r.result,
  error: r.error,
  attempts: r.attempts,
  worker: r.worker,
  leaseUntil: r.lease_until,
  chargedFrom: r.charged_from,
  refunded: r.refunded,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  authenticated: r.authenticated === true,
})

export const isFinished = (s: AuditStatus) => s === 'completed' || s === 'failed' || s === 'cancelled'

/**
 * Records a queued audit and charges it, in one transaction under a lock on the account row: either both
 * happen or neither. Throws allowance_exhausted, or rate_limited when the account started `perHour` audits
 * in the last hour (nothing is written then).
 */
export async function createAudit(
  sql: Sql,
  accountId: string,
  url: string,
  options: AuditOptions,
  perHour = Number.POSITIVE_INFINITY,
  /**
   * The audit's id when the caller chose it (credentials are sealed for it; a directory run records it
   * before starting), and an authenticated audit's sealed credentials.
   */
  chosen?: { auditId: string; sealed?: string },
): Promise<AuditRow> {
  const auditId = chosen?.auditId ?? newId('aud')
  // One statement (migrations/017_start_audit.sql): lock, decide what pays, hold the hourly cap, record.
  try {
    const [row] = await sql<AuditRaw[]>`
      SELECT * FROM start_audit(${accountId}::text, ${auditId}::text, ${newId('app')}::text, ${newId('led')}::text, ${url}::text,
        ${new URL(url).origin}::text, ${sql.json(options as never)}::jsonb, ${chosen?.sealed ?? null}::text,
        ${Number.isFinite(perHour) ? perHour : null}::int, ${sql.json(WEEKLY_AUDIT_ALLOWANCE as never)}::jsonb)`
    return toAudit(row!)
  } catch (e) {
    throw startRefusal(e, accountId, perHour) ?? e
  }
}

/** start_audit's refusals ('start_audit:<code>', facts as JSON in DETAIL) as the errors callers know. */
function startRefusal(e: unknown, accountId: string, perHour: number): AppError | null {
  const err = e as { code?: unknown; message?: unknown; detail?: unknown }
  if (err?.code !== 'P0001' || typeof err.message !== 'string' || !err.message.startsWith('start_audit:')) return null
  const detail = typeof err.detail === 'string' ? (JSON.parse(err.detail) as Record<string, unknown>) : {}
  switch (err.message.slice('start_audit:'.length)) {
    case 'not_found':
      return new AppError('not_found', `No account ${accountId}`)
    case 'allowance_exhausted':
      return allowanceExhausted(toBalance({ ...detail, resets_at: String(detail.resetsAt) } as BalanceRow))
    case 'rate_limited':
      return overHourlyRate(Number(detail.n), new Date(String(detail.oldest)), perHour)
    default:
      return null
  }
}

/**
 * Before createAudit, without a lock: throws what createAudit would (allowance_exhausted, rate_limited) as
 * things stand, so that the caller refuses before slow work. createAudit still decides under its lock.
 */
export async function refuseUnstartableAudit(sql: Sql, accountId: string, perHour = Number.POSITIVE_INFINITY): Promise<void> {
  // Both questions in one statement; the allowance's answer comes first when both refuse.
  const [row] = await sql<(BalanceRow & { recent: number; oldest: Date | null })[]>`
    SELECT ${sql.unsafe(BALANCE_COLUMNS)}, r.n AS recent, r.oldest
    FROM accounts a,
      LATERAL (SELECT count(*)::int AS n, min(created_at) AS oldest FROM audits
        WHERE account_id = a.id AND created_at > now() - interval '1 hour') r
    WHERE a.id = ${accountId}`
  if (!row) throw new AppError('not_found', `No account ${accountId}`)
  payingSource(toBalance(row))
  if (row.recent >= perHour) throw overHourlyRate(row.recent, row.oldest!, perHour)
}

/** The hourly cap on audit starts, passed: `n` started in the last hour, the first at `oldest`. */
function overHourlyRate(n: number, oldest: Date, perHour: number): AppError {
  const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + 3_600_000 - Date.now()) / 1000))
  return new AppError('rate_limited', `This account started ${n} audits in the last hour, the most allowed; retry in ${retryAfter} s.`, {
    retryAfter,
    limit: perHour,
  })
}

/** An audit of this account, or null (unknown, or another account's). Used by get_audit and the dashboard. */
export async function getAudit(sql: Sql, accountId: string, auditId: string): Promise<AuditRow | null> {
  const [row] = await sql<AuditRaw[]>`SELECT * FROM audits WHERE id = ${auditId} AND account_id = ${accountId}`
  return row ? toAudit(row) : null
}

/**
 * Worker side: an authenticated audit's sealed credentials while it is unfinished; null once it has ended
 * (they are wiped then) or for an audit without any.
 */
export async function readAuditCredentials(sql: Sql, auditId: string): Promise<string | null> {
  const [row] = await sql<{ auth_sealed: string | null }[]>`
    SELECT auth_sealed FROM audits WHERE id = ${auditId} AND status IN ('queued', 'running')`
  return row?.auth_sealed ?? null
}

/**
 * Key rotation: passes each unfinished audit's sealed credentials to `reseal` and stores what it returns
 * (null: leave it). Only a value unchanged since it was read is replaced. Returns how many were replaced.
 */
export async function resealAuditCredentials(sql: Sql, reseal: (sealed: string, auditId: string) => string | null): Promise<number> {
  let n = 0
  let after = ''
  for (let round = 0; round < 100_000; round++) {
    const rows = await sql<{ id: string; auth_sealed: string }[]>`
      SELECT id, auth_sealed FROM audits WHERE auth_sealed IS NOT NULL AND id > ${after} ORDER BY id LIMIT 500`
    if (rows.length === 0) break
    for (const r of rows) {
      const next = reseal(r.auth_sealed, r.id)
      if (next !== null) {
        const done = await sql`UPDATE audits SET auth_sealed = ${next} WHERE id = ${r.id} AND auth_sealed = ${r.auth_sealed}`
        n += done.count
      }
    }
    after = rows[rows.length - 1]!.id
  }
  return n
}

/** Worker side: the audit by id alone (the job carries no account). */
export async function getAuditById(sql: Sql, auditId: string): Promise<AuditRow | null> {
  const [row] = await sql<AuditRaw[]>`SELECT * FROM audits WHERE id = ${auditId}`
  return row ? toAudit(row) : null
}

/** Takes the audit for `worker` (shared/db/lease.ts); null when someone else holds it or it is finished. */
export async function claimAudit(sql: Sql, auditId: string, worker: string, leaseMs: number): Promise<AuditRow | null> {
  const row = await claimLease<AuditRaw>(sql, 'audits', auditId, worker, leaseMs)
  return row ? toAudit(row) : null
}

/** Extends the holder's lease. false: the lease was lost (expired and taken) or the audit ended. */
export const renewAuditLease = (sql: Sql, auditId: string, worker: string, leaseMs: number) =>
  renewLease(sql, 'audits', auditId, worker, leaseMs)

/** Hands the audit back (graceful shutdown): queued again, lease free, stored pages kept for the next holder. */
export const releaseAudit = (sql: Sql, auditId: string, worker: string) => releaseLease(sql, 'audits', auditId, worker, 'current_url')

export interface AuditPageRow extends CrawledPage {
  worker: string
  startedAt: Date | null
  storedAt: Date
}

/** Stores one crawled page, only while `worker` holds the audit. false: not stored (lease lost, or already there). */
export async function storeAuditPage(
  sql: Sql,
  auditId: string,
  worker: string,
  page: CrawledPage,
  startedAt: Date | null,
): Promise<boolean> {
  const r = await sql`
    INSERT INTO audit_pages (audit_id, url, final_url, depth, http_status, ok, error, links, checks, load_ms, worker, started_at, cookies_set)
    SELECT ${auditId}, ${page.url}, ${page.finalUrl}, ${page.depth}, ${page.httpStatus}, ${page.ok}, ${page.error ?? null},
      ${sql.json(page.links)}, ${sql.json(page.checks as never)}, ${Math.round(page.loadMs)}, ${worker}, ${startedAt},
      ${page.cookiesSet ? sql.json(page.cookiesSet) : null}
    WHERE EXISTS (SELECT 1 FROM audits WHERE id = ${auditId} AND worker = ${worker} AND status = 'running')
    ON CONFLICT (audit_id, url) DO NOTHING`
  return r.count > 0
}

export async function listAuditPages(sql: Sql, auditId: string): Promise<AuditPageRow[]> {
  const rows = await sql<
    Array<{
      url: string
      final_url: string
      depth: number
      http_status: number | null
      ok: boolean
      error: string | null
      links: string[]
      checks: unknown[]
      load_ms: number
      cookies_set: string[] | null
      worker: string
      started_at: Date | null
      stored_at: Date
    }>
  >`SELECT * FROM audit_pages WHERE audit_id = ${auditId} ORDER BY stored_at, url`
  return rows.map((r) => ({
    url: r.url,
    finalUrl: r.final_url,
    depth: r.depth,
    httpStatus: r.http_status,
    ok: r.ok,
    ...(r.error !== null ? { error: r.error } : {}),
    links: r.links,
    checks: r.checks as CheckResult[],
    loadMs: r.load_ms,
    ...(r.cookies_set !== null ? { cookiesSet: r.cookies_set } : {}),
    worker: r.worker,
    startedAt: r.started_at,
    storedAt: r.stored_at,
  }))
}

/** Progress as the holder sees it; ignored when it no longer holds the audit. */
export async function updateAuditProgress(sql: Sql, auditId: string, worker: string, p: AuditProgress): Promise<void> {
  await sql`
    UPDATE audits SET pages_discovered = ${p.pagesDiscovered}, pages_scanned = ${p.pagesScanned},
      pages_failed = ${p.pagesFailed}, current_url = ${p.currentUrl}
    WHERE id = ${auditId} AND worker = ${worker} AND status = 'running'`
}

/** Stores the result and its summary (summaryOf: what get_audit answers with), only while `worker` holds the audit. */
export async function completeAudit(
  sql: Sql,
  auditId: string,
  worker: string,
  result: unknown,
  summary: StoredAuditSummary,
  p: AuditProgress,
): Promise<boolean> {
  const r = await sql`
    UPDATE audits SET status = 'completed', result = ${sql.json(result as never)}, summary = ${sql.json(summary as never)},
      error = NULL, finished_at = now(),
      lease_until = NULL, current_url = NULL, pages_discovered = ${p.pagesDiscovered}, pages_scanned = ${p.pagesScanned},
      pages_failed = ${p.pagesFailed}
    WHERE id = ${auditId} AND worker = ${worker} AND status = 'running'`
  return r.count > 0
}

/**
 * Cancels an unfinished audit of this account (no refund: it was asked for). Its holder notices at its next
 * lease renewal and stops crawling; the pages stored so far stay readable.
 */
export async function cancelAudit(sql: Sql, accountId: string, auditId: string): Promise<boolean> {
  const r = await sql`
    UPDATE audits SET status = 'cancelled', finished_at = now(), lease_until = NULL, current_url = NULL
    WHERE id = ${auditId} AND account_id = ${accountId} AND status IN ('queued', 'running')`
  return r.count > 0
}

/** Fails an unfinished audit. The caller refunds it when the failure was ours. */
export async function failAudit(sql: Sql | Tx, auditId: string, error: { code: string; message: string }): Promise<boolean> {
  const r = await sql`
    UPDATE audits SET status = 'failed', error = ${sql.json(error)}, finished_at = now(), lease_until = NULL, current_url = NULL
    WHERE id = ${auditId} AND status IN ('queued', 'running')`
  return r.count > 0
}

/**
 * Fails an unfinished audit for a fault of ours and gives its charge back, in one transaction, so nobody
 * reading the audit ever sees it failed but not yet refunded. False when it had already finished.
 */
export async function failAuditAndRefund(sql: Sql, auditId: string, error: { code: string; message: string }): Promise<boolean> {
  return sql.begin(async (tx) => {
    if (!(await failAudit(tx, auditId, error))) return false
    await refundAuditIn(tx, auditId)
    return true
  }) as Promise<boolean>
}

/**
 * Unfinished audits older than `olderThanSeconds` that no worker holds (lease free or expired): their job
 * may have been lost with Redis or with a dead process. Recovery dispatches them again, or fails them
 * when they are older than anyone would still wait for. Returns their ids, oldest first.
 */
export const unheldAudits = (sql: Sql, olderThanSeconds: number) => unheldRows(sql, 'audits', olderThanSeconds, 1000)
