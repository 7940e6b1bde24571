// People who sign in through the identity provider, and their dashboard sessions. A session cookie is
// stored as its SHA-256 hash only.
import { randomBytes } from 'node:crypto'
import { base62, newId, sha256Hex } from '../lib/ids.ts'
import { createAccount } from './accounts.ts'
import type { Sql } from './index.ts'

export interface User {
  id: string
  accountId: string
  issuer: string
  subject: string
  email: string
  name: string
}

type UserRow = { id: string; account_id: string; issuer: string; subject: string; email: string; name: string }
const toUser = (r: UserRow): User => ({
  id: r.id,
  accountId: r.account_id,
  issuer: r.issuer,
  subject: r.subject,
  email: r.email,
  name: r.name,
})

/**
 * The user for an identity-provider subject; a subject seen for the first time gets a new free account.
 * Concurrent first sign-ins of one subject end with one user (the unique (issuer, subject) decides).
 */
export async function upsertUser(sql: Sql, claims: { issuer: string; subject: string; email: string; name: string }): Promise<User> {
  const [existing] = await sql<UserRow[]>`
    UPDATE users SET email = ${claims.email}, name = ${claims.name}, last_login_at = now()
    WHERE issuer = ${claims.issuer} AND subject = ${claims.subject} RETURNING *`
  if (existing) return toUser(existing)
  return sql.begin(async (tx) => {
    const account = await createAccount(tx as unknown as Sql, 'free', claims.email || claims.name || claims.subject)
    const [row] = await tx<UserRow[]>`
      INSERT INTO users (id, account_id, issuer, subject, email, name, last_login_at)
      VALUES (${newId('usr')}, ${account.id}, ${claims.issuer}, ${claims.subject}, ${claims.email}, ${claims.name}, now())
      ON CONFLICT (issuer, subject) DO UPDATE SET last_login_at = now()
      RETURNING *`
    if (row!.account_id !== account.id) await tx`DELETE FROM accounts WHERE id = ${account.id}`
    return toUser(row!)
  }) as Promise<User>
}

/**
 * Records a provider subject as a user of the given account, whatever account it had before: the embedded
 * default's local user belongs to the local account, so what its key scans shows on its dashboard.
 */
export async function linkUser(
  sql: Sql,
  claims: { issuer: string; subject: string; email: string; name: string },
  accountId: string,
): Promise<{ user: User; previousAccountId: string | null }> {
  const [before] = await sql<{ account_id: string }[]>`
    SELECT account_id FROM users WHERE issuer = ${claims.issuer} AND subject = ${claims.subject}`
  const [row] = await sql<UserRow[]>`
    INSERT INTO users (id, account_id, issuer, subject, email, name)
    VALUES (${newId('usr')}, ${accountId}, ${claims.issuer}, ${claims.subject}, ${claims.email}, ${claims.name})
    ON CONFLICT (issuer, subject) DO UPDATE SET account_id = EXCLUDED.account_id
    RETURNING *`
  const previous = before && before.account_id !== accountId ? before.account_id : null
  return { user: toUser(row!), previousAccountId: previous }
}

export interface SignInSession {
  id: string
  user: User
  csrfToken: string
  expiresAt: Date
}

/** Creates a session and returns the cookie value, which exists only in the browser afterwards. */
export async function createSession(
  sql: Sql,
  userId: string,
  ttlSeconds: number,
): Promise<{ cookie: string; session: { id: string; csrfToken: string; expiresAt: Date } }> {
  const cookie = base62(randomBytes(32))
  const id = newId('ses')
  const csrfToken = base62(randomBytes(24))
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000)
  await sql`
    INSERT INTO user_sessions (id, token_hash, user_id, csrf_token, expires_at)
    VALUES (${id}, ${sha256Hex(cookie)}, ${userId}, ${csrfToken}, ${expiresAt})`
  return { cookie, session: { id, csrfToken, expiresAt } }
}

export async function findSession(sql: Sql, cookie: string): Promise<SignInSession | null> {
  if (!/^[0-9A-Za-z]{40,50}$/.test(cookie)) return null
  const [r] = await sql<(UserRow & { session_id: string; csrf_token: string; expires_at: Date })[]>`
    SELECT u.*, s.id AS session_id, s.csrf_token, s.expires_at
    FROM user_sessions s JOIN users u ON u.id = s.user_id
    WHERE s.token_hash = ${sha256Hex(cookie)} AND s.expires_at > now()`
  return r ? { id: r.session_id, user: toUser(r), csrfToken: r.csrf_token, expiresAt: r.expires_at } : null
}

export async function deleteSession(sql: Sql, sessionId: string): Promise<void> {
  await sql`DELETE FROM user_sessions WHERE id = ${sessionId}`
}
