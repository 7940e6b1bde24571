// OAuth 2.0 authorization server storage: clients, codes and mca_ tokens. Codes and tokens are looked up
// by SHA-256 hash; their plaintext never reaches the database.
import { newId, sha256Hex } from '../lib/ids.ts'
import { newSecret, OAUTH_TOKEN_PREFIX } from '../lib/keys.ts'
import type { Account, Plan, Principal } from './accounts.ts'
import type { Sql } from './index.ts'

export interface OAuthClient {
  id: string
  clientName: string
  redirectUris: string[]
  createdAt: Date
}

type ClientRow = { id: string; client_name: string; redirect_uris: string[]; created_at: Date }
const toClient = (r: ClientRow): OAuthClient => ({
  id: r.id,
  clientName: r.client_name,
  redirectUris: r.redirect_uris,
  createdAt: r.created_at,
})

export async function createClient(sql: Sql, clientName: string, redirectUris: string[]): Promise<OAuthClient> {
  const [row] = await sql<ClientRow[]>`
    INSERT INTO oauth_clients (id, client_name, redirect_uris)
    VALUES (${newId('mcl')}, ${clientName}, ${sql.json(redirectUris)})
    RETURNING *`
  return toClient(row!)
}

export async function getClient(sql: Sql, id: string): Promise<OAuthClient | null> {
  if (!/^mcl_[0-9A-Za-z]{10,40}$/.test(id)) return null
  const [row] = await sql<ClientRow[]>`SELECT * FROM oauth_clients WHERE id = ${id}`
  return row ? toClient(row) : null
}

export interface NewCode {
  clientId: string
  accountId: string
  userId: string
  redirectUri: string
  codeChallenge: string
  resource: string | null
  expiresAt: Date
}

/** Stores a code by its hash and returns the plaintext, which goes to the client once. */
export async function createCode(sql: Sql, c: NewCode): Promise<string> {
  const code = newSecret('mcc_').plaintext
  await sql`
    INSERT INTO oauth_codes (code_hash, client_id, account_id, user_id, redirect_uri, code_challenge, resource, expires_at)
    VALUES (${sha256Hex(code)}, ${c.clientId}, ${c.accountId}, ${c.userId}, ${c.redirectUri}, ${c.codeChallenge},
            ${c.resource}, ${c.expiresAt})`
  return code
}

export interface StoredCode extends NewCode {
  codeHash: string
}

export type ConsumeResult = { kind: 'consumed'; code: StoredCode } | { kind: 'reused'; codeHash: string } | { kind: 'unknown' }

/**
 * Marks a code used, atomically: of two concurrent exchanges only one sees 'consumed'. A code seen
 * before is 'reused' (the caller revokes what it issued).
 */
export async function consumeCode(sql: Sql, code: string): Promise<ConsumeResult> {
  const codeHash = sha256Hex(code)
  const [row] = await sql<
    {
      code_hash: string
      client_id: string
      account_id: string
      user_id: string
      redirect_uri: string
      code_challenge: string
      resource: string | null
      expires_at: Date
    }[]
  >`
    UPDATE oauth_codes SET used_at = now() WHERE code_hash = ${codeHash} AND used_at IS NULL
    RETURNING code_hash, client_id, account_id, user_id, redirect_uri, code_challenge, resource, expires_at`
  if (row) {
    return {
      kind: 'consumed',
      code: {
        codeHash: row.code_hash,
        clientId: row.client_id,
        accountId: row.account_id,
        userId: row.user_id,
        redirectUri: row.redirect_uri,
        codeChallenge: row.code_challenge,
        resource: row.resource,
        expiresAt: row.expires_at,
      },
    }
  }
  const [seen] = await sql`SELECT 1 FROM oauth_codes WHERE code_hash = ${codeHash}`
  return seen ? { kind: 'reused', codeHash } : { kind: 'unknown' }
}

export interface IssuedToken {
  id: string
  plaintext: string
  expiresAt: Date
}

export async function createToken(
  sql: Sql,
  t: { accountId: string; userId: string; clientId: string; clientName: string; codeHash: string; resource: string; expiresAt: Date },
): Promise<IssuedToken> {
  const secret = newSecret(OAUTH_TOKEN_PREFIX)
  const id = newId('mct')
  await sql`
    INSERT INTO oauth_tokens (id, token_hash, account_id, user_id, client_id, client_name, code_hash, resource, expires_at)
    VALUES (${id}, ${secret.hash}, ${t.accountId}, ${t.userId}, ${t.clientId}, ${t.clientName}, ${t.codeHash},
            ${t.resource}, ${t.expiresAt})`
  return { id, plaintext: secret.plaintext, expiresAt: t.expiresAt }
}

/** Revokes every token issued from a code; returns how many were live. */
export async function revokeTokensOfCode(sql: Sql, codeHash: string): Promise<number> {
  const r = await sql`UPDATE oauth_tokens SET revoked_at = now() WHERE code_hash = ${codeHash} AND revoked_at IS NULL`
  return r.count
}

type AccountRow = { id: string; name: string; plan: Plan; created_at: Date }
const toAccount = (r: AccountRow): Account => ({ id: r.id, name: r.name, plan: r.plan, createdAt: r.created_at })

export async function findPrincipalByOAuthToken(sql: Sql, plaintext: string): Promise<Principal | null> {
  const [r] = await sql<(AccountRow & { token_id: string })[]>`
    SELECT a.id, a.name, a.plan, a.created_at, t.id AS token_id
    FROM oauth_tokens t JOIN accounts a ON a.id = t.account_id
    WHERE t.token_hash = ${sha256Hex(plaintext)} AND t.revoked_at IS NULL AND t.expires_at > now()`
  return r ? { account: toAccount(r), credentialId: r.token_id, kind: 'oauth' } : null
}

/** Records use at most once a minute per token. */
export async function touchOAuthToken(sql: Sql, tokenId: string): Promise<void> {
  await sql`
    UPDATE oauth_tokens SET last_used_at = now()
    WHERE id = ${tokenId} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`
}

export interface Agent {
  clientId: string
  clientName: string
  createdAt: Date
  lastUsedAt: Date | null
  tokens: number
}

/** The agents holding live tokens for an account, newest first, named by the client that asked. */
export async function listAgents(sql: Sql, accountId: string): Promise<Agent[]> {
  const rows = await sql<{ client_id: string; client_name: string; created_at: Date; last_used_at: Date | null; tokens: number }[]>`
    SELECT client_id, (array_agg(client_name ORDER BY created_at DESC))[1] AS client_name,
           min(created_at) AS created_at, max(last_used_at) AS last_used_at, count(*)::int AS tokens
    FROM oauth_tokens
    WHERE account_id = ${accountId} AND revoked_at IS NULL AND expires_at > now()
    GROUP BY client_id ORDER BY min(created_at) DESC`
  return rows.map((r) => ({
    clientId: r.client_id,
    clientName: r.client_name,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    tokens: r.tokens,
  }))
}

/** Revokes every token one client holds for an account; returns how many. */
export async function revokeAgent(sql: Sql, accountId: string, clientId: string): Promise<number> {
  const r = await sql`
    UPDATE oauth_tokens SET revoked_at = now()
    WHERE account_id = ${accountId} AND client_id = ${clientId} AND revoked_at IS NULL`
  return r.count
}
