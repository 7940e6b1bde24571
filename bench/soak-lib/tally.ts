// What the soak's database says at the end: every scan, audit and directory run by state and reason, what
// was charged and refunded, and what must never happen (lost work, a double charge, a wrong refund).
import type { Sql } from '../../shared/db/index.ts'
import { AUDIT_STARTS } from '../../shared/rate-limits.ts'

export interface Tally {
  scans: Record<string, number>
  audits: Record<string, number>
  runs: Record<string, number>
  /** Scans, audits and runs still queued or running (after the drain): lost. */
  unfinished: { scans: string[]; audits: string[]; runs: string[] }
  /**
   * Audit runs still running only because their account is at its hourly cap of audit starts: by design they
   * start their items when it allows (within the run's time limit), so they are not counted as lost.
   */
  waitingOnCap: string[]
  /** Audits with more than one debit, or none. */
  chargedTwice: string[]
  notCharged: string[]
  refunds: { expected: number; right: number; wrong: string[] }
  /** Accounts whose credits column is not what their ledger says. */
  creditsMismatch: string[]
  /** Completed scans' times (ms since the epoch): recorded, taken by a worker, finished. */
  scanTimes: Array<[created: number, started: number, finished: number]>
  /** Attempts above 1: taken over after a fault. */
  retried: { scans: number; audits: number }
}

const key = (status: string, code: string | null) => (code ? `${status}: ${code}` : status)

function countBy(rows: Array<{ status: string; code: string | null; n: number }>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of rows) out[key(r.status, r.code)] = (out[key(r.status, r.code)] ?? 0) + Number(r.n)
  return out
}

/**
 * Whether an audit's charge must have come back: every way an audit fails refunds it (failAuditAndRefund: a
 * fault of ours after the last try, a start page that could not be loaded, a queue that was down at the
 * start, recovery giving up); a completed or cancelled one keeps its charge.
 */
export const refundExpected = (status: string) => status === 'failed'

type AuditLedger = { id: string; status: string; code: string | null; refunded: boolean; debits: number; refunds: number }

async function ledgerChecks(sql: Sql, t: Tally): Promise<void> {
  const rows = await sql<AuditLedger[]>`
    SELECT a.id, a.status, a.error->>'code' AS code, a.refunded,
      count(l.id) FILTER (WHERE l.reason = 'audit')::int AS debits,
      count(l.id) FILTER (WHERE l.reason = 'refund')::int AS refunds
    FROM audits a LEFT JOIN ledger l ON l.audit_id = a.id GROUP BY a.id`
  for (const a of rows) {
    if (a.debits > 1) t.chargedTwice.push(a.id)
    if (a.debits === 0) t.notCharged.push(a.id)
    const expected = refundExpected(a.status)
    if (expected) t.refunds.expected++
    const right = expected ? a.refunds === 1 && a.refunded : a.refunds === 0 && !a.refunded
    if (right && expected) t.refunds.right++
    if (!right) t.refunds.wrong.push(`${a.id} ${a.status}${a.code ? `: ${a.code}` : ''} refunds=${a.refunds} refunded=${a.refunded}`)
  }
  const credits = await sql<{ id: string; credits: number; ledger: number }[]>`
    SELECT a.id, a.credits, COALESCE(sum(l.delta) FILTER (WHERE l.source = 'credits'), 0)::int AS ledger
    FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id GROUP BY a.id`
  for (const c of credits) if (c.credits !== c.ledger) t.creditsMismatch.push(`${c.id}: column ${c.credits}, ledger ${c.ledger}`)
}

export async function tally(sql: Sql): Promise<Tally> {
  const scans = await sql<{ status: string; code: string | null; n: number }[]>`
    SELECT status, error->>'code' AS code, count(*)::int AS n FROM scans GROUP BY 1, 2`
  const audits = await sql<{ status: string; code: string | null; n: number }[]>`
    SELECT status, error->>'code' AS code, count(*)::int AS n FROM audits GROUP BY 1, 2`
  const runs = await sql<{ status: string; code: string | null; n: number }[]>`
    SELECT status, error->>'code' AS code, count(*)::int AS n FROM directory_runs GROUP BY 1, 2`
  const ids = async (q: Promise<{ id: string }[]>) => (await q).map((r) => r.id)
  const t: Tally = {
    scans: countBy(scans),
    audits: countBy(audits),
    runs: countBy(runs),
    unfinished: {
      scans: await ids(sql`SELECT id FROM scans WHERE status IN ('queued', 'running')`),
      audits: await ids(sql`SELECT id FROM audits WHERE status IN ('queued', 'running')`),
      runs: [],
    },
    waitingOnCap: [],
    scanTimes: (
      await sql<{ c: Date; s: Date; f: Date }[]>`
        SELECT created_at AS c, started_at AS s, finished_at AS f FROM scans WHERE status = 'completed' AND started_at IS NOT NULL`
    ).map((r) => [r.c.getTime(), r.s.getTime(), r.f.getTime()]),
    chargedTwice: [],
    notCharged: [],
    refunds: { expected: 0, right: 0, wrong: [] },
    creditsMismatch: [],
    retried: {
      scans: (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM scans WHERE attempts > 1`)[0]!.n,
      audits: (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM audits WHERE attempts > 1`)[0]!.n,
    },
  }
  const openRuns = await sql<{ id: string; capped: boolean }[]>`
    SELECT r.id, (r.mode = 'audit' AND (SELECT count(*) FROM audits a
      WHERE a.account_id = r.account_id AND a.created_at > now() - interval '1 hour') >= ${AUDIT_STARTS.perHour}) AS capped
    FROM directory_runs r WHERE r.status NOT IN ('completed', 'failed')`
  for (const r of openRuns) (r.capped ? t.waitingOnCap : t.unfinished.runs).push(r.id)
  await ledgerChecks(sql, t)
  return t
}

/** Unfinished work left in the database: what the drain waits on. */
export async function unfinishedCount(sql: Sql): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    SELECT (SELECT count(*) FROM scans WHERE status IN ('queued', 'running'))
      + (SELECT count(*) FROM audits WHERE status IN ('queued', 'running'))
      + (SELECT count(*) FROM directory_runs WHERE status NOT IN ('completed', 'failed'))::int AS n`
  return Number(r!.n)
}
