// The SQL of payments (docs/billing.md): Stripe events recorded once, the account's Stripe customer and
// subscription, its plan and its grace period. Every function that changes an account runs inside the
// caller's transaction, after lockBillingAccount, so two events for one account apply one after the other.
import type postgres from 'postgres'
import type { Plan } from './accounts.ts'
import type { Sql } from './index.ts'
import type { Tx } from './ledger.ts'

/** A pool or a transaction: the reads below work on either. */
type Q = postgres.ISql

export interface BillingAccount {
  id: string
  plan: Plan
  stripeCustomerId: string | null
  stripeSubscriptionId: string | null
  graceUntil: Date | null
  /** Creation time of the last event that set the plan / started or ended a grace period. */
  planEventAt: Date | null
  graceEventAt: Date | null
}

type Row = {
  id: string
  plan: Plan
  stripe_customer_id: string | null
  stripe_subscription_id: string | null
  grace_until: Date | null
  plan_event_at: Date | null
  grace_event_at: Date | null
}

const toAccount = (r: Row): BillingAccount => ({
  id: r.id,
  plan: r.plan,
  stripeCustomerId: r.stripe_customer_id,
  stripeSubscriptionId: r.stripe_subscription_id,
  graceUntil: r.grace_until,
  planEventAt: r.plan_event_at,
  graceEventAt: r.grace_event_at,
})

const COLUMNS = 'id, plan, stripe_customer_id, stripe_subscription_id, grace_until, plan_event_at, grace_event_at'

export type EventOutcome = 'applied' | 'ignored'

/**
 * Records an event as being applied, inside the transaction of its effect. False when it was recorded
 * before: a concurrent delivery of the same event waits here on the primary key until the first one's
 * transaction ends, then finds the row and stops.
 */
export async function claimEvent(tx: Tx, e: { id: string; type: string; created: Date }): Promise<boolean> {
  const r = await tx`
    INSERT INTO stripe_events (id, type, outcome, created_at) VALUES (${e.id}, ${e.type}, 'ignored', ${e.created})
    ON CONFLICT (id) DO NOTHING`
  return r.count === 1
}

/** What a claimed event did, in the same transaction as the claim. */
export async function settleEvent(tx: Tx, id: string, accountId: string | null, outcome: EventOutcome, detail: string): Promise<void> {
  await tx`UPDATE stripe_events SET account_id = ${accountId}, outcome = ${outcome}, detail = ${detail.slice(0, 300)} WHERE id = ${id}`
}

/** Records an event whose effect was made elsewhere (a credit purchase, keyed in the ledger by the event id). */
export async function recordEvent(
  sql: Sql,
  e: { id: string; type: string; created: Date },
  accountId: string | null,
  outcome: EventOutcome,
  detail: string,
): Promise<boolean> {
  const r = await sql`
    INSERT INTO stripe_events (id, type, account_id, outcome, detail, created_at)
    VALUES (${e.id}, ${e.type}, ${accountId}, ${outcome}, ${detail.slice(0, 300)}, ${e.created})
    ON CONFLICT (id) DO NOTHING`
  return r.count === 1
}

export async function eventRecorded(sql: Q, id: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM stripe_events WHERE id = ${id}`
  return rows.length > 0
}

export async function accountExists(sql: Q, accountId: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM accounts WHERE id = ${accountId}`
  return rows.length > 0
}

/**
 * The account an event is about, locked for the rest of the transaction: the account id our checkout put
 * in the event (client_reference_id, metadata.accountId) first, then the subscription, then the customer
 * linked to an account by an earlier checkout. Null when none matches.
 */
export async function lockBillingAccount(
  tx: Tx,
  ref: { accountId?: string | null; subscriptionId?: string | null; customerId?: string | null },
): Promise<BillingAccount | null> {
  const tries: Array<[string, string | null | undefined]> = [
    ['id', ref.accountId],
    ['stripe_subscription_id', ref.subscriptionId],
    ['stripe_customer_id', ref.customerId],
  ]
  for (const [column, value] of tries) {
    if (!value) continue
    const [row] = await tx.unsafe<Row[]>(`SELECT ${COLUMNS} FROM accounts WHERE ${column} = $1 FOR UPDATE`, [value])
    if (row) return toAccount(row)
  }
  return null
}

/**
 * Sets the plan from a subscription event and links the Stripe ids given (an absent one stays as it is; a
 * null subscription unlinks it); `endGrace` also ends a running grace period. A customer or subscription linked to
 * another account is moved here: the newest checkout decides whose it is.
 */
export async function setPlan(
  tx: Tx,
  accountId: string,
  change: { plan: Plan; eventAt: Date; customerId?: string; subscriptionId?: string | null; endGrace: boolean },
): Promise<void> {
  await tx`UPDATE accounts SET plan = ${change.plan}, plan_event_at = ${change.eventAt} WHERE id = ${accountId}`
  if (change.customerId) await linkCustomer(tx, accountId, change.customerId)
  if (change.subscriptionId) {
    await tx`UPDATE accounts SET stripe_subscription_id = NULL WHERE stripe_subscription_id = ${change.subscriptionId} AND id <> ${accountId}`
  }
  if (change.subscriptionId !== undefined) {
    await tx`UPDATE accounts SET stripe_subscription_id = ${change.subscriptionId} WHERE id = ${accountId}`
  }
  if (change.endGrace) await endGrace(tx, accountId, change.eventAt)
}

/** Links the customer who paid to the account (a credit purchase), so later events find it. */
export async function linkCustomer(tx: Tx, accountId: string, customerId: string): Promise<void> {
  await tx`UPDATE accounts SET stripe_customer_id = NULL WHERE stripe_customer_id = ${customerId} AND id <> ${accountId}`
  await tx`UPDATE accounts SET stripe_customer_id = ${customerId} WHERE id = ${accountId}`
}

/** Starts the grace period, unless one is running: later failed retries of the same invoice do not extend it. */
export async function startGrace(tx: Tx, accountId: string, until: Date, eventAt: Date): Promise<void> {
  await tx`UPDATE accounts SET grace_until = COALESCE(grace_until, ${until}), grace_event_at = ${eventAt} WHERE id = ${accountId}`
}

export async function endGrace(tx: Tx, accountId: string, eventAt: Date): Promise<void> {
  await tx`UPDATE accounts SET grace_until = NULL, grace_event_at = ${eventAt} WHERE id = ${accountId}`
}

/**
 * Ends every grace period that ran out by `now`: the account goes back to free. The subscription stays
 * linked, so a payment that succeeds later (its customer.subscription.updated turning active) restores the
 * plan. Idempotent; safe to call from several replicas at once. With `accountId`, only that account.
 */
export async function expireGracePeriods(sql: Sql, now: Date, accountId?: string): Promise<string[]> {
  const rows = accountId
    ? await sql<{ id: string }[]>`
        UPDATE accounts SET plan = 'free', grace_until = NULL
        WHERE grace_until IS NOT NULL AND grace_until <= ${now} AND id = ${accountId} RETURNING id`
    : await sql<{ id: string }[]>`
        UPDATE accounts SET plan = 'free', grace_until = NULL
        WHERE grace_until IS NOT NULL AND grace_until <= ${now} RETURNING id`
  return rows.map((r) => r.id)
}

/** The billing columns of one account, for the dashboard. */
export async function getBillingAccount(sql: Q, accountId: string): Promise<BillingAccount | null> {
  const [row] = await sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM accounts WHERE id = $1`, [accountId])
  return row ? toAccount(row) : null
}
