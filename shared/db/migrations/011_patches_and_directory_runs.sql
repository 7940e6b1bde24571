-- Scale-plan tools: patches (create_patch), connected repositories, and directory runs
-- (start_directory_run). Secrets (a repository's token) are stored only as AES-GCM ciphertext
-- (shared/secret-box.ts); the key lives in the environment, never in the database.

-- One connected repository per account: a git URL and its token, encrypted. Connecting again replaces it.
CREATE TABLE repo_connections (
  id            text PRIMARY KEY,
  account_id    text NOT NULL UNIQUE REFERENCES accounts(id) ON DELETE CASCADE,
  -- https URL of the repository, without credentials, e.g. https://github.com/acme/site.git
  url           text NOT NULL,
  -- The branch pull requests target (the repository's default when connected).
  base_branch   text NOT NULL DEFAULT 'main',
  -- "v1.<keyId>.<iv>.<ciphertext+tag>" (base64url): never shown again after it is saved.
  token_sealed  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz
);

CREATE TABLE patches (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  -- The scan or audit whose findings the patch fixes.
  source_id     text NOT NULL,
  platform      text NOT NULL,
  status        text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'ready', 'pr_opened', 'failed')),
  -- The unified diff (git apply), the files it touches, what it fixes and what configuration cannot fix.
  diff          text,
  result        jsonb,
  repository_id text REFERENCES repo_connections(id) ON DELETE SET NULL,
  branch        text,
  pull_request  jsonb,
  error         jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX patches_account ON patches (account_id, created_at DESC);

-- A list of apps scanned or audited as one run. Items are dispatched a few at a time within the plan's
-- limits; a run's state and summary are read from its items and the scans and audits they point at.
CREATE TABLE directory_runs (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  mode          text NOT NULL CHECK (mode IN ('scan', 'audit')),
  status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE INDEX directory_runs_account ON directory_runs (account_id, created_at DESC);

CREATE TABLE directory_run_items (
  run_id        text NOT NULL REFERENCES directory_runs(id) ON DELETE CASCADE,
  position      integer NOT NULL,
  url           text NOT NULL,
  -- pending: not dispatched yet; dispatched: its scan or audit runs; done / failed: settled.
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'dispatched', 'done', 'failed')),
  scan_id       text,
  audit_id      text,
  error         jsonb,
  -- Settled outcome: score, grade and the worst findings (for the summary table).
  outcome       jsonb,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, position)
);
CREATE INDEX directory_run_items_pending ON directory_run_items (run_id) WHERE status IN ('pending', 'dispatched');
