-- Which cookies each crawled page set itself (Set-Cookie on its own responses, or its scripts), so an
-- audit attributes a cookie finding to the pages that set the cookie, not to every page that carried it
-- in the browser's jar. NULL: stored before pages recorded it.
ALTER TABLE audit_pages ADD COLUMN IF NOT EXISTS cookies_set jsonb;
