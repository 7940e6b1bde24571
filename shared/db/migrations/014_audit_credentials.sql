-- Credentials of an authenticated audit (audit_authenticated): cookies, headers or a login form, sealed with
-- AES-256-GCM under SECRETS_KEY and bound to the audit ("v1.<keyId>.<iv>.<ciphertext+tag>"). Read only by the
-- crawler that runs the audit, and wiped when the audit ends, whichever statement ends it.
ALTER TABLE audits ADD COLUMN IF NOT EXISTS auth_sealed text;
-- Whether the audit ran behind a login (kept after the credentials are wiped).
ALTER TABLE audits ADD COLUMN IF NOT EXISTS authenticated boolean NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION wipe_audit_credentials() RETURNS trigger AS $$
BEGIN
  IF NEW.status IN ('completed', 'failed', 'cancelled') THEN
    NEW.auth_sealed := NULL;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS audits_wipe_credentials ON audits;
CREATE TRIGGER audits_wipe_credentials BEFORE UPDATE ON audits
  FOR EACH ROW WHEN (NEW.auth_sealed IS NOT NULL) EXECUTE FUNCTION wipe_audit_credentials();
