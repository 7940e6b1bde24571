-- An audit's start in one statement: lock the account, decide what pays (the weekly allowance, else a
-- credit), hold the hourly cap, record the app, the audit and its debit. The same steps createAudit took in
-- eight statements of a transaction; one round trip holds the account's lock for far less time.
--
-- Each statement of a PL/pgSQL function reads as of its own start (READ COMMITTED), so the reads after the
-- lock see every debit committed before it was granted: lock first, read after, as before.
-- A refusal raises P0001 with a message 'start_audit:<code>' and the facts as JSON in DETAIL; the caller
-- turns them into its own error (shared/db/audits.ts). Nothing is written then.
CREATE OR REPLACE FUNCTION start_audit(
  p_account text,
  p_audit text,
  p_app text,
  p_ledger text,
  p_url text,
  p_origin text,
  p_options jsonb,
  p_sealed text,
  -- NULL: no hourly cap.
  p_per_hour integer,
  -- {"free": 3, ...}: audits included a week, per plan.
  p_allowances jsonb
) RETURNS SETOF audits LANGUAGE plpgsql AS $$
DECLARE
  v_week date := date_trunc('week', now() AT TIME ZONE 'UTC')::date;
  v_plan text;
  v_credits integer;
  v_used integer;
  v_source text;
  v_recent integer;
  v_oldest timestamptz;
  v_app text;
BEGIN
  PERFORM 1 FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'start_audit:not_found';
  END IF;
  SELECT a.plan, a.credits,
      COALESCE((SELECT -sum(l.delta) FROM ledger l
        WHERE l.account_id = a.id AND l.source = 'allowance' AND l.week_start = v_week), 0)::int
    INTO v_plan, v_credits, v_used
    FROM accounts a WHERE a.id = p_account;
  IF v_used < (p_allowances ->> v_plan)::int THEN
    v_source := 'allowance';
  ELSIF v_credits > 0 THEN
    v_source := 'credits';
  ELSE
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'start_audit:allowance_exhausted',
      DETAIL = json_build_object('plan', v_plan, 'credits', v_credits, 'used', v_used,
        'resetsAt', (v_week + 7)::timestamp AT TIME ZONE 'UTC')::text;
  END IF;
  IF p_per_hour IS NOT NULL THEN
    SELECT count(*)::int, min(created_at) INTO v_recent, v_oldest
      FROM audits WHERE account_id = p_account AND created_at > now() - interval '1 hour';
    IF v_recent >= p_per_hour THEN
      RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'start_audit:rate_limited',
        DETAIL = json_build_object('n', v_recent, 'oldest', v_oldest)::text;
    END IF;
  END IF;
  INSERT INTO apps (id, account_id, origin) VALUES (p_app, p_account, p_origin)
    ON CONFLICT (account_id, origin) DO UPDATE SET origin = EXCLUDED.origin
    RETURNING id INTO v_app;
  RETURN QUERY
    INSERT INTO audits (id, account_id, app_id, url, options, charged_from, auth_sealed, authenticated)
    VALUES (p_audit, p_account, v_app, p_url, p_options, v_source, p_sealed, p_sealed IS NOT NULL)
    RETURNING *;
  INSERT INTO ledger (id, account_id, source, delta, reason, week_start, audit_id, idempotency_key)
    VALUES (p_ledger, p_account, v_source, -1, 'audit', v_week, p_audit, 'audit:' || p_audit || ':debit');
  IF v_source = 'credits' THEN
    UPDATE accounts SET credits = credits - 1 WHERE id = p_account;
  END IF;
END
$$;
