// The dashboard's billing section and checkout actions (docs/billing.md "Checkout"): plan, allowance and
// credits on the Settings page; Upgrade and Buy credits only when STRIPE_SECRET_KEY is set. Checkout
// Sessions are created against a local stand-in for Stripe's API (the hosted one cannot run here) that
// answers POST /v1/checkout/sessions in Stripe's documented shape and keeps the form it received.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import Stripe from 'stripe'
import { createAudit } from '../../shared/db/audits.ts'
import type { Sql } from '../../shared/db/index.ts'
import { addCredits } from '../../shared/db/ledger.ts'
import { jarFetch, signIn, startSignInService, type CookieJar, type SignInService } from '../harness/signin.ts'

const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('hex')}`
const SECRET_KEY = `sk_test_${randomBytes(12).toString('hex')}`
const PRICES = {
  STRIPE_PRICE_LAUNCH: 'price_launch_test',
  STRIPE_PRICE_SCALE: 'price_scale_test',
  STRIPE_PRICE_CREDITS: 'price_credits_test',
}

/** Stripe's API as far as Checkout goes: what it received, and a switch to make it fail. */
class StripeStandIn {
  readonly received: Array<{ path: string; authorization: string | null; form: URLSearchParams }> = []
  failing = false
  private server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const url = new URL(req.url)
      if (req.method !== 'POST' || url.pathname !== '/v1/checkout/sessions') {
        return Response.json({ error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } }, { status: 404 })
      }
      const form = new URLSearchParams(await req.text())
      this.received.push({ path: url.pathname, authorization: req.headers.get('authorization'), form })
      if (this.failing) return Response.json({ error: { type: 'api_error', message: 'stand-in failure' } }, { status: 500 })
      const id = `cs_test_${randomBytes(12).toString('hex')}`
      return Response.json({
        id,
        object: 'checkout.session',
        url: `https://checkout.stripe.com/c/pay/${id}`,
        mode: form.get('mode'),
        status: 'open',
        payment_status: 'unpaid',
        client_reference_id: form.get('client_reference_id'),
        success_url: form.get('success_url'),
        cancel_url: form.get('cancel_url'),
        customer: form.get('customer'),
        livemode: false,
        metadata: {},
      })
    },
  })
  get base() {
    return `http://127.0.0.1:${this.server.port}`
  }
  stop() {
    return this.server.stop(true)
  }
}

let standIn: StripeStandIn
let svc: SignInService
let jar: CookieJar
let csrf: string
let accountId: string
let sql: Sql

const settings = async (j = jar, s = svc) => {
  const res = await jarFetch(j, `${s.baseUrl}/dashboard/settings`)
  expect(res.status).toBe(200)
  return res.text()
}
const checkout = (kind: string, headers: Record<string, string> = {}) =>
  jarFetch(jar, `${svc.baseUrl}/dashboard/api/billing/checkout/${kind}`, {
    method: 'POST',
    headers: { origin: svc.baseUrl, 'x-csrf-token': csrf, ...headers },
  })
const cell = (html: string, id: string) => new RegExp(`<td id="${id}">([^<]*)`).exec(html)?.[1]?.trim()

beforeAll(async () => {
  standIn = new StripeStandIn()
  svc = await startSignInService('production', {
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: standIn.base,
    STRIPE_CREDITS_PER_PACK: '10',
    ...PRICES,
  })
  sql = svc.running.services.db.sql
  jar = await signIn(svc)
  csrf = /name="csrf-token" content="([^"]+)"/.exec(await settings())![1]!
  const [row] = await sql<{ account_id: string }[]>`SELECT account_id FROM users WHERE issuer = ${svc.idp.issuer}`
  accountId = row!.account_id
})
afterAll(async () => {
  await svc?.stop()
  await standIn?.stop()
})

describe('the billing section of Settings', () => {
  test('shows the plan, the audits left this week and the credits', async () => {
    await createAudit(sql, accountId, 'https://app.example/', { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 })
    await addCredits(sql, accountId, 7, 'grant', `test:grant:${accountId}`)
    const html = await settings()
    expect(cell(html, 'plan')).toBe('Free')
    expect(cell(html, 'allowance-left')).toBe('2 of 3')
    expect(cell(html, 'credits')).toBe('7')
  })

  test('offers Upgrade to Launch and Scale and Buy credits when checkout is configured', async () => {
    const html = await settings()
    expect(html).toContain('data-kind="launch"')
    expect(html).toContain('data-kind="scale"')
    expect(html).toContain('Buy 10 credits')
  })
})

describe('checkout actions', () => {
  test('Upgrade creates a subscription Checkout Session at Stripe for this account and answers its URL', async () => {
    const before = standIn.received.length
    const res = await checkout('launch')
    expect(res.status).toBe(201)
    const body = (await res.json()) as { id: string; url: string }
    expect(body.url).toStartWith('https://checkout.stripe.com/c/pay/cs_test_')
    expect(res.headers.get('cache-control')).toContain('no-store')
    expect(standIn.received.length).toBe(before + 1)
    const { form, authorization } = standIn.received.at(-1)!
    expect(authorization).toBe(`Bearer ${SECRET_KEY}`)
    expect(form.get('mode')).toBe('subscription')
    expect(form.get('line_items[0][price]')).toBe(PRICES.STRIPE_PRICE_LAUNCH)
    expect(form.get('line_items[0][quantity]')).toBe('1')
    expect(form.get('client_reference_id')).toBe(accountId)
    expect(form.get('success_url')).toBe(`${svc.baseUrl}/dashboard/settings?checkout=success#billing`)
    expect(form.get('cancel_url')).toStartWith(`${svc.baseUrl}/dashboard/settings`)
    expect(form.get('metadata[plan]')).toBe('launch')
    expect(form.get('subscription_data[metadata][accountId]')).toBe(accountId)
  })

  test('Buy credits creates a one-time payment session for one pack', async () => {
    const res = await checkout('credits')
    expect(res.status).toBe(201)
    const { form } = standIn.received.at(-1)!
    expect(form.get('mode')).toBe('payment')
    expect(form.get('line_items[0][price]')).toBe(PRICES.STRIPE_PRICE_CREDITS)
    expect(form.get('client_reference_id')).toBe(accountId)
    expect(form.get('metadata[kind]')).toBe('credits')
    expect(form.get('metadata[credits]')).toBe('10')
    expect(form.get('success_url')).toStartWith(svc.baseUrl)
  })

  test("keeps the dashboard's rules: a bearer token is 401, a missing anti-CSRF token or a foreign Origin is 403", async () => {
    const before = standIn.received.length
    expect((await checkout('launch', { authorization: `Bearer ${await svc.key()}` })).status).toBe(401)
    expect((await checkout('launch', { 'x-csrf-token': 'wrong' })).status).toBe(403)
    expect((await checkout('launch', { origin: 'https://evil.example' })).status).toBe(403)
    const anonymous = await fetch(`${svc.baseUrl}/dashboard/api/billing/checkout/launch`, {
      method: 'POST',
      headers: { origin: svc.baseUrl },
    })
    expect(anonymous.status).toBe(401)
    expect(((await anonymous.json()) as { error: string }).error).toBe('not_signed_in')
    expect((await checkout('gold')).status).toBe(404)
    expect(standIn.received.length).toBe(before)
  })

  test('Stripe failing is 503 with Retry-After and a JSON error', async () => {
    standIn.failing = true
    try {
      const res = await checkout('credits')
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBeTruthy()
      expect(((await res.json()) as { error: string }).error).toBe('payment_provider_unavailable')
    } finally {
      standIn.failing = false
    }
  })

  test('the completed checkout, signed by Stripe, moves the account to Launch: then only credits are offered', async () => {
    const sent = standIn.received.findLast((r) => r.form.get('mode') === 'subscription')!.form
    const payload = JSON.stringify({
      id: `evt_test_${randomBytes(8).toString('hex')}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: 'cs_test_done',
          object: 'checkout.session',
          mode: 'subscription',
          payment_status: 'paid',
          client_reference_id: sent.get('client_reference_id'),
          metadata: { accountId: sent.get('metadata[accountId]'), kind: 'plan', plan: sent.get('metadata[plan]') },
          customer: 'cus_test_done',
          subscription: 'sub_test_done',
        },
      },
    })
    const header = await Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: WEBHOOK_SECRET })
    const res = await fetch(`${svc.baseUrl}/api/webhooks/stripe`, {
      method: 'POST',
      headers: { 'stripe-signature': header },
      body: payload,
    })
    expect(res.status).toBe(200)
    const html = await settings()
    expect(cell(html, 'plan')).toBe('Launch')
    expect(cell(html, 'allowance-left')).toBe('24 of 25')
    expect(html).not.toContain('data-kind="scale"')
    expect(html).toContain('data-kind="credits"')
    const again = await checkout('scale')
    expect(again.status).toBe(409)
    expect(((await again.json()) as { error: string }).error).toBe('not_offered')
  })

  test('a running grace period is shown; once it has run out the page shows Free', async () => {
    await sql`UPDATE accounts SET grace_until = now() + interval '3 days' WHERE id = ${accountId}`
    const during = await settings()
    expect(during).toContain('A payment failed.')
    expect(cell(during, 'plan')).toBe('Launch')
    await sql`UPDATE accounts SET grace_until = now() - interval '1 second' WHERE id = ${accountId}`
    const after = await settings()
    expect(after).not.toContain('A payment failed.')
    expect(cell(after, 'plan')).toBe('Free')
  })
})

describe('without STRIPE_SECRET_KEY', () => {
  let plain: SignInService
  let plainJar: CookieJar
  beforeAll(async () => {
    plain = await startSignInService('production')
    plainJar = await signIn(plain)
  })
  afterAll(() => plain?.stop())

  test('the page shows plan, allowance and credits but no Upgrade or Buy credits button, and the action is 404', async () => {
    const html = await settings(plainJar, plain)
    expect(cell(html, 'plan')).toBe('Free')
    expect(cell(html, 'allowance-left')).toBe('3 of 3')
    expect(cell(html, 'credits')).toBe('0')
    expect(html).not.toContain('class="primary checkout"')
    expect(html).not.toContain('data-kind=')
    const token = /name="csrf-token" content="([^"]+)"/.exec(html)![1]!
    const res = await jarFetch(plainJar, `${plain.baseUrl}/dashboard/api/billing/checkout/credits`, {
      method: 'POST',
      headers: { origin: plain.baseUrl, 'x-csrf-token': token },
    })
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: string }).error).toBe('payments_not_configured')
  })
})
