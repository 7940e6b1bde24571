-- What get_audit's default answer reads of a completed audit, computed once when it completes: the result
-- without its lists, every finding's severity and status, the first findings and third parties, and each
-- list's length. A few KB, so the answer never reads (and detoasts) the whole result, which is megabytes for
-- a large audit. NULL for audits completed before this column: their summary is read from result.
ALTER TABLE audits ADD COLUMN IF NOT EXISTS summary jsonb;
