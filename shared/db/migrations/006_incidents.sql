-- Incidents that operators open and resolve (`bun run admin incident ...`); /api/status/active lists the
-- unresolved ones. And what the expiry job (/api/cron/expire) needs: a mark on OAuth clients, two indexes.

CREATE TABLE incidents (
  id           text PRIMARY KEY,
  title        text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  severity     text NOT NULL DEFAULT 'minor' CHECK (severity IN ('minor', 'major', 'critical')),
  message      text CHECK (length(message) <= 2000),
  started_at   timestamptz NOT NULL DEFAULT now(),
  resolved_at  timestamptz
);
-- The public status endpoint reads only unresolved incidents, newest first.
CREATE INDEX incidents_unresolved ON incidents (started_at DESC, id DESC) WHERE resolved_at IS NULL;

-- A client "never obtained a token" must stay true after its expired tokens are deleted: the expiry job
-- sets this in the same statement that deletes them, and removes only old clients without it.
ALTER TABLE oauth_clients ADD COLUMN had_tokens boolean NOT NULL DEFAULT false;

-- The expiry job deletes by expiry time every few minutes; oauth_codes has its index already.
CREATE INDEX user_sessions_expires ON user_sessions (expires_at);
CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);
