-- Directory runs (start_directory_run) as a job with a holder: queued -> running -> completed | failed,
-- the options every item is started with, the credential that started it (the run acts for it), and a
-- lease, so that when the process driving a run dies another takes it over where it stopped.
ALTER TABLE directory_runs DROP CONSTRAINT IF EXISTS directory_runs_status_check;
ALTER TABLE directory_runs ALTER COLUMN status SET DEFAULT 'queued';
ALTER TABLE directory_runs ADD CONSTRAINT directory_runs_status_check CHECK (status IN ('queued', 'running', 'completed', 'failed'));
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS options jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS credential_id text NOT NULL DEFAULT '';
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS worker text;
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS lease_until timestamptz;
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 0;
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS started_at timestamptz;
ALTER TABLE directory_runs ADD COLUMN IF NOT EXISTS error jsonb;
CREATE INDEX IF NOT EXISTS directory_runs_unfinished ON directory_runs (created_at) WHERE status IN ('queued', 'running');
