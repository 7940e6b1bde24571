// Deleting what has outlived its use: authorization codes, sign-in sessions, mca_ tokens, OAuth clients
// registered but never used, and crawl replays past their retention. Run by /api/cron/expire (api/cron/service.ts).
//
// Every statement is safe to run twice at once: rows are picked FOR UPDATE SKIP LOCKED, so two runs delete
// disjoint rows and their counts add up to what one run would have deleted. Deletes go in batches so
// a large backlog never holds many row locks in one transaction; what a run leaves goes at the next run.
import type { Sql } from './index.ts'

/**
 * A code is kept a day past its expiry (10 minutes after issue) so that a replay within that day is still
 * recognised as a reuse and revokes the tokens issued from it (docs/decisions.md), not taken for an
 * unknown code.
 */
export const CODE_KEPT_AFTER_EXPIRY_S = 86_400
/**
 * A client registers just before it sends a person to /oauth/authorize, so one that has not obtained a
 * token a week later was abandoned, or registered by a script. (Registration is rate-limited per address,
 * but nothing else would ever remove such rows.)
 */
export const UNUSED_CLIENT_AGE_S = 7 * 86_400
/** An audit's replay (its frames, the bulk of what an audit stores) is kept this long; the audit itself stays. */
export const REPLAY_RETENTION_S = 30 * 86_400
const BATCH = 5_000
const MAX_BATCHES = 20

export interface ExpiryCounts {
  authorizationCodes: number
  signInSessions: number
  oauthTokens: number
  unusedOAuthClients: number
  replayFrames: number
}

/** Runs `deleteBatch` until a batch comes back short, at most MAX_BATCHES times; returns the total. */
async function inBatches(deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await deleteBatch()
    total += n
    if (n < BATCH) break
  }
  return total
}

export async function expireRows(sql: Sql): Promise<ExpiryCounts> {
  const authorizationCodes = await inBatches(async () => {
    const r = await sql`
      WITH doomed AS (
        SELECT code_hash FROM oauth_codes WHERE expires_at < now() - make_interval(secs => ${CODE_KEPT_AFTER_EXPIRY_S})
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      DELETE FROM oauth_codes c USING doomed WHERE c.code_hash = doomed.code_hash`
    return r.count
  })
  // Signing out deletes its row at once (shared/db/users.ts), so the sessions left to end are expired ones.
  const signInSessions = await inBatches(async () => {
    const r = await sql`
      WITH doomed AS (SELECT id FROM user_sessions WHERE expires_at < now() LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      DELETE FROM user_sessions s USING doomed WHERE s.id = doomed.id`
    return r.count
  })
  // Revoked tokens stay until they expire (90 days at most), a record of what was revoked. Their client is
  // marked in the same statement, so it never counts as "never obtained a token" once they are gone.
  const oauthTokens = await inBatches(async () => {
    const [row] = await sql<{ n: number }[]>`
      WITH doomed AS (SELECT id FROM oauth_tokens WHERE expires_at < now() LIMIT ${BATCH} FOR UPDATE SKIP LOCKED),
      gone AS (DELETE FROM oauth_tokens t USING doomed WHERE t.id = doomed.id RETURNING t.client_id),
      marked AS (UPDATE oauth_clients SET had_tokens = true WHERE id IN (SELECT client_id FROM gone) AND NOT had_tokens)
      SELECT count(*)::int AS n FROM gone`
    return row?.n ?? 0
  })
  // A client whose code or token is being written right now holds a key-share lock on its row (the foreign
  // key), so SKIP LOCKED passes it by rather than deleting it under that write.
  const unusedOAuthClients = await inBatches(async () => {
    const r = await sql`
      WITH doomed AS (
        SELECT c.id FROM oauth_clients c
        WHERE c.created_at < now() - make_interval(secs => ${UNUSED_CLIENT_AGE_S}) AND NOT c.had_tokens
          AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.client_id = c.id)
          AND NOT EXISTS (SELECT 1 FROM oauth_codes k WHERE k.client_id = c.id)
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      DELETE FROM oauth_clients c USING doomed WHERE c.id = doomed.id`
    return r.count
  })
  const replayFrames = await inBatches(async () => {
    const r = await sql`
      WITH doomed AS (
        SELECT audit_id, seq FROM audit_frames WHERE at < now() - make_interval(secs => ${REPLAY_RETENTION_S})
        LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      DELETE FROM audit_frames f USING doomed WHERE f.audit_id = doomed.audit_id AND f.seq = doomed.seq`
    return r.count
  })
  return { authorizationCodes, signInSessions, oauthTokens, unusedOAuthClients, replayFrames }
}
