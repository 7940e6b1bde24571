// Rows of directory_runs and directory_run_items (migrations 011 and 013). A run is a list of URLs scanned or
// audited as one job: its items are dispatched a few at a time, and each settles as done (with its score,
// grade and worst findings) or failed (with why). The process driving a run holds a lease on its row.
import type { Sql } from './index.ts'
import { claimLease, releaseLease, renewLease, unheldRows } from './lease.ts'

export type DirectoryRunMode = 'scan' | 'audit'
export type DirectoryRunStatus = 'queued' | 'running' | 'completed' | 'failed'
export type ItemStatus = 'pending' | 'dispatched' | 'done' | 'failed'

export interface ItemOutcome {
  score: number | null
  grade: string | null
  worst: Array<{ checkId: string; severity: string; title: string }>
}

export interface DirectoryRunItem {
  position: number
  url: string
  status: ItemStatus
  scanId: string | null
  auditId: string | null
  error: { code: string; message: string } | null
  outcome: ItemOutcome | null
}

export interface DirectoryRunRow {
  id: string
  accountId: string
  credentialId: string
  mode: DirectoryRunMode
  status: DirectoryRunStatus
  options: Record<string, unknown>
  attempts: number
  error: { code: string; message: string } | null
  createdAt: Date
  startedAt: Date | null
  finishedAt: Date | null
  items: DirectoryRunItem[]
}

type RawRun = {
  id: string
  account_id: string
  credential_id: string
  mode: DirectoryRunMode
  status: DirectoryRunStatus
  options: Record<string, unknown>
  attempts: number
  error: { code: string; message: string } | null
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
}

type RawItem = {
  position: number
  url: string
  status: ItemStatus
  scan_id: string | null
  audit_id: string | null
  error: { code: string; message: string } | null
  outcome: ItemOutcome | null
}

const toItem = (r: RawItem): DirectoryRunItem => ({
  position: r.position,
  url: r.url,
  status: r.status,
  scanId: r.scan_id,
  auditId: r.audit_id,
  error: r.error,
  outcome: r.outcome,
})

const toRun = (r: RawRun, items: RawItem[]): DirectoryRunRow => ({
  id: r.id,
  accountId: r.account_id,
  credentialId: r.credential_id,
  mode: r.mode,
  status: r.status,
  options: r.options,
  attempts: r.attempts,
  error: r.error,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  items: items.map(toItem),
})

/**
 * Records a run and its items in one transaction, unless the account already has `maxUnfinished` runs queued
 * or running (then null). The account's row is locked, so two starts at once cannot both pass the cap.
 */
export async function insertDirectoryRun(
  sql: Sql,
  run: { id: string; accountId: string; credentialId: string; mode: DirectoryRunMode; options: Record<string, unknown>; urls: string[] },
  maxUnfinished: number,
): Promise<DirectoryRunRow | null> {
  return sql.begin(async (tx) => {
    await tx`SELECT id FROM accounts WHERE id = ${run.accountId} FOR UPDATE`
    const [unfinished] = await tx<{ n: number }[]>`
      SELECT count(*)::int AS n FROM directory_runs WHERE account_id = ${run.accountId} AND status IN ('queued', 'running')`
    if (unfinished!.n >= maxUnfinished) return null
    const [row] = await tx<RawRun[]>`
      INSERT INTO directory_runs (id, account_id, credential_id, mode, options, status)
      VALUES (${run.id}, ${run.accountId}, ${run.credentialId}, ${run.mode}, ${tx.json(run.options as never)}, 'queued')
      RETURNING *`
    const items: RawItem[] = []
    for (const [position, url] of run.urls.entries()) {
      const [item] = await tx<RawItem[]>`
        INSERT INTO directory_run_items (run_id, position, url) VALUES (${run.id}, ${position}, ${url}) RETURNING *`
      items.push(item!)
    }
    return toRun(row!, items)
  }) as Promise<DirectoryRunRow | null>
}

async function withItems(sql: Sql, row: RawRun | undefined): Promise<DirectoryRunRow | null> {
  if (!row) return null
  const items = await sql<RawItem[]>`SELECT * FROM directory_run_items WHERE run_id = ${row.id} ORDER BY position`
  return toRun(row, items)
}

/** A run of this account with its items, or null (unknown, or another account's). */
export async function getDirectoryRun(sql: Sql, accountId: string, runId: string): Promise<DirectoryRunRow | null> {
  const [row] = await sql<RawRun[]>`SELECT * FROM directory_runs WHERE id = ${runId} AND account_id = ${accountId}`
  return withItems(sql, row)
}

/** The driver's side: the run by id alone (the job carries no account). */
export async function getDirectoryRunById(sql: Sql, runId: string): Promise<DirectoryRunRow | null> {
  const [row] = await sql<RawRun[]>`SELECT * FROM directory_runs WHERE id = ${runId}`
  return withItems(sql, row)
}

/** Takes the run for `worker` (shared/db/lease.ts); null when someone else holds it or it has ended. */
export async function claimDirectoryRun(sql: Sql, runId: string, worker: string, leaseMs: number): Promise<DirectoryRunRow | null> {
  return withItems(sql, await claimLease<RawRun>(sql, 'directory_runs', runId, worker, leaseMs))
}

/** Extends the holder's lease. false: the lease was lost or the run ended. */
export const renewDirectoryRunLease = (sql: Sql, runId: string, worker: string, leaseMs: number) =>
  renewLease(sql, 'directory_runs', runId, worker, leaseMs)

/** Hands the run back (shutdown): queued, lease free; its items keep what they reached. */
export const releaseDirectoryRun = (sql: Sql, runId: string, worker: string) => releaseLease(sql, 'directory_runs', runId, worker)

/**
 * Moves an item on from the state it is expected to be in, and only from it (false otherwise): pending ->
 * dispatched (with its scan's or audit's id), dispatched -> pending (a start that must wait), pending or
 * dispatched -> done or failed. A settled item is never reopened, and two drivers never both dispatch one.
 */
export async function moveDirectoryRunItem(
  sql: Sql,
  runId: string,
  position: number,
  from: ItemStatus,
  change: { status: ItemStatus; scanId?: string; auditId?: string; error?: { code: string; message: string }; outcome?: ItemOutcome },
): Promise<boolean> {
  const clearIds = change.status === 'pending'
  const r = await sql`
    UPDATE directory_run_items SET
      status = ${change.status},
      scan_id = CASE WHEN ${clearIds} THEN NULL ELSE COALESCE(${change.scanId ?? null}, scan_id) END,
      audit_id = CASE WHEN ${clearIds} THEN NULL ELSE COALESCE(${change.auditId ?? null}, audit_id) END,
      error = ${change.error ? sql.json(change.error as never) : null},
      outcome = ${change.outcome ? sql.json(change.outcome as never) : null},
      updated_at = now()
    WHERE run_id = ${runId} AND position = ${position} AND status = ${from}`
  return r.count > 0
}

/** Fails an unfinished run whoever holds it (a run given up on); false when it had ended. */
export async function failDirectoryRun(sql: Sql, runId: string, error: { code: string; message: string }): Promise<boolean> {
  const r = await sql`
    UPDATE directory_runs SET status = 'failed', error = ${sql.json(error)}, finished_at = now(), worker = NULL, lease_until = NULL
    WHERE id = ${runId} AND status IN ('queued', 'running')`
  return r.count > 0
}

/** Ends the run (the holder only, and only once). */
export async function finishDirectoryRun(
  sql: Sql,
  runId: string,
  worker: string,
  status: 'completed' | 'failed',
  error: { code: string; message: string } | null,
): Promise<boolean> {
  const r = await sql`
    UPDATE directory_runs SET status = ${status}, error = ${error ? sql.json(error as never) : null},
      finished_at = now(), worker = NULL, lease_until = NULL
    WHERE id = ${runId} AND worker = ${worker} AND status = 'running'`
  return r.count > 0
}

/** Unfinished runs nobody holds (never claimed, or their holder's lease ran out): what recovery dispatches again. */
export const orphanedDirectoryRuns = (sql: Sql, olderThanSeconds: number, limit = 100) =>
  unheldRows(sql, 'directory_runs', olderThanSeconds, limit)
