// The lease a process holds on a job's row while it runs it (audits, directory runs): the columns status,
// worker, lease_until, attempts and started_at, taken in one statement, so of two takers racing exactly one
// wins; renewed while the holder works; given back on shutdown. A holder whose lease ran out and was taken
// learns it at its next renewal, and every write of a holder checks that it still holds the row.
import type { Sql } from './index.ts'

/** The tables whose rows are leased; each has the lease's columns. */
export type LeasedTable = 'audits' | 'directory_runs'

/**
 * Takes the row for `worker` when it is unfinished (queued or running) and its lease is free or expired:
 * running, one more attempt, leased for `leaseMs`. The row as stored, or undefined when someone else holds
 * it or it has ended.
 */
export async function claimLease<Raw extends object>(
  sql: Sql,
  table: LeasedTable,
  id: string,
  worker: string,
  leaseMs: number,
): Promise<Raw | undefined> {
  const [row] = await sql<Raw[]>`
    UPDATE ${sql(table)} SET status = 'running', worker = ${worker}, attempts = attempts + 1,
      lease_until = now() + make_interval(secs => ${leaseMs / 1000}), started_at = COALESCE(started_at, now())
    WHERE id = ${id} AND status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now())
    RETURNING *`
  return row
}

/** Extends the holder's lease. false: the lease was lost (expired and taken) or the row's job ended. */
export async function renewLease(sql: Sql, table: LeasedTable, id: string, worker: string, leaseMs: number): Promise<boolean> {
  const r = await sql`
    UPDATE ${sql(table)} SET lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE id = ${id} AND worker = ${worker} AND status = 'running'`
  return r.count > 0
}

/**
 * Hands the row back (shutdown, or a try that failed): queued again, lease free, so the next taker resumes
 * from what was stored. `alsoClear` names a column of the holder's own to empty with it.
 */
export async function releaseLease(sql: Sql, table: LeasedTable, id: string, worker: string, alsoClear?: string): Promise<boolean> {
  const r = await sql`
    UPDATE ${sql(table)} SET status = 'queued', worker = NULL, lease_until = NULL ${alsoClear ? sql`, ${sql(alsoClear)} = NULL` : sql``}
    WHERE id = ${id} AND worker = ${worker} AND status = 'running'`
  return r.count > 0
}

/**
 * Unfinished rows older than `olderThanSeconds` that nobody holds (never taken, or their holder's lease ran
 * out): their job may have been lost with the queue or with a dead process. Their ids, oldest first.
 */
export async function unheldRows(sql: Sql, table: LeasedTable, olderThanSeconds: number, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM ${sql(table)}
    WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now())
      AND created_at < now() - make_interval(secs => ${olderThanSeconds})
    ORDER BY created_at LIMIT ${limit}`
  return rows.map((r) => r.id)
}
