-- Accounts, their API keys, the apps they scan and the scans themselves.
CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL DEFAULT '',
  plan        text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'launch', 'scale')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  key_hash        text NOT NULL UNIQUE,
  display_prefix  text NOT NULL,
  label           text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_used_at    timestamptz,
  revoked_at      timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE apps (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  origin      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, origin)
);

CREATE TABLE scans (
  id           text PRIMARY KEY,
  account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  app_id       text NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  url          text NOT NULL,
  status       text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  score        integer,
  grade        text,
  report       jsonb,
  error        jsonb,
  attempts     integer NOT NULL DEFAULT 0,
  worker       text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  started_at   timestamptz,
  finished_at  timestamptz
);
CREATE INDEX scans_account_created ON scans (account_id, created_at DESC);
CREATE INDEX scans_app_created ON scans (app_id, created_at DESC);
CREATE INDEX scans_unfinished ON scans (status) WHERE status IN ('queued', 'running');
