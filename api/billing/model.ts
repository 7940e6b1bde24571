// What billing's routes take: the fields of a Stripe event that every handler needs (checked after the
// signature: the payload is Stripe's, but typed by no one), and the kind of a checkout.
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import { CHECKOUT_KINDS, type CheckoutKind, type StripeEvent } from './service.ts'

export const StripeEventFields = t.Object({
  id: t.String({ minLength: 1, maxLength: 255 }),
  type: t.String(),
  /** Unix seconds. */
  created: t.Number(),
  data: t.Object({ object: t.Union([t.Object({}), t.Array(t.Unknown())]) }),
})

/** The event's fields every handler needs, or null when the body is not a Stripe event. */
export function asEvent(v: unknown): StripeEvent | null {
  if (!Value.Check(StripeEventFields, v)) return null
  return { id: v.id, type: v.type, created: v.created, data: { object: v.data.object as Record<string, unknown> } }
}

export const CheckoutKindParam = t.Union(CHECKOUT_KINDS.map((k) => t.Literal(k)))

export const isCheckoutKind = (kind: string): kind is CheckoutKind => Value.Check(CheckoutKindParam, kind)
