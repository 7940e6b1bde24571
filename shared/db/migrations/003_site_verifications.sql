-- Proof that an account controls an app (origin): one token per account and app, placed by the owner as
-- a meta tag, a /.well-known file or a DNS TXT record. Active probes of a site need verified_at set.
CREATE TABLE site_verifications (
  account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  app_id       text NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  token        text NOT NULL UNIQUE,
  -- How control was shown; NULL until verified.
  method       text CHECK (method IN ('meta', 'file', 'dns')),
  verified_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, app_id),
  CHECK ((method IS NULL) = (verified_at IS NULL))
);
CREATE INDEX site_verifications_app ON site_verifications (app_id);
