// The embedded default's local identity and secrets, kept under DATA_DIR so that they survive restarts: one
// local account that both the local API key and the local sign-in user belong to (what an MCP client scans
// with the key shows on the dashboard), the key itself (the same at every start until it is revoked; when it
// is regenerated in settings the new one is kept in its place, so MCP clients configured with it keep
// working) and the local sign-in password (unless LOCAL_IDP_PASSWORD sets one). Each file is readable by its
// owner only. Only a hash of the key is in the database; the file is the one plaintext copy.
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { findPrincipalByApiKey, issueLocalStartKey, LOCAL_KEY_LABEL, localAccountId } from '../shared/db/accounts.ts'
import type { Sql } from '../shared/db/index.ts'
import { linkUser } from '../shared/db/users.ts'

export const LOCAL_KEY_FILE = 'local-api-key'
export const LOCAL_PASSWORD_FILE = 'local-signin-password'
export const LOCAL_SECRETS_KEY_FILE = 'secrets-key'

function readSecret(path: string): string | null {
  if (!existsSync(path)) return null
  const value = readFileSync(path, 'utf8').trim()
  return value || null
}

function writeSecret(path: string, value: string): void {
  // A file left readable by others (by hand, or an older copy) is made owner-only before the secret goes in;
  // the mode below applies to a new file.
  if (existsSync(path)) chmodSync(path, 0o600)
  writeFileSync(path, `${value}\n`, { mode: 0o600 })
}

/** The local key from DATA_DIR while it still works; otherwise a new one (earlier local keys revoked), saved there. */
export async function localApiKey(sql: Sql, dataDir: string): Promise<{ plaintext: string; path: string; isNew: boolean }> {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCAL_KEY_FILE)
  const saved = readSecret(path)
  const accountId = await localAccountId(sql)
  // Only a live key of the local account counts: a file holding another account's key is replaced.
  if (saved && (await findPrincipalByApiKey(sql, saved))?.account.id === accountId) return { plaintext: saved, path, isNew: false }
  const key = await issueLocalStartKey(sql)
  writeSecret(path, key.plaintext)
  return { plaintext: key.plaintext, path, isNew: true }
}

/**
 * The embedded default's SECRETS_KEY when none is configured: 32 random bytes made on first start and kept in
 * DATA_DIR (owner-only), beside the database whose secrets it seals, so connected repositories and
 * authenticated audits work out of the box and survive a restart.
 */
export function localSecretsKey(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCAL_SECRETS_KEY_FILE)
  const saved = readSecret(path)
  if (saved) return saved
  const key = randomBytes(32).toString('base64')
  writeSecret(path, key)
  return key
}

/** LOCAL_IDP_PASSWORD when set; else the password saved in DATA_DIR, made on first start. */
export function localSignInPassword(dataDir: string, configured: string): { password: string; path: string | null } {
  if (configured) return { password: configured, path: null }
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCAL_PASSWORD_FILE)
  const saved = readSecret(path)
  if (saved) return { password: saved, path }
  const password = randomBytes(12).toString('base64url')
  writeSecret(path, password)
  return { password, path }
}

/** Keeps a regenerated local key in place of the old one (settings → Regenerate), so the next start uses it; returns where. */
export function keepLocalKey(dataDir: string, key: { plaintext: string; label: string }): string | null {
  if (key.label !== LOCAL_KEY_LABEL) return null
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCAL_KEY_FILE)
  writeSecret(path, key.plaintext)
  return path
}

/**
 * Makes the local sign-in user (issuer and subject as the local provider reports them) a user of the local
 * account. A user that an earlier version gave an account of its own is moved; that account's id is returned.
 */
export async function linkLocalUser(
  sql: Sql,
  identity: { issuer: string; subject: string; email: string },
): Promise<{ accountId: string; previousAccountId: string | null }> {
  const accountId = await localAccountId(sql)
  const { previousAccountId } = await linkUser(sql, { ...identity, name: 'Local developer' }, accountId)
  return { accountId, previousAccountId }
}
