// Re-encrypts every stored secret (connected repositories' tokens) with the current SECRETS_KEY, during a
// key rotation (README, "Patches and connected repositories"): start every process with the new SECRETS_KEY and the old one in
// SECRETS_KEY_PREVIOUS, run `bun api/patches/rotate-secrets.ts`, then drop SECRETS_KEY_PREVIOUS. Values
// already sealed with the current key are left alone, so running it twice is harmless. Prints counts only.
import { loadConfigOrExit } from '../../shared/config.ts'
import { openDatabase, type Sql } from '../../shared/db/index.ts'
import { SecretBox } from '../../shared/secret-box.ts'
import { tokenPurpose } from './service.ts'
import { resealAll } from './store.ts'

/** Re-seals what `box` holds under an older key; a value no configured key opens is counted and left. */
export async function rotateSecrets(sql: Sql, box: SecretBox): Promise<{ resealed: number; unreadable: number }> {
  let unreadable = 0
  const resealed = await resealAll(sql, (sealed, accountId) => {
    if (!box.isStale(sealed)) return null
    try {
      return box.seal(box.open(sealed, tokenPurpose(accountId)), tokenPurpose(accountId))
    } catch {
      unreadable++
      return null
    }
  })
  return { resealed, unreadable }
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
