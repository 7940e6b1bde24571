-- Whole-site audits, the pages they crawled, and the ledger of what they cost.

-- Purchased credits. The ledger holds every change; this column is its running balance, kept in the same
-- transaction as the ledger row so a read never needs to sum the ledger.
ALTER TABLE accounts ADD COLUMN credits integer NOT NULL DEFAULT 0 CHECK (credits >= 0);

CREATE TABLE audits (
  id               text PRIMARY KEY,
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  app_id           text NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  url              text NOT NULL,
  -- maxPages, maxDepth, maxDurationSeconds, with defaults applied at creation.
  options          jsonb NOT NULL,
  status           text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  pages_discovered integer NOT NULL DEFAULT 0,
  pages_scanned    integer NOT NULL DEFAULT 0,
  pages_failed     integer NOT NULL DEFAULT 0,
  current_url      text,
  result           jsonb,
  error            jsonb,
  -- How many holders started it (a takeover after a crash counts again).
  attempts         integer NOT NULL DEFAULT 0,
  -- The worker holding it, and until when: a worker takes an audit only when this lease is free or expired.
  worker           text,
  lease_until      timestamptz,
  -- What paid for it ('allowance' or 'credits'), and whether that was given back.
  charged_from     text NOT NULL CHECK (charged_from IN ('allowance', 'credits')),
  refunded         boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  finished_at      timestamptz
);
CREATE INDEX audits_account_created ON audits (account_id, created_at DESC, id DESC);
CREATE INDEX audits_unfinished ON audits (status) WHERE status IN ('queued', 'running');

-- One row per page an audit finished; a holder that takes over after a crash resumes from these.
CREATE TABLE audit_pages (
  audit_id     text NOT NULL REFERENCES audits(id) ON DELETE CASCADE,
  url          text NOT NULL,
  final_url    text NOT NULL,
  depth        integer NOT NULL,
  http_status  integer,
  ok           boolean NOT NULL,
  error        text,
  links        jsonb NOT NULL DEFAULT '[]',
  checks       jsonb NOT NULL DEFAULT '[]',
  load_ms      integer NOT NULL DEFAULT 0,
  -- Which holder crawled it, from when to when: evidence that two holders never crawled at once.
  worker       text NOT NULL,
  started_at   timestamptz,
  stored_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (audit_id, url)
);

-- Every debit and refund of the audit allowance and of credits. The idempotency key makes a retried
-- charge or refund a no-op; the account row is locked around each write, so concurrent calls never
-- overspend.
CREATE TABLE ledger (
  id               text PRIMARY KEY,
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  source           text NOT NULL CHECK (source IN ('allowance', 'credits')),
  -- -1 for an audit's debit, +1 for its refund, +n for credits bought or granted.
  delta            integer NOT NULL CHECK (delta <> 0),
  reason           text NOT NULL CHECK (reason IN ('audit', 'refund', 'grant', 'purchase')),
  -- Monday (UTC) of the ISO week an allowance row counts in.
  week_start       date NOT NULL,
  audit_id         text REFERENCES audits(id) ON DELETE SET NULL,
  idempotency_key  text NOT NULL UNIQUE,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_account_week ON ledger (account_id, source, week_start);
