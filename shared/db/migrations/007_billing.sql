-- Payments through Stripe (docs/billing.md): which Stripe customer and subscription belong to an account,
-- the grace period after a failed payment, and every Stripe event applied, so each applies once.

-- Set from a subscription checkout; events that name only the customer or the subscription are tied to
-- the account through these. Unique: a customer or a subscription belongs to one account at a time.
ALTER TABLE accounts ADD COLUMN stripe_customer_id text UNIQUE;
ALTER TABLE accounts ADD COLUMN stripe_subscription_id text UNIQUE;
-- After a failed renewal the paid plan is kept until then; past it the account is on free
-- (expireGracePeriods in shared/db/billing.ts). NULL: no payment is overdue.
ALTER TABLE accounts ADD COLUMN grace_until timestamptz;
-- Stripe delivers events in no set order: the creation time of the last event that set the plan, and of
-- the last that started or ended a grace period, so an older event arriving later changes nothing.
ALTER TABLE accounts ADD COLUMN plan_event_at timestamptz;
ALTER TABLE accounts ADD COLUMN grace_event_at timestamptz;
CREATE INDEX accounts_grace_until ON accounts (grace_until) WHERE grace_until IS NOT NULL;

-- One row per Stripe event of a handled type, written in the transaction of its effect: a replayed or
-- concurrent second delivery finds the row (or waits on its key) and changes nothing.
CREATE TABLE stripe_events (
  id           text PRIMARY KEY,
  type         text NOT NULL,
  account_id   text REFERENCES accounts(id) ON DELETE SET NULL,
  -- 'applied': it changed the account; 'ignored': nothing to do (detail says why).
  outcome      text NOT NULL CHECK (outcome IN ('applied', 'ignored')),
  detail       text NOT NULL DEFAULT '',
  -- The event's own creation time at Stripe, and when it first reached us.
  created_at   timestamptz NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_events_account ON stripe_events (account_id, received_at DESC);
