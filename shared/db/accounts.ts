// Accounts and their API keys. Keys are looked up by SHA-256 hash; plaintext never reaches the database.
import { newId, sha256Hex } from '../lib/ids.ts'
import { API_KEY_PREFIX, newSecret } from '../lib/keys.ts'
import type { Sql } from './index.ts'

export const PLANS = ['free', 'launch', 'scale'] as const
export type Plan = (typeof PLANS)[number]

export interface Account {
  id: string
  name: string
  plan: Plan
  createdAt: Date
}

export interface Principal {
  account: Account
  /** Which credential authenticated the call (an api_keys id), for auditing; never the secret. */
  credentialId: string
  /** session: a signed-in person acting from the dashboard. */
  kind: 'api_key' | 'oauth' | 'session'
}

type AccountRow = { id: string; name: string; plan: Plan; created_at: Date }
const toAccount = (r: AccountRow): Account => ({ id: r.id, name: r.name, plan: r.plan, createdAt: r.created_at })

export async function createAccount(sql: Sql, plan: Plan, name = ''): Promise<Account> {
  const [row] = await sql<AccountRow[]>`
    INSERT INTO accounts (id, name, plan) VALUES (${newId('acc')}, ${name}, ${plan})
    RETURNING id, name, plan, created_at`
  return toAccount(row!)
}

/** Creates a key and returns its plaintext: the only moment it exists outside the caller's hands. */
export async function createApiKey(
  sql: Sql,
  accountId: string,
  label = '',
): Promise<{ id: string; plaintext: string; displayPrefix: string }> {
  const secret = newSecret(API_KEY_PREFIX)
  const id = newId('key')
  await sql`
    INSERT INTO api_keys (id, account_id, key_hash, display_prefix, label)
    VALUES (${id}, ${accountId}, ${secret.hash}, ${secret.displayPrefix}, ${label})`
  return { id, plaintext: secret.plaintext, displayPrefix: secret.displayPrefix }
}

/** The embedded default's one local account: the key printed at start and the local sign-in user share it. */
export const LOCAL_ACCOUNT_NAME = 'local'
/** The label of the local account's key kept under DATA_DIR. */
export const LOCAL_KEY_LABEL = 'local-start'

/** The local account (created on first start, scale plan). Concurrent first calls end with one account. */
export async function localAccountId(sql: Sql): Promise<string> {
  return (await sql.begin(async (tx) => {
    // One start at a time decides, so two processes on one database never make two local accounts.
    await tx`SELECT pg_advisory_xact_lock(hashtext('appaudit:local-account'))`
    const [local] = await tx<{ id: string }[]>`SELECT id FROM accounts WHERE name = ${LOCAL_ACCOUNT_NAME} ORDER BY created_at LIMIT 1`
    return local?.id ?? (await createAccount(tx as unknown as Sql, 'scale', LOCAL_ACCOUNT_NAME)).id
  })) as string
}

/**
 * A new key for the local account, its earlier local keys revoked. The plaintext is returned once, never stored.
 */
export async function issueLocalStartKey(sql: Sql): Promise<{ id: string; plaintext: string; displayPrefix: string }> {
  const accountId = await localAccountId(sql)
  await sql`UPDATE api_keys SET revoked_at = now() WHERE account_id = ${accountId} AND label = ${LOCAL_KEY_LABEL} AND revoked_at IS NULL`
  return createApiKey(sql, accountId, LOCAL_KEY_LABEL)
}

/**
 * Replaces a key of the account by a new one with the same label (the old one stops working at once);
 * null when the account has no such live key.
 */
export async function regenerateApiKey(
  sql: Sql,
  accountId: string,
  keyId: string,
): Promise<{ id: string; plaintext: string; displayPrefix: string; label: string } | null> {
  return (await sql.begin(async (tx) => {
    const [old] = await tx<{ label: string }[]>`
      UPDATE api_keys SET revoked_at = now() WHERE id = ${keyId} AND account_id = ${accountId} AND revoked_at IS NULL RETURNING label`
    if (!old) return null
    return { ...(await createApiKey(tx as unknown as Sql, accountId, old.label)), label: old.label }
  })) as { id: string; plaintext: string; displayPrefix: string; label: string } | null
}

export async function findPrincipalByApiKey(sql: Sql, plaintext: string): Promise<Principal | null> {
  const rows = await sql<(AccountRow & { key_id: string })[]>`
    SELECT a.id, a.name, a.plan, a.created_at, k.id AS key_id
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
    WHERE k.key_hash = ${sha256Hex(plaintext)} AND k.revoked_at IS NULL`
  const r = rows[0]
  return r ? { account: toAccount(r), credentialId: r.key_id, kind: 'api_key' } : null
}

/** Records use at most once a minute per key, so a busy key does not write on every call. */
export async function touchApiKey(sql: Sql, keyId: string): Promise<void> {
  await sql`
    UPDATE api_keys SET last_used_at = now()
    WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`
}

export async function revokeApiKey(sql: Sql, accountId: string, keyId: string): Promise<boolean> {
  const r = await sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${keyId} AND account_id = ${accountId} AND revoked_at IS NULL`
  return r.count > 0
}

export async function getAccountSummary(sql: Sql, accountId: string) {
  const [row] = await sql<{ scans: number; apps: number; keys: number }[]>`
    SELECT
      (SELECT count(*)::int FROM scans WHERE account_id = ${accountId}) AS scans,
      (SELECT count(*)::int FROM apps WHERE account_id = ${accountId}) AS apps,
      (SELECT count(*)::int FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL) AS keys`
  return row!
}

/** An account by id (the dashboard acts for the signed-in user's account), or null. */
export async function getAccount(sql: Sql, accountId: string): Promise<Account | null> {
  const [row] = await sql<AccountRow[]>`SELECT id, name, plan, created_at FROM accounts WHERE id = ${accountId}`
  return row ? toAccount(row) : null
}
