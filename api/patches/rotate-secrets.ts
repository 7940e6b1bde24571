// Re-encrypts every stored secret (connected repositories' tokens, running authenticated audits' credentials) with the current SECRETS_KEY, during a
// key rotation (README, "Patches and connected repositories"): start every process with the new SECRETS_KEY and the old one in
// SECRETS_KEY_PREVIOUS, run `bun api/patches/rotate-secrets.ts`, then drop SECRETS_KEY_PREVIOUS. Values
// already sealed with the current key are left alone, so running it twice is harmless. Prints counts only.
import { loadConfigOrExit } from '../../shared/config.ts'
import { openDatabase, type Sql } from '../../shared/db/index.ts'
import { authPurpose } from '../../shared/protocol/audit-auth.ts'
import { resealAuditCredentials } from '../../shared/db/audits.ts'
import { SecretBox } from '../../shared/lib/secret-box.ts'
import { tokenPurpose } from './service.ts'
import { resealAll } from './store.ts'

/**
 * Re-seals what `box` holds under an older key (repository tokens, and the credentials of authenticated
 * audits still running); a value no configured key opens is counted and left.
 */
export async function rotateSecrets(sql: Sql, box: SecretBox): Promise<{ resealed: number; unreadable: number }> {
  let unreadable = 0
  const reseal = (sealed: string, purpose: string) => {
    if (!box.isStale(sealed)) return null
    try {
      return box.seal(box.open(sealed, purpose), purpose)
    } catch {
      unreadable++
      return null
    }
  }
  const tokens = await resealAll(sql, (sealed, accountId) => reseal(sealed, tokenPurpose(accountId)))
  const credentials = await resealAuditCredentials(sql, (sealed, auditId) => reseal(sealed, authPurpose(auditId)))
  return { resealed: tokens + credentials, unreadable }
}

if (import.meta.main) {
  const config = loadConfigOrExit()
  const box = SecretBox.fromConfig(config)
  if (!box) {
    console.error('SECRETS_KEY is not set: there is no key to re-encrypt with.')
    process.exit(2)
  }
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, max: 1 })
  try {
    const r = await rotateSecrets(db.sql, box)
    console.log(JSON.stringify({ keyId: box.keyId, ...r }))
    if (r.unreadable) {
      console.error(`${r.unreadable} secret(s) open with no configured key: their owners must connect the repository again.`)
      process.exitCode = 1
    }
  } finally {
    await db.close()
  }
}
