// Payments through Stripe (docs/billing.md): the webhook Stripe calls, and the dashboard's checkout actions.
// Rules enforced:
//   - POST /api/webhooks/stripe: 503 with Retry-After while STRIPE_WEBHOOK_SECRET is unset (Stripe keeps
//     retrying for days, so no event is lost to a deployment not configured yet); the raw body is read
//     with the one capped reader (413 past WEBHOOK_BODY_LIMIT); Stripe-Signature is verified by the
//     `stripe` package within its 300 s tolerance, else 400; a store failure is 503, so Stripe retries;
//     every answer is JSON;
//   - POST /dashboard/api/billing/checkout/{launch|scale|credits}: the dashboard's rules (session cookie
//     only, 401 to any Authorization header, Origin and anti-CSRF token checked); 404 without
//     STRIPE_SECRET_KEY; only what the account is offered (409 otherwise); the session is created server
//     side with client_reference_id = the account, and its URL is handed back for the browser to open.
import Elysia from 'elysia'
import Stripe from 'stripe'
import type { Config } from '../../shared/config.ts'
import { getBillingAccount } from '../../shared/db/billing.ts'
import type { Sql } from '../../shared/db/index.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { dashboardGuards, json, problem } from '../dashboard/guards.ts'
import { requestBodies } from '../http/body.ts'
import { type BillingSettings, BillingService, billingView, type CheckoutCatalog, checkoutCatalog, checkoutParams } from './service.ts'
import { asEvent, isCheckoutKind } from './model.ts'
import { errorMessage } from '../../shared/errors.ts'

/** Stripe's events are a few KiB; this leaves room for large metadata and line items. */
export const WEBHOOK_BODY_LIMIT = 256 * 1024
/** How old a signed timestamp may be (Stripe's own default): a captured delivery cannot be replayed later. */
export const WEBHOOK_TOLERANCE_S = 300

export type BillingConfig = Pick<
  Config,
  | 'STRIPE_SECRET_KEY'
  | 'STRIPE_WEBHOOK_SECRET'
  | 'STRIPE_PRICE_LAUNCH'
  | 'STRIPE_PRICE_SCALE'
  | 'STRIPE_PRICE_CREDITS'
  | 'STRIPE_CREDITS_PER_PACK'
  | 'STRIPE_API_BASE'
  | 'BILLING_GRACE_DAYS'
>

export interface BillingDeps {
  sql: Sql
  baseUrl: string
  log: Logger
  config: BillingConfig
}

export const billingSettings = (c: BillingConfig): BillingSettings => ({
  prices: { launch: c.STRIPE_PRICE_LAUNCH, scale: c.STRIPE_PRICE_SCALE, credits: c.STRIPE_PRICE_CREDITS },
  creditsPerPack: c.STRIPE_CREDITS_PER_PACK,
  graceDays: c.BILLING_GRACE_DAYS,
})

/** What the dashboard may offer on this deployment; null (no buttons) without STRIPE_SECRET_KEY. */
export const checkoutCatalogFor = (c: BillingConfig): CheckoutCatalog | null => checkoutCatalog(c.STRIPE_SECRET_KEY, billingSettings(c))

/** The Stripe API client, or null without a secret key. Every request is bounded: 10 s, one retry. */
export function stripeClient(c: BillingConfig): Stripe | null {
  if (!c.STRIPE_SECRET_KEY) return null
  const base = c.STRIPE_API_BASE ? new URL(c.STRIPE_API_BASE) : null
  const protocol = base?.protocol === 'http:' ? 'http' : 'https'
  return new Stripe(c.STRIPE_SECRET_KEY, {
    timeout: 10_000,
    maxNetworkRetries: 1,
    telemetry: false,
    ...(base ? { host: base.hostname, port: Number(base.port) || (protocol === 'http' ? 80 : 443), protocol } : {}),
  })
}

export function billingRoutes(d: BillingDeps) {
  const settings = billingSettings(d.config)
  const service = new BillingService(d.sql, settings)
  return new Elysia({ name: 'billing' }).use(webhookRoutes(d, service)).use(checkoutRoutes(d, settings))
}

/** POST /api/webhooks/stripe: a signed event from Stripe, applied once. */
function webhookRoutes(d: BillingDeps, service: BillingService) {
  const secret = d.config.STRIPE_WEBHOOK_SECRET
  return new Elysia({ name: 'billing-webhook' }).use(requestBodies).post(
    '/api/webhooks/stripe',
    async ({ request, sent }) => {
      if (!secret) {
        return problem(503, 'payments_not_configured', 'Payments are not configured here (no STRIPE_WEBHOOK_SECRET).', {
          'retry-after': '3600',
        })
      }
      if (sent.kind === 'unreadable') return problem(400, 'unreadable_body', 'The request body could not be read.')
      if (sent.kind === 'too_large') return problem(413, 'payload_too_large', `A Stripe event is at most ${WEBHOOK_BODY_LIMIT} bytes here.`)
      let verified: unknown
      try {
        verified = await Stripe.webhooks.constructEventAsync(
          sent.text,
          request.headers.get('stripe-signature') ?? '',
          secret,
          WEBHOOK_TOLERANCE_S,
        )
      } catch (e) {
        if (e instanceof SyntaxError) return problem(400, 'invalid_payload', 'The signed body is not JSON.')
        const stale = /tolerance/i.test(errorMessage(e))
        return problem(
          400,
          'invalid_signature',
          stale
            ? `The Stripe-Signature timestamp is more than ${WEBHOOK_TOLERANCE_S} s old.`
            : 'The Stripe-Signature header is missing or does not match the body and the endpoint secret.',
        )
      }
      const event = asEvent(verified)
      if (!event) return problem(400, 'invalid_payload', 'The body is not a Stripe event (id, type, created, data.object).')
      try {
        const r = await service.apply(event)
        const fields = { eventId: event.id, type: event.type, outcome: r.outcome, accountId: r.accountId, detail: r.detail }
        if (r.outcome === 'ignored') d.log.warn('stripe event ignored', fields)
        else d.log.info('stripe event', fields)
        return json(200, { received: true, outcome: r.outcome })
      } catch (e) {
        d.log.error('stripe event not applied', { eventId: event.id, type: event.type, error: errorMessage(e)?.slice(0, 300) })
        return problem(503, 'unavailable', 'The event was not applied; Stripe will deliver it again.', { 'retry-after': '60' })
      }
    },
    { bodyLimit: WEBHOOK_BODY_LIMIT },
  )
}

/** POST /dashboard/api/billing/checkout/{kind}: a Checkout Session for what the account is offered. */
function checkoutRoutes(d: BillingDeps, settings: BillingSettings) {
  const catalog = checkoutCatalogFor(d.config)
  const stripe = stripeClient(d.config)
  return new Elysia({ name: 'billing-checkout' }).use(dashboardGuards(d.sql, d.baseUrl)).post(
    '/dashboard/api/billing/checkout/:kind',
    async ({ session, params: { kind } }) => {
      if (!stripe) return problem(404, 'payments_not_configured', 'Checkout is not configured on this deployment.')
      if (!isCheckoutKind(kind)) return problem(404, 'not_found', 'No such checkout.')
      const accountId = session.user.accountId
      const view = await billingView(d.sql, accountId, catalog)
      if (!view.offers.includes(kind)) {
        return problem(
          409,
          'not_offered',
          'This account is not offered that checkout: already on that plan or above, or a subscription runs.',
        )
      }
      const account = await getBillingAccount(d.sql, accountId)
      const params = checkoutParams(kind, { id: accountId, stripeCustomerId: account?.stripeCustomerId ?? null }, settings, d.baseUrl)
      try {
        // Two clicks, or two tabs, within ten minutes get the same Checkout Session (Stripe's idempotency
        // keys), so one person cannot start two subscriptions by accident.
        const window = Math.floor(Date.now() / 600_000)
        const created = await stripe.checkout.sessions.create(params, { idempotencyKey: `checkout:${accountId}:${kind}:${window}` })
        if (!created.url) throw new Error('the checkout session has no url')
        d.log.info('checkout session created', { accountId, kind, sessionId: created.id })
        return json(201, { id: created.id, url: created.url })
      } catch (e) {
        d.log.warn('checkout session not created', { accountId, kind, error: errorMessage(e)?.slice(0, 300) })
        return problem(503, 'payment_provider_unavailable', 'Stripe did not create the checkout session; try again.', {
          'retry-after': '30',
        })
      }
    },
    { session: 'action' },
  )
}
