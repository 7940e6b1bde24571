-- Scan history, app listings and fix briefs.
-- Keyset pagination walks (created_at, id) newest first; these indexes serve it per account and per app,
-- and cover every query the two indexes they replace served.
CREATE INDEX scans_account_created_id ON scans (account_id, created_at DESC, id DESC);
CREATE INDEX scans_app_created_id ON scans (app_id, created_at DESC, id DESC);
DROP INDEX IF EXISTS scans_account_created;
DROP INDEX IF EXISTS scans_app_created;

-- The few response headers and page facts that name the hosting platform (shared/platform.ts), recorded by
-- the worker so a fix brief can target vercel.json, netlify.toml, next.config.js, nginx or Cloudflare.
ALTER TABLE scans ADD COLUMN platform_signals jsonb;
