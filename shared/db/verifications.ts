// Site verifications: one token per account and app (origin). A row exists from the first verify_site
// call; verified_at is set once the token was found on the site and is never cleared by a later check.
import type { Sql } from './index.ts'

export const VERIFICATION_METHODS = ['meta', 'file', 'dns'] as const
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number]

export interface SiteVerification {
  accountId: string
  appId: string
  token: string
  method: VerificationMethod | null
  verifiedAt: Date | null
  createdAt: Date
}

type Raw = {
  account_id: string
  app_id: string
  token: string
  method: VerificationMethod | null
  verified_at: Date | null
  created_at: Date
}

const toVerification = (r: Raw): SiteVerification => ({
  accountId: r.account_id,
  appId: r.app_id,
  token: r.token,
  method: r.method,
  verifiedAt: r.verified_at,
  createdAt: r.created_at,
})

/**
 * The verification row of an app, created with `newToken` when there is none yet. Concurrent first
 * calls agree on one token: the loser of the insert race reads the winner's row. `created` tells
 * whether this call made the row.
 */
export async function ensureVerification(
  sql: Sql,
  accountId: string,
  appId: string,
  newToken: string,
): Promise<{ verification: SiteVerification; created: boolean }> {
  const inserted = await sql<Raw[]>`
    INSERT INTO site_verifications (account_id, app_id, token) VALUES (${accountId}, ${appId}, ${newToken})
    ON CONFLICT (account_id, app_id) DO NOTHING
    RETURNING *`
  if (inserted[0]) return { verification: toVerification(inserted[0]), created: true }
  const [row] = await sql<Raw[]>`SELECT * FROM site_verifications WHERE account_id = ${accountId} AND app_id = ${appId}`
  return { verification: toVerification(row!), created: false }
}

/** Marks the app verified by `method`. Idempotent: the first verification's time and method stay. */
export async function markVerified(
  sql: Sql,
  accountId: string,
  appId: string,
  method: VerificationMethod,
): Promise<SiteVerification | null> {
  const [row] = await sql<Raw[]>`
    UPDATE site_verifications
    SET verified_at = COALESCE(verified_at, now()), method = COALESCE(method, ${method})
    WHERE account_id = ${accountId} AND app_id = ${appId}
    RETURNING *`
  return row ? toVerification(row) : null
}

/** Whether this account has verified the app at `origin` (scheme://host[:port], as URL#origin gives it). */
export async function isVerified(sql: Sql, accountId: string, origin: string): Promise<boolean> {
  const rows = await sql<{ one: number }[]>`
    SELECT 1 AS one FROM site_verifications v JOIN apps a ON a.id = v.app_id
    WHERE v.account_id = ${accountId} AND a.account_id = ${accountId} AND a.origin = ${origin}
      AND v.verified_at IS NOT NULL`
  return rows.length > 0
}
