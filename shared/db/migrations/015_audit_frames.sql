-- The replay of an audit's crawl: one small still of each page as it was judged (a JPEG about 480 pixels
-- wide), with when and where, up to a cap per audit (crawler/audit-worker.ts, REPLAY_LIMITS). Deleted with
-- the audit, so they expire with its retention; shown only to its owner, or on its public report if shared.
CREATE TABLE IF NOT EXISTS audit_frames (
  audit_id  text NOT NULL REFERENCES audits(id) ON DELETE CASCADE,
  seq       integer NOT NULL,
  at        timestamptz NOT NULL DEFAULT now(),
  url       text NOT NULL,
  jpeg      bytea NOT NULL,
  PRIMARY KEY (audit_id, seq)
);
