-- Monitors (monitor_app, docs/monitors.md): one per app and account, scanned on a schedule by
-- /api/cron/monitors. Each run is a row of monitor_runs, with what got worse since the monitor's previous
-- completed scan. Nothing is sent anywhere: regressions are read through get_account and the dashboard.

-- The first slot strictly after `p_after`, in UTC: today's (daily) or this week's (weekly, 0 = Sunday) hour
-- when it is still ahead, else the next one. In SQL so that every replica and both engines agree, and so
-- that claiming a due monitor and moving it to its next slot is one statement.
CREATE FUNCTION monitor_next_run(p_schedule text, p_hour integer, p_weekday integer, p_after timestamptz)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT (CASE WHEN slot > (p_after AT TIME ZONE 'UTC') THEN slot
               WHEN p_schedule = 'weekly' THEN slot + interval '7 days'
               ELSE slot + interval '1 day' END) AT TIME ZONE 'UTC'
  FROM (SELECT date_trunc('day', p_after AT TIME ZONE 'UTC')
          + make_interval(
              days => CASE WHEN p_schedule = 'weekly'
                           THEN (p_weekday - extract(dow FROM (p_after AT TIME ZONE 'UTC'))::int + 7) % 7
                           ELSE 0 END,
              hours => p_hour) AS slot) AS s
$$;

CREATE TABLE monitors (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  app_id        text NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  -- The page scanned; its origin is the app's.
  url           text NOT NULL,
  schedule      text NOT NULL CHECK (schedule IN ('daily', 'weekly')),
  hour          integer NOT NULL CHECK (hour BETWEEN 0 AND 23),
  weekday       integer CHECK (weekday BETWEEN 0 AND 6),
  -- What a run records as an alert: regressions only, or any change (improvements too).
  notify_on     text NOT NULL DEFAULT 'regression' CHECK (notify_on IN ('regression', 'any')),
  enabled       boolean NOT NULL DEFAULT true,
  next_run_at   timestamptz NOT NULL,
  last_run_at   timestamptz,
  last_scan_id  text REFERENCES scans(id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  -- One monitor per app: calling monitor_app again updates it.
  UNIQUE (account_id, app_id),
  CHECK ((schedule = 'weekly') = (weekday IS NOT NULL))
);
-- The cron job's claim reads the due, enabled monitors in slot order.
CREATE INDEX monitors_due ON monitors (next_run_at) WHERE enabled;

CREATE TABLE monitor_runs (
  id                text PRIMARY KEY,
  monitor_id        text NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  -- NULL when no scan could be started (the target was blocked or did not resolve) or it was deleted.
  scan_id           text REFERENCES scans(id) ON DELETE SET NULL,
  -- 'pending' while its scan runs; settled (compared) by the cron job once the scan has finished.
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed')),
  score             integer,
  previous_scan_id  text,
  previous_score    integer,
  -- Items that got worse (score, a check from pass to warn or fail, a new finding), each with resolved_at
  -- set by the first later scan that no longer shows it; and items that got better.
  regressions       jsonb NOT NULL DEFAULT '[]',
  improvements      jsonb NOT NULL DEFAULT '[]',
  open_regressions  integer NOT NULL DEFAULT 0,
  -- Whether this run is an alert under the monitor's notify_on at the time it was settled.
  alert             boolean NOT NULL DEFAULT false,
  error             jsonb,
  created_at        timestamptz NOT NULL DEFAULT now(),
  settled_at        timestamptz
);
CREATE INDEX monitor_runs_monitor ON monitor_runs (monitor_id, created_at DESC, id DESC);
CREATE INDEX monitor_runs_pending ON monitor_runs (created_at) WHERE status = 'pending';
CREATE INDEX monitor_runs_open ON monitor_runs (monitor_id) WHERE open_regressions > 0;
