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
import { readRequestText } from '../../shared/lib/http-body.ts'
import type { Logger } from '../../shared/lib/log.ts'
import { csrfProblem, currentSession } from '../signin/session.ts'
import {
  type BillingSettings,
  BillingService,
  billingView,
  CHECKOUT_KINDS,
  type CheckoutCatalog,
  type CheckoutKind,
  checkoutCatalog,
  checkoutParams,
  type StripeEvent,
} from './service.ts'
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

const jsonHeaders = {
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
}
const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { ...jsonHeaders, ...extra } })
const problem = (status: number, code: string, message: string, extra: Record<string, string> = {}) =>
  json(status, { error: code, message }, extra)

/** The fields every handled event needs, checked after the signature (the payload is Stripe's, but typed by no one). */
function asEvent(v: unknown): StripeEvent | null {
  const e = v as Partial<StripeEvent> | null
  if (!e || typeof e !== 'object' || typeof e.id !== 'string' || !e.id || e.id.length > 255) return null
  if (typeof e.type !== 'string' || typeof e.created !== 'number' || !Number.isFinite(e.created)) return null
  const object = e.data?.object
  if (!object || typeof object !== 'object') return null
  return { id: e.id, type: e.type, created: e.created, data: { object } }
}

export function billingRoutes(d: BillingDeps) {
  const settings = billingSettings(d.config)
  const service = new BillingService(d.sql, settings)
  const catalog = checkoutCatalogFor(d.config)
  const stripe = stripeClient(d.config)
  const secret = d.config.STRIPE_WEBHOOK_SECRET

  async function webhook(req: Request): Promise<Response> {
    if (!secret) {
      return problem(503, 'payments_not_configured', 'Payments are not configured here (no STRIPE_WEBHOOK_SECRET).', {
        'retry-after': '3600',
      })
    }
    let body: string | null
    try {
      body = await readRequestText(req, WEBHOOK_BODY_LIMIT)
    } catch {
      return problem(400, 'unreadable_body', 'The request body could not be read.')
    }
    if (body === null) return problem(413, 'payload_too_large', `A Stripe event is at most ${WEBHOOK_BODY_LIMIT} bytes here.`)
    let verified: unknown
    try {
      verified = await Stripe.webhooks.constructEventAsync(body, req.headers.get('stripe-signature') ?? '', secret, WEBHOOK_TOLERANCE_S)
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
  }

  async function checkout(req: Request, kind: string): Promise<Response> {
    if (req.headers.get('authorization') !== null) {
      return problem(401, 'bearer_not_accepted', 'Dashboard routes accept only a signed-in session, never a bearer token.')
    }
    const s = await currentSession(d.sql, req)
    if (!s) return problem(401, 'not_signed_in', 'Sign in at /auth/login.')
    const why = csrfProblem(req, d.baseUrl, s, req.headers.get('x-csrf-token'))
    if (why) return problem(403, 'csrf', `Refused: ${why}.`)
    if (!stripe) return problem(404, 'payments_not_configured', 'Checkout is not configured on this deployment.')
    if (!(CHECKOUT_KINDS as readonly string[]).includes(kind)) return problem(404, 'not_found', 'No such checkout.')
    const accountId = s.user.accountId
    const view = await billingView(d.sql, accountId, catalog)
    if (!view.offers.includes(kind as CheckoutKind)) {
      return problem(
        409,
        'not_offered',
        'This account is not offered that checkout: already on that plan or above, or a subscription runs.',
      )
    }
    const account = await getBillingAccount(d.sql, accountId)
    const params = checkoutParams(
      kind as CheckoutKind,
      { id: accountId, stripeCustomerId: account?.stripeCustomerId ?? null },
      settings,
      d.baseUrl,
    )
    try {
      // Two clicks, or two tabs, within ten minutes get the same Checkout Session (Stripe's idempotency
      // keys), so one person cannot start two subscriptions by accident.
      const window = Math.floor(Date.now() / 600_000)
      const session = await stripe.checkout.sessions.create(params, { idempotencyKey: `checkout:${accountId}:${kind}:${window}` })
      if (!session.url) throw new Error('the checkout session has no url')
      d.log.info('checkout session created', { accountId, kind, sessionId: session.id })
      return json(201, { id: session.id, url: session.url })
    } catch (e) {
      d.log.warn('checkout session not created', { accountId, kind, error: errorMessage(e)?.slice(0, 300) })
      return problem(503, 'payment_provider_unavailable', 'Stripe did not create the checkout session; try again.', { 'retry-after': '30' })
    }
  }

  return new Elysia({ name: 'billing' })
    .post('/api/webhooks/stripe', ({ request }) => webhook(request), { parse: 'none' })
    .post('/dashboard/api/billing/checkout/:kind', ({ request, params }) => checkout(request, params.kind), { parse: 'none' })
}
