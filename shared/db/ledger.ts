// What audits cost. Each plan has a weekly audit allowance (ISO weeks, Monday 00:00 UTC); past it an
// audit spends one credit. Every debit and refund is a ledger row with a unique idempotency key, written
// in the same transaction as a row lock on the account, so concurrent calls can never overspend and a
// repeated refund is a no-op.
import type postgres from 'postgres'
import { AppError } from '../errors.ts'
import { newId } from '../lib/ids.ts'
import type { Plan } from './accounts.ts'
import type { Sql } from './index.ts'

export type Tx = postgres.TransactionSql

/** Audits included per ISO week, by plan. The one table of these numbers. */
export const WEEKLY_AUDIT_ALLOWANCE: Readonly<Record<Plan, number>> = { free: 3, launch: 25, scale: 200 }

export type ChargeSource = 'allowance' | 'credits'

export interface Balance {
  plan: Plan
  /** Audits included this week. */
  allowance: number
  /** Of which used (refunded ones not counted). */
  used: number
  /** Purchased credits left; each pays for one audit past the allowance. */
  credits: number
  /** When the allowance starts again: next Monday 00:00 UTC. */
  resetsAt: string
}

export type BalanceRow = { plan: Plan; credits: number; used: number; resets_at: Date | string }

// The ISO week in SQL, so every process agrees whatever its clock or time zone. The start of an audit
// computes it too, in its own SQL (migrations/017_start_audit.sql).
const WEEK = `date_trunc('week', now() AT TIME ZONE 'UTC')::date`
/**
 * For the statements written as text (they splice WEEK in): prepared once per connection like tagged ones.
 * Unprepared, a statement with parameters costs two round trips each time (describe, then execute).
 */
const PREPARED = { prepare: true }

/** The columns of a BalanceRow, for a statement that reads the account as `a`. */
export const BALANCE_COLUMNS = `a.plan, a.credits,
  COALESCE((SELECT -sum(l.delta) FROM ledger l
    WHERE l.account_id = a.id AND l.source = 'allowance' AND l.week_start = ${WEEK}), 0)::int AS used,
  ((${WEEK} + 7)::timestamp AT TIME ZONE 'UTC') AS resets_at`

async function readBalance(sql: Sql | Tx, accountId: string): Promise<Balance | null> {
  const [row] = await sql.unsafe<BalanceRow[]>(`SELECT ${BALANCE_COLUMNS} FROM accounts a WHERE a.id = $1`, [accountId], PREPARED)
  return row ? toBalance(row) : null
}

export function toBalance(row: BalanceRow): Balance {
  return {
    plan: row.plan,
    allowance: WEEKLY_AUDIT_ALLOWANCE[row.plan],
    used: row.used,
    credits: row.credits,
    resetsAt: new Date(row.resets_at).toISOString(),
  }
}

export async function getBalance(sql: Sql, accountId: string): Promise<Balance> {
  const b = await readBalance(sql, accountId)
  if (!b) throw new AppError('not_found', `No account ${accountId}`)
  return b
}

/** What pays for one more audit at this balance; throws allowance_exhausted when nothing does. */
export function payingSource(balance: Balance): ChargeSource {
  if (balance.used < balance.allowance) return 'allowance'
  if (balance.credits > 0) return 'credits'
  throw allowanceExhausted(balance)
}

/** The refusal of an audit that nothing pays for at this balance. */
export function allowanceExhausted(balance: Balance): AppError {
  return new AppError(
    'allowance_exhausted',
    `The weekly allowance of ${balance.allowance} audits is used up and there are no credits. It resets at ${balance.resetsAt}.`,
    { allowance: balance.allowance, used: balance.used, credits: balance.credits, resetsAt: balance.resetsAt },
  )
}

/**
 * Gives an audit's charge back, once: the refund row's idempotency key is unique, so a second call (a
 * retried worker, two workers racing) changes nothing. Returns whether this call refunded.
 */
export async function refundAudit(sql: Sql, auditId: string): Promise<boolean> {
  return sql.begin((tx) => refundAuditIn(tx, auditId))
}

/** refundAudit inside a caller's transaction (failing an audit and refunding it are one change). */
export async function refundAuditIn(tx: Tx, auditId: string): Promise<boolean> {
  {
    const [debit] = await tx<{ account_id: string; source: ChargeSource; week_start: string }[]>`
      SELECT account_id, source, week_start::text AS week_start FROM ledger WHERE idempotency_key = ${`audit:${auditId}:debit`}`
    if (!debit) return false
    await tx`SELECT id FROM accounts WHERE id = ${debit.account_id} FOR UPDATE`
    // An allowance refund counts in the week of its debit: it gives back what that week spent.
    const inserted = await tx`
      INSERT INTO ledger (id, account_id, source, delta, reason, week_start, audit_id, idempotency_key)
      VALUES (${newId('led')}, ${debit.account_id}, ${debit.source}, 1, 'refund', ${debit.week_start}::date, ${auditId}, ${`audit:${auditId}:refund`})
      ON CONFLICT (idempotency_key) DO NOTHING`
    if (inserted.count === 0) return false
    if (debit.source === 'credits') await tx`UPDATE accounts SET credits = credits + 1 WHERE id = ${debit.account_id}`
    await tx`UPDATE audits SET refunded = true WHERE id = ${auditId}`
    return true
  }
}

/** Adds credits (a purchase or a grant), once per idempotency key (e.g. the payment provider's event id). */
export async function addCredits(
  sql: Sql,
  accountId: string,
  amount: number,
  reason: 'grant' | 'purchase',
  idempotencyKey: string,
): Promise<boolean> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`credits to add must be a positive integer, got ${amount}`)
  return sql.begin(async (tx) => {
    await tx`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`
    const inserted = await tx.unsafe(
      `INSERT INTO ledger (id, account_id, source, delta, reason, week_start, idempotency_key)
       VALUES ($1, $2, 'credits', $3, $4, ${WEEK}, $5) ON CONFLICT (idempotency_key) DO NOTHING`,
      [newId('led'), accountId, amount, reason, idempotencyKey],
      PREPARED,
    )
    if (inserted.count === 0) return false
    await tx`UPDATE accounts SET credits = credits + ${amount} WHERE id = ${accountId}`
    return true
  })
}
