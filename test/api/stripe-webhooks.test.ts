// POST /api/webhooks/stripe (docs/billing.md): payloads signed with the stripe package's own test helper,
// delivered over HTTP to the real service. Each event applies once (replays and concurrent deliveries
// included), a bad or stale signature is 400, and each handled event has its documented effect.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import Stripe from 'stripe'
import { billingRoutes } from '../../api/billing/index.ts'
import { expireGracePeriods } from '../../api/billing/service.ts'
import { loadConfig } from '../../shared/config.ts'
import { createAccount, type Plan } from '../../shared/db/accounts.ts'
import { getBillingAccount } from '../../shared/db/billing.ts'
import type { Sql } from '../../shared/db/index.ts'
import { getBalance } from '../../shared/db/ledger.ts'
import { createLogger } from '../../shared/lib/log.ts'
import { startService, type TestService } from '../harness/service.ts'

const SECRET = `whsec_${randomBytes(24).toString('hex')}`
const PRICES = {
  STRIPE_PRICE_LAUNCH: 'price_launch_test',
  STRIPE_PRICE_SCALE: 'price_scale_test',
  STRIPE_PRICE_CREDITS: 'price_credits_test',
}
const ENV = { ROLE: 'api', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_CREDITS_PER_PACK: '10', ...PRICES }

const rid = (prefix: string) => `${prefix}_test_${randomBytes(8).toString('hex')}`
const nowS = () => Math.floor(Date.now() / 1000)

/** A Stripe event as Stripe sends it (API version 2026-10-28). */
const stripeEvent = (type: string, object: Record<string, unknown>, created = nowS()) => ({
  id: rid('evt'),
  object: 'event',
  api_version: '2026-10-28.endive',
  created,
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type,
  data: { object },
})

const creditsCheckout = (accountId: string, credits = 10, paymentStatus = 'paid') => ({
  id: rid('cs'),
  object: 'checkout.session',
  mode: 'payment',
  status: 'complete',
  payment_status: paymentStatus,
  client_reference_id: accountId,
  customer: null,
  metadata: { accountId, kind: 'credits', credits: String(credits) },
})

const planCheckout = (accountId: string, plan: Plan, subscription: string, customer: string) => ({
  id: rid('cs'),
  object: 'checkout.session',
  mode: 'subscription',
  status: 'complete',
  payment_status: 'paid',
  client_reference_id: accountId,
  customer,
  subscription,
  metadata: { accountId, kind: 'plan', plan },
})

const subscription = (id: string, customer: string, price: string, status: string, accountId?: string) => ({
  id,
  object: 'subscription',
  customer,
  status,
  items: { object: 'list', data: [{ id: rid('si'), object: 'subscription_item', price: { id: price, object: 'price' } }] },
  metadata: accountId ? { accountId } : {},
})

const invoice = (sub: string, customer: string) => ({
  id: rid('in'),
  object: 'invoice',
  customer,
  parent: { type: 'subscription_details', subscription_details: { subscription: sub, metadata: {} } },
})

/** Signs with the stripe package's helper (its Bun build has only the async Web Crypto variant). */
const sign = (payload: string, opts: { secret?: string; timestamp?: number } = {}) =>
  Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: opts.secret ?? SECRET, timestamp: opts.timestamp })

async function deliver(svc: TestService, event: object, opts: { secret?: string; timestamp?: number; header?: string | null } = {}) {
  const payload = JSON.stringify(event)
  const header = opts.header !== undefined ? opts.header : await sign(payload, opts)
  const res = await fetch(`${svc.url}/api/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...(header === null ? {} : { 'stripe-signature': header }) },
    body: payload,
  })
  return { status: res.status, body: (await res.json()) as { received?: boolean; outcome?: string; error?: string; message?: string } }
}

let svc: TestService
let sql: Sql

beforeAll(async () => {
  svc = await startService('production', ENV)
  sql = svc.running.services.db.sql
})
afterAll(() => svc?.stop())

/** A new account on `plan`, linked to a Stripe subscription when the plan is paid (as after its checkout). */
async function paidAccount(plan: Plan = 'launch') {
  const account = await createAccount(sql, 'free')
  const sub = rid('sub')
  const cus = rid('cus')
  if (plan !== 'free')
    expect((await deliver(svc, stripeEvent('checkout.session.completed', planCheckout(account.id, plan, sub, cus)))).status).toBe(200)
  return { id: account.id, sub, cus }
}

const ledgerRows = async (accountId: string) =>
  (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId}`)[0]!.n
const planOf = async (accountId: string) => (await getBalance(sql, accountId)).plan

describe('the webhook verifies Stripe-Signature', () => {
  test('a signed credit purchase adds the pack to the account, and its replay adds nothing', async () => {
    const account = await createAccount(sql, 'free')
    const event = stripeEvent('checkout.session.completed', creditsCheckout(account.id, 10))
    const first = await deliver(svc, event)
    expect(first).toEqual({ status: 200, body: { received: true, outcome: 'applied' } })
    expect((await getBalance(sql, account.id)).credits).toBe(10)
    const [row] = await sql`SELECT delta, reason FROM ledger WHERE idempotency_key = ${`stripe:${event.id}`}`
    expect(row).toEqual({ delta: 10, reason: 'purchase' })

    const replay = await deliver(svc, event)
    expect(replay).toEqual({ status: 200, body: { received: true, outcome: 'duplicate' } })
    expect((await getBalance(sql, account.id)).credits).toBe(10)
    expect(await ledgerRows(account.id)).toBe(1)
  })

  test('a wrong secret, a body changed after signing, or no signature at all is 400 with a JSON error, and changes nothing', async () => {
    const account = await createAccount(sql, 'free')
    const event = stripeEvent('checkout.session.completed', creditsCheckout(account.id))
    const wrongSecret = await deliver(svc, event, { secret: 'whsec_not_the_endpoint_secret' })
    const tampered = await deliver(
      svc,
      { ...event, data: { object: creditsCheckout(account.id, 9999) } },
      { header: await sign(JSON.stringify(event)) },
    )
    const missing = await deliver(svc, event, { header: null })
    const garbage = await deliver(svc, event, { header: 't=abc,v1=zzz' })
    for (const r of [wrongSecret, tampered, missing, garbage]) {
      expect(r.status).toBe(400)
      expect(r.body.error).toBe('invalid_signature')
      expect(r.body.message).toContain('Stripe-Signature')
    }
    expect((await getBalance(sql, account.id)).credits).toBe(0)
    expect((await sql`SELECT 1 FROM stripe_events WHERE id = ${event.id}`).length).toBe(0)
  })

  test('a signature timestamped more than 300 s ago is 400; one inside the window is applied', async () => {
    const account = await createAccount(sql, 'free')
    const stale = await deliver(svc, stripeEvent('checkout.session.completed', creditsCheckout(account.id)), { timestamp: nowS() - 301 })
    expect(stale.status).toBe(400)
    expect(stale.body.error).toBe('invalid_signature')
    expect(stale.body.message).toContain('300 s')
    const recent = await deliver(svc, stripeEvent('checkout.session.completed', creditsCheckout(account.id)), { timestamp: nowS() - 200 })
    expect(recent.status).toBe(200)
    expect((await getBalance(sql, account.id)).credits).toBe(10)
  })

  test('a signed body that is not a Stripe event is 400 invalid_payload; a body over 256 KiB is 413', async () => {
    const notEvent = await deliver(svc, { hello: 'world' })
    expect(notEvent).toMatchObject({ status: 400, body: { error: 'invalid_payload' } })
    const huge = await deliver(svc, { ...stripeEvent('customer.created', {}), padding: 'x'.repeat(300 * 1024) })
    expect(huge).toMatchObject({ status: 413, body: { error: 'payload_too_large' } })
  })

  test('an event type not acted on is 200 and not recorded', async () => {
    const event = stripeEvent('customer.created', { id: rid('cus'), object: 'customer' })
    expect(await deliver(svc, event)).toEqual({ status: 200, body: { received: true, outcome: 'unhandled' } })
    expect((await sql`SELECT 1 FROM stripe_events WHERE id = ${event.id}`).length).toBe(0)
  })

  test('without STRIPE_WEBHOOK_SECRET the route answers 503 with Retry-After, whatever the signature', async () => {
    const config = loadConfig({ ...PRICES })
    const app = billingRoutes({ sql, baseUrl: svc.url, log: createLogger('error'), config })
    const payload = JSON.stringify(stripeEvent('customer.created', {}))
    const res = await app.handle(
      new Request('http://localhost/api/webhooks/stripe', {
        method: 'POST',
        headers: { 'stripe-signature': await sign(payload) },
        body: payload,
      }),
    )
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBeTruthy()
    expect(((await res.json()) as { error: string }).error).toBe('payments_not_configured')
  })
})

describe('each event applies once', () => {
  test('eight concurrent deliveries of one credit purchase add its credits once', async () => {
    const account = await createAccount(sql, 'free')
    const event = stripeEvent('checkout.session.completed', creditsCheckout(account.id, 10))
    const results = await Promise.all(Array.from({ length: 8 }, () => deliver(svc, event)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(results.filter((r) => r.body.outcome === 'applied').length).toBe(1)
    expect((await getBalance(sql, account.id)).credits).toBe(10)
    expect(await ledgerRows(account.id)).toBe(1)
  })

  test('eight concurrent deliveries of one plan change apply it once and record it once', async () => {
    const account = await createAccount(sql, 'free')
    const event = stripeEvent('checkout.session.completed', planCheckout(account.id, 'scale', rid('sub'), rid('cus')))
    const results = await Promise.all(Array.from({ length: 8 }, () => deliver(svc, event)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(results.filter((r) => r.body.outcome === 'applied').length).toBe(1)
    expect(results.filter((r) => r.body.outcome === 'duplicate').length).toBe(7)
    expect(await planOf(account.id)).toBe('scale')
    const rows = await sql<{ outcome: string }[]>`SELECT outcome FROM stripe_events WHERE id = ${event.id}`
    expect(rows.map((r) => r.outcome)).toEqual(['applied'])
  })
})

describe('what each event does', () => {
  test('a subscription checkout links the customer and subscription to the account and sets the plan', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const b = await getBalance(sql, id)
    expect(b.plan).toBe('launch')
    expect(b.allowance).toBe(25)
    const billing = await getBillingAccount(sql, id)
    expect(billing).toMatchObject({ stripeSubscriptionId: sub, stripeCustomerId: cus, graceUntil: null })
  })

  test('a credit checkout still unpaid adds nothing until its async_payment_succeeded', async () => {
    const account = await createAccount(sql, 'free')
    const session = creditsCheckout(account.id, 10, 'unpaid')
    expect((await deliver(svc, stripeEvent('checkout.session.completed', session))).body.outcome).toBe('ignored')
    expect((await getBalance(sql, account.id)).credits).toBe(0)
    const paid = await deliver(svc, stripeEvent('checkout.session.async_payment_succeeded', { ...session, payment_status: 'paid' }))
    expect(paid.body.outcome).toBe('applied')
    expect((await getBalance(sql, account.id)).credits).toBe(10)
  })

  test('customer.subscription.updated moves the plan by its price, and canceled or unpaid ends it', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const t = nowS()
    await deliver(svc, stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_SCALE, 'active'), t + 1))
    expect(await planOf(id)).toBe('scale')
    await deliver(svc, stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_SCALE, 'unpaid'), t + 2))
    expect(await planOf(id)).toBe('free')
    await deliver(svc, stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_LAUNCH, 'active'), t + 3))
    expect(await planOf(id)).toBe('launch')
    await deliver(svc, stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_LAUNCH, 'canceled'), t + 4))
    expect(await planOf(id)).toBe('free')
    expect((await getBillingAccount(sql, id))?.stripeSubscriptionId).toBeNull()
  })

  test('a subscription whose price is not sold here changes no plan', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const r = await deliver(
      svc,
      stripeEvent('customer.subscription.updated', subscription(sub, cus, 'price_unknown', 'active'), nowS() + 1),
    )
    expect(r.body.outcome).toBe('ignored')
    expect(await planOf(id)).toBe('launch')
  })

  test('customer.subscription.deleted returns the account to free', async () => {
    const { id, sub, cus } = await paidAccount('scale')
    const r = await deliver(
      svc,
      stripeEvent('customer.subscription.deleted', subscription(sub, cus, PRICES.STRIPE_PRICE_SCALE, 'canceled'), nowS() + 1),
    )
    expect(r.body.outcome).toBe('applied')
    expect(await planOf(id)).toBe('free')
  })

  test('the deletion of a subscription that is not the current one leaves the plan alone', async () => {
    const { id, cus } = await paidAccount('scale')
    const old = subscription(rid('sub'), cus, PRICES.STRIPE_PRICE_LAUNCH, 'canceled', id)
    const r = await deliver(svc, stripeEvent('customer.subscription.deleted', old, nowS() + 1))
    expect(r.body.outcome).toBe('ignored')
    expect(await planOf(id)).toBe('scale')
  })

  test('an event created before the last plan change, delivered after it, changes nothing', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const t = nowS()
    await deliver(svc, stripeEvent('customer.subscription.deleted', subscription(sub, cus, PRICES.STRIPE_PRICE_LAUNCH, 'canceled'), t + 10))
    const late = await deliver(
      svc,
      stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_SCALE, 'active'), t + 5),
    )
    expect(late.body.outcome).toBe('ignored')
    expect(await planOf(id)).toBe('free')
  })

  test('a subscription event naming only the customer finds the account its checkout linked', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const r = await deliver(
      svc,
      stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_SCALE, 'active'), nowS() + 1),
    )
    expect(r.body.outcome).toBe('applied')
    expect(await planOf(id)).toBe('scale')
    const stranger = await deliver(
      svc,
      stripeEvent('customer.subscription.deleted', subscription(rid('sub'), rid('cus'), 'price_x', 'canceled')),
    )
    expect(stranger.body.outcome).toBe('ignored')
  })
})

describe('the grace period after a failed payment', () => {
  test('invoice.payment_failed keeps the plan for 7 days, and later failures do not extend it', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const failedAt = nowS() + 1
    expect((await deliver(svc, stripeEvent('invoice.payment_failed', invoice(sub, cus), failedAt))).body.outcome).toBe('applied')
    const graceUntil = (await getBillingAccount(sql, id))!.graceUntil!
    expect(graceUntil.getTime()).toBe((failedAt + 7 * 86_400) * 1000)
    expect(await planOf(id)).toBe('launch')
    await deliver(svc, stripeEvent('invoice.payment_failed', invoice(sub, cus), failedAt + 3 * 86_400))
    expect((await getBillingAccount(sql, id))!.graceUntil!.getTime()).toBe(graceUntil.getTime())
  })

  test('when the grace period has run out the account is on free; before, it keeps its plan', async () => {
    const { id, sub, cus } = await paidAccount('scale')
    await deliver(svc, stripeEvent('invoice.payment_failed', invoice(sub, cus), nowS() + 1))
    const until = (await getBillingAccount(sql, id))!.graceUntil!
    expect(await expireGracePeriods(sql, new Date(until.getTime() - 60_000))).not.toContain(id)
    expect(await planOf(id)).toBe('scale')
    expect(await expireGracePeriods(sql, new Date(until.getTime() + 1_000))).toContain(id)
    const b = await getBalance(sql, id)
    expect(b.plan).toBe('free')
    expect(b.allowance).toBe(3)
    expect((await getBillingAccount(sql, id))!.graceUntil).toBeNull()
    // The subscription stays linked: a payment that goes through later brings the plan back.
    await deliver(
      svc,
      stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_SCALE, 'active'), nowS() + 2),
    )
    expect(await planOf(id)).toBe('scale')
  })

  test('invoice.paid ends the grace period, and a failure created before it but delivered after starts none', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    const t = nowS()
    await deliver(svc, stripeEvent('invoice.payment_failed', invoice(sub, cus), t + 1))
    expect((await getBillingAccount(sql, id))!.graceUntil).not.toBeNull()
    expect((await deliver(svc, stripeEvent('invoice.paid', invoice(sub, cus), t + 5))).body.outcome).toBe('applied')
    expect((await getBillingAccount(sql, id))!.graceUntil).toBeNull()
    const late = await deliver(svc, stripeEvent('invoice.payment_failed', invoice(sub, cus), t + 3))
    expect(late.body.outcome).toBe('ignored')
    expect((await getBillingAccount(sql, id))!.graceUntil).toBeNull()
  })

  test('a failed payment on an account already on free starts no grace period', async () => {
    const { id, sub, cus } = await paidAccount('launch')
    await deliver(
      svc,
      stripeEvent('customer.subscription.updated', subscription(sub, cus, PRICES.STRIPE_PRICE_LAUNCH, 'unpaid'), nowS() + 1),
    )
    const r = await deliver(svc, stripeEvent('invoice.payment_failed', invoice(sub, cus), nowS() + 2))
    expect(r.body.outcome).toBe('ignored')
    expect((await getBillingAccount(sql, id))!.graceUntil).toBeNull()
  })
})

describe('on the embedded database (PGlite, one connection)', () => {
  let embedded: TestService
  beforeAll(async () => {
    embedded = await startService('embedded', { ...ENV, OIDC_ISSUER: 'http://127.0.0.1:9/unused' })
  })
  afterAll(() => embedded?.stop())

  test('a credit purchase and a plan change each apply once, replays included', async () => {
    const esql = embedded.running.services.db.sql
    const account = await createAccount(esql, 'free')
    const credits = stripeEvent('checkout.session.completed', creditsCheckout(account.id, 10))
    const plan = stripeEvent('checkout.session.completed', planCheckout(account.id, 'launch', rid('sub'), rid('cus')))
    const outcomes = await Promise.all([credits, credits, plan, plan].map(async (e) => (await deliver(embedded, e)).body.outcome))
    expect(outcomes.sort()).toEqual(['applied', 'applied', 'duplicate', 'duplicate'])
    const b = await getBalance(esql, account.id)
    expect(b.credits).toBe(10)
    expect(b.plan).toBe('launch')
  })
})
