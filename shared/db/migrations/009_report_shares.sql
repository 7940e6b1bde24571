-- Public links to a report (/r/{slug}, /r/{slug}/badge): one per scan or audit while its owner shares it.
-- Withdrawing deletes the row, so the slug answers 404 from then on; sharing again makes a new slug.
-- The slug is 128 random bits (base62): unguessable, and never derived from the report's id.
CREATE TABLE report_shares (
  slug        text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  scan_id     text REFERENCES scans(id) ON DELETE CASCADE,
  audit_id    text REFERENCES audits(id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((scan_id IS NULL) <> (audit_id IS NULL))
);
-- At most one live link per report, found from the report's side.
CREATE UNIQUE INDEX report_shares_scan ON report_shares (scan_id) WHERE scan_id IS NOT NULL;
CREATE UNIQUE INDEX report_shares_audit ON report_shares (audit_id) WHERE audit_id IS NOT NULL;
