// The embedded default's local secrets, kept under DATA_DIR so that they survive restarts: the local API key
// (the same key at every start until it is revoked or regenerated in settings, so MCP clients configured
// with it keep working) and the local sign-in password (unless LOCAL_IDP_PASSWORD sets one). Each file is
// readable by its owner only. Only a hash of the key is in the database; the file is the one plaintext copy.
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { findPrincipalByApiKey, issueLocalStartKey } from '../shared/db/accounts.ts'
import type { Sql } from '../shared/db/index.ts'

export const LOCAL_KEY_FILE = 'local-api-key'
export const LOCAL_PASSWORD_FILE = 'local-signin-password'

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
  if (saved && (await findPrincipalByApiKey(sql, saved))) return { plaintext: saved, path, isNew: false }
  const key = await issueLocalStartKey(sql)
  writeSecret(path, key.plaintext)
  return { plaintext: key.plaintext, path, isNew: true }
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
