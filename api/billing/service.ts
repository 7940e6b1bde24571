// What Stripe events do to an account, and what a checkout asks Stripe for, on plain values (docs/billing.md).
// Rules enforced:
//   - each event applies once: its id is recorded in the transaction of its effect (a credit purchase:
//     the ledger row keyed by the event id is that record), so a replay or a concurrent delivery is a no-op;
//   - Stripe delivers in no set order: an event older than the last one that set the plan (or started or
//     ended a grace period) changes nothing;
//   - a subscription event only moves the plan of the account whose current subscription it is, except a
//     new subscription turning active, which takes over (an old one cancelled later cannot demote it);
//   - after a failed renewal the plan stays for the grace period, then the account is on free
//     (expireGracePeriods: called for an account when its billing is shown, and meant for /api/cron/*).
import { type Plan, PLANS } from '../../shared/db/accounts.ts'
import {
  accountExists,
  type BillingAccount,
  claimEvent,
  endGrace,
  eventRecorded,
  expireGracePeriods,
  getBillingAccount,
  lockBillingAccount,
  recordEvent,
  setPlan,
  settleEvent,
  startGrace,
} from '../../shared/db/billing.ts'
import type { Sql } from '../../shared/db/index.ts'
import { addCredits, getBalance, type Tx } from '../../shared/db/ledger.ts'

export { expireGracePeriods }

/** What this deployment sells: Stripe price ids ('' when not sold) and the size of a credit pack. */
export interface BillingSettings {
  prices: { launch: string; scale: string; credits: string }
  creditsPerPack: number
  graceDays: number
}

/** A Stripe event as it arrives, after its signature was verified. */
export interface StripeEvent {
  id: string
  type: string
  /** Unix seconds. */
  created: number
  data: { object: Record<string, unknown> }
}

export type EventResult = {
  /** unhandled: a type we do not act on, not recorded; duplicate: recorded before, nothing done. */
  outcome: 'applied' | 'ignored' | 'duplicate' | 'unhandled'
  accountId: string | null
  detail: string
}

export const HANDLED_EVENTS = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.payment_failed',
  'invoice.paid',
] as const

type PaidPlan = 'launch' | 'scale'
/** Paid plans in ascending order: what an upgrade may move to. */
const PAID: readonly PaidPlan[] = ['launch', 'scale']
const isPaid = (p: unknown): p is PaidPlan => (PAID as readonly unknown[]).includes(p)
/** Subscription states that end the paid plan at once (unpaid: Stripe gave up retrying). */
const ENDED = new Set(['canceled', 'unpaid', 'incomplete_expired', 'paused'])
const LIVE = new Set(['active', 'trialing'])

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)
/** Stripe sends a related object as its id, or expanded with its id inside. */
const idOf = (v: unknown): string | null => str(v) ?? (v && typeof v === 'object' ? str((v as { id?: unknown }).id) : null)
const rec = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {})
const meta = (o: Record<string, unknown>) => rec(o.metadata)

type Outcome = { outcome: 'applied' | 'ignored'; accountId: string | null; detail: string }
const ignored = (detail: string, accountId: string | null = null): Outcome => ({ outcome: 'ignored', accountId, detail })
const applied = (detail: string, accountId: string): Outcome => ({ outcome: 'applied', accountId, detail })

export class BillingService {
  constructor(
    private sql: Sql,
    private settings: BillingSettings,
  ) {}

  /** Applies one verified event at most once. Throws only when the store fails (the caller answers 503). */
  async apply(event: StripeEvent): Promise<EventResult> {
    if (!(HANDLED_EVENTS as readonly string[]).includes(event.type)) {
      return { outcome: 'unhandled', accountId: null, detail: `${event.type} is not acted on` }
    }
    const object = event.data.object
    const created = new Date(event.created * 1000)
    if (event.type.startsWith('checkout.session.') && object.mode === 'payment') return this.creditPurchase(event, object, created)
    return this.sql.begin(async (tx) => {
      if (!(await claimEvent(tx, { id: event.id, type: event.type, created }))) {
        return { outcome: 'duplicate' as const, accountId: null, detail: 'applied before' }
      }
      const r = await this.decide(tx, event.type, object, created)
      await settleEvent(tx, event.id, r.accountId, r.outcome, r.detail)
      return r
    })
  }

  private decide(tx: Tx, type: string, o: Record<string, unknown>, at: Date): Promise<Outcome> {
    if (type === 'checkout.session.completed') return this.subscriptionCheckout(tx, o, at)
    if (type === 'customer.subscription.deleted') return this.subscriptionChange(tx, o, at, true)
    if (type.startsWith('customer.subscription.')) return this.subscriptionChange(tx, o, at, false)
    if (type === 'invoice.payment_failed') return this.paymentFailed(tx, o, at)
    if (type === 'invoice.paid') return this.invoicePaid(tx, o, at)
    return Promise.resolve(ignored(`${type} has nothing to change here`))
  }

  /**
   * A credit pack: addCredits keys its ledger row by the event id, in the transaction that adds the
   * credits, so a second delivery (even one racing this) adds nothing; the event row is written after.
   */
  private async creditPurchase(event: StripeEvent, o: Record<string, unknown>, at: Date): Promise<EventResult> {
    const e = { id: event.id, type: event.type, created: at }
    if (await eventRecorded(this.sql, event.id)) return { outcome: 'duplicate', accountId: null, detail: 'applied before' }
    const accountId = str(o.client_reference_id) ?? str(meta(o).accountId)
    const credits = Number(meta(o).credits)
    let r: Outcome
    if (meta(o).kind !== 'credits' || !Number.isInteger(credits) || credits <= 0) r = ignored('not a credit purchase of ours')
    else if (o.payment_status !== 'paid') r = ignored(`payment ${String(o.payment_status)}: credits follow its async_payment_succeeded`)
    else if (!accountId || !(await accountExists(this.sql, accountId))) r = ignored('no account for this checkout')
    else if (!(await addCredits(this.sql, accountId, credits, 'purchase', `stripe:${event.id}`))) {
      // Another delivery added them (racing this one, or one that stopped before recording the event).
      await recordEvent(this.sql, e, accountId, 'applied', `${credits} credits added`)
      return { outcome: 'duplicate', accountId, detail: 'applied before' }
    } else r = applied(`${credits} credits added`, accountId)
    await recordEvent(this.sql, e, r.accountId, r.outcome, r.detail)
    return r
  }

  /** A subscription checkout: links the customer and subscription to the account and sets the plan. */
  private async subscriptionCheckout(tx: Tx, o: Record<string, unknown>, at: Date): Promise<Outcome> {
    if (o.mode !== 'subscription') return ignored(`a ${String(o.mode)} checkout changes no plan`)
    const account = await lockBillingAccount(tx, {
      accountId: str(o.client_reference_id) ?? str(meta(o).accountId),
      customerId: idOf(o.customer),
    })
    if (!account) return ignored('no account for this checkout')
    const plan = meta(o).plan
    if (!isPaid(plan)) return ignored('the checkout names no paid plan', account.id)
    if (o.payment_status !== 'paid' && o.payment_status !== 'no_payment_required') {
      return ignored(`payment ${String(o.payment_status)}: the subscription's own events set the plan`, account.id)
    }
    if (olderThan(at, account.planEventAt)) return ignored('older than the last plan change', account.id)
    const subscriptionId = idOf(o.subscription)
    await setPlan(tx, account.id, {
      plan,
      eventAt: at,
      customerId: idOf(o.customer) ?? undefined,
      ...(subscriptionId ? { subscriptionId } : {}),
      endGrace: !olderThan(at, account.graceEventAt),
    })
    return applied(`plan ${plan}`, account.id)
  }

  private async subscriptionChange(tx: Tx, sub: Record<string, unknown>, at: Date, deleted: boolean): Promise<Outcome> {
    const subscriptionId = str(sub.id)
    const account = await lockBillingAccount(tx, { accountId: str(meta(sub).accountId), subscriptionId, customerId: idOf(sub.customer) })
    if (!account || !subscriptionId) return ignored('no account for this subscription')
    const status = deleted ? 'canceled' : String(sub.status)
    const current = account.stripeSubscriptionId === null || account.stripeSubscriptionId === subscriptionId
    if (!current && !LIVE.has(status)) return ignored(`${status}: not the account's current subscription`, account.id)
    if (olderThan(at, account.planEventAt)) return ignored('older than the last plan change', account.id)
    const endsGrace = !olderThan(at, account.graceEventAt)
    if (ENDED.has(status)) {
      // A cancelled subscription is over; an unpaid or paused one may be paid and resumed, so it stays linked.
      const unlink = status === 'canceled' || status === 'incomplete_expired'
      await setPlan(tx, account.id, { plan: 'free', eventAt: at, ...(unlink ? { subscriptionId: null } : {}), endGrace: endsGrace })
      return applied(`${status}: plan free`, account.id)
    }
    if (!LIVE.has(status)) return ignored(`${status}: the plan stays as it is`, account.id)
    const plan = this.planOf(sub)
    if (!plan) return ignored('no price of this subscription is a plan sold here', account.id)
    await setPlan(tx, account.id, { plan, eventAt: at, customerId: idOf(sub.customer) ?? undefined, subscriptionId, endGrace: endsGrace })
    return applied(`${status}: plan ${plan}`, account.id)
  }

  private async paymentFailed(tx: Tx, invoice: Record<string, unknown>, at: Date): Promise<Outcome> {
    const found = await this.invoiceAccount(tx, invoice)
    if ('outcome' in found) return found
    const { account } = found
    if (account.plan === 'free') return ignored('the account is on free already', account.id)
    if (olderThan(at, account.graceEventAt)) return ignored('older than the last grace change', account.id)
    const until = new Date(at.getTime() + this.settings.graceDays * 86_400_000)
    await startGrace(tx, account.id, until, at)
    return applied(`grace period until ${(account.graceUntil ?? until).toISOString()}`, account.id)
  }

  private async invoicePaid(tx: Tx, invoice: Record<string, unknown>, at: Date): Promise<Outcome> {
    const found = await this.invoiceAccount(tx, invoice)
    if ('outcome' in found) return found
    const { account } = found
    if (olderThan(at, account.graceEventAt)) return ignored('older than the last grace change', account.id)
    // Recorded even with no grace running, so a failure created earlier but delivered later starts none.
    await endGrace(tx, account.id, at)
    return applied(account.graceUntil ? 'grace period ended: paid' : 'paid', account.id)
  }

  /** The account of a subscription invoice, when the subscription is its current one. */
  private async invoiceAccount(tx: Tx, invoice: Record<string, unknown>): Promise<{ account: BillingAccount } | Outcome> {
    // Since API version 2025-03-31 the subscription is under parent.subscription_details; before, at the top.
    const details = rec(rec(invoice.parent).subscription_details)
    const subscriptionId = idOf(details.subscription) ?? idOf(invoice.subscription)
    if (!subscriptionId) return ignored('not a subscription invoice')
    const account = await lockBillingAccount(tx, {
      accountId: str(meta(details).accountId),
      subscriptionId,
      customerId: idOf(invoice.customer),
    })
    if (!account) return ignored('no account for this invoice')
    if (account.stripeSubscriptionId !== subscriptionId) return ignored("not the account's current subscription", account.id)
    return { account }
  }

  /** The plan a subscription's price stands for, by the configured price ids. */
  private planOf(sub: Record<string, unknown>): Plan | null {
    const items = rec(sub.items).data
    for (const item of Array.isArray(items) ? items : []) {
      const price = idOf(rec(item).price)
      const plan = PAID.find((p) => price !== null && this.settings.prices[p] === price)
      if (plan) return plan
    }
    return null
  }
}

const olderThan = (at: Date, last: Date | null) => last !== null && at.getTime() < last.getTime()

// --- checkout ---------------------------------------------------------------------------------------

export type CheckoutKind = 'launch' | 'scale' | 'credits'
export const CHECKOUT_KINDS: readonly CheckoutKind[] = ['launch', 'scale', 'credits']

/** What the dashboard may offer, or null when checkout is not configured (no STRIPE_SECRET_KEY). */
export interface CheckoutCatalog {
  launch: boolean
  scale: boolean
  credits: boolean
  creditsPerPack: number
}

export function checkoutCatalog(secretKey: string, s: BillingSettings): CheckoutCatalog | null {
  if (!secretKey) return null
  return { launch: !!s.prices.launch, scale: !!s.prices.scale, credits: !!s.prices.credits, creditsPerPack: s.creditsPerPack }
}

/**
 * Which checkouts an account may start: an upgrade only to a plan above its own and only without a linked
 * subscription (changing a running subscription would bill twice: not offered here), credits always.
 */
export function offers(catalog: CheckoutCatalog | null, plan: Plan, subscribed: boolean): CheckoutKind[] {
  if (!catalog) return []
  const rank = PLANS.indexOf(plan)
  const upgrades = subscribed ? [] : PAID.filter((p) => PLANS.indexOf(p) > rank && catalog[p])
  return [...upgrades, ...(catalog.credits ? (['credits'] as const) : [])]
}

/** The parameters of Stripe's POST /v1/checkout/sessions that we send. */
export interface CheckoutParams {
  mode: 'payment' | 'subscription'
  line_items: Array<{ price: string; quantity: number }>
  client_reference_id: string
  success_url: string
  cancel_url: string
  customer?: string
  metadata: Record<string, string>
  subscription_data?: { metadata: Record<string, string> }
}

/** The checkout session of one kind of purchase for an account. */
export function checkoutParams(
  kind: CheckoutKind,
  account: { id: string; stripeCustomerId: string | null },
  s: BillingSettings,
  baseUrl: string,
): CheckoutParams {
  const common = {
    client_reference_id: account.id,
    success_url: `${baseUrl}/dashboard/settings?checkout=success#billing`,
    cancel_url: `${baseUrl}/dashboard/settings?checkout=cancelled#billing`,
    ...(account.stripeCustomerId ? { customer: account.stripeCustomerId } : {}),
  }
  if (kind === 'credits') {
    return {
      ...common,
      mode: 'payment' as const,
      line_items: [{ price: s.prices.credits, quantity: 1 }],
      metadata: { accountId: account.id, kind: 'credits', credits: String(s.creditsPerPack) },
    }
  }
  return {
    ...common,
    mode: 'subscription' as const,
    line_items: [{ price: s.prices[kind], quantity: 1 }],
    metadata: { accountId: account.id, kind: 'plan', plan: kind },
    // Copied onto the subscription, so its own events name the account even before the checkout's arrives.
    subscription_data: { metadata: { accountId: account.id } },
  }
}

// --- the dashboard's view ---------------------------------------------------------------------------

export interface BillingView {
  plan: Plan
  allowance: number
  used: number
  /** Audits left in this week's allowance. */
  left: number
  credits: number
  resetsAt: string
  /** Set while a failed renewal's grace period runs: the plan stays until then. */
  graceUntil: string | null
  subscribed: boolean
  offers: CheckoutKind[]
  creditsPerPack: number
}

/** Plan, allowance and credits of one account; a grace period that ran out ends first, so the page is true. */
export async function billingView(sql: Sql, accountId: string, catalog: CheckoutCatalog | null, now = new Date()): Promise<BillingView> {
  await expireGracePeriods(sql, now, accountId)
  const b = await getBalance(sql, accountId)
  const account = await getBillingAccount(sql, accountId)
  const subscribed = !!account?.stripeSubscriptionId
  return {
    plan: b.plan,
    allowance: b.allowance,
    used: b.used,
    left: Math.max(0, b.allowance - b.used),
    credits: b.credits,
    resetsAt: b.resetsAt,
    graceUntil: account?.graceUntil ? account.graceUntil.toISOString() : null,
    subscribed,
    offers: offers(catalog, b.plan, subscribed),
    creditsPerPack: catalog?.creditsPerPack ?? 0,
  }
}
