// Key rotation of stored repository tokens against real PostgreSQL: rotate-secrets re-seals what an older
// key sealed, leaves current values alone (a second run changes nothing), and counts what no key opens.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { tokenPurpose } from '../../../api/patches/service.ts'
import { rotateSecrets } from '../../../api/patches/rotate-secrets.ts'
import { saveConnection } from '../../../api/patches/store.ts'
import { createAccount } from '../../../shared/db/accounts.ts'
import { type Database, openDatabase } from '../../../shared/db/index.ts'
import { SecretBox } from '../../../shared/lib/secret-box.ts'
import { authPurpose } from '../../../shared/protocol/audit-auth.ts'
import { createAudit } from '../../../shared/db/audits.ts'
import { newId } from '../../../shared/lib/ids.ts'
import { freshDatabase } from '../../harness/service.ts'

let pg: Awaited<ReturnType<typeof freshDatabase>>
let db: Database
beforeAll(async () => {
  pg = await freshDatabase()
  db = await openDatabase({ databaseUrl: pg.url, dataDir: '/nonexistent', max: 2 })
})
afterAll(async () => {
  await db?.close()
  await pg?.drop()
})

const key = () => randomBytes(32).toString('base64')

test('re-seals tokens sealed with the previous key; a second run changes nothing; a foreign key is counted', async () => {
  const oldKey = key()
  const newKey = key()
  const oldBox = new SecretBox(oldKey)
  const tokens = new Map<string, string>()
  for (let i = 0; i < 3; i++) {
    const account = await createAccount(db.sql, 'scale')
    const token = `ghp_${randomBytes(12).toString('hex')}`
    tokens.set(account.id, token)
    await saveConnection(db.sql, {
      id: `rep_${randomBytes(8).toString('hex')}`,
      accountId: account.id,
      url: `https://github.com/acme/site${i}`,
      baseBranch: 'main',
      tokenSealed: oldBox.seal(token, tokenPurpose(account.id)),
    })
  }
  const stranger = await createAccount(db.sql, 'scale')
  await saveConnection(db.sql, {
    id: `rep_${randomBytes(8).toString('hex')}`,
    accountId: stranger.id,
    url: 'https://github.com/acme/other',
    baseBranch: 'main',
    tokenSealed: new SecretBox(key()).seal('ghp_unknownkey', tokenPurpose(stranger.id)),
  })

  const rotating = new SecretBox(newKey, [oldKey])
  expect(await rotateSecrets(db.sql, rotating)).toEqual({ resealed: 3, unreadable: 1 })
  // Now the new key alone opens every re-sealed token, each still bound to its account.
  const onlyNew = new SecretBox(newKey)
  const rows = await db.sql<{ account_id: string; token_sealed: string }[]>`SELECT account_id, token_sealed FROM repo_connections`
  for (const r of rows) {
    if (r.account_id === stranger.id) continue
    expect(onlyNew.isStale(r.token_sealed)).toBe(false)
    expect(onlyNew.open(r.token_sealed, tokenPurpose(r.account_id))).toBe(tokens.get(r.account_id)!)
    expect(() => onlyNew.open(r.token_sealed, tokenPurpose(stranger.id))).toThrow()
  }
  expect(await rotateSecrets(db.sql, rotating)).toEqual({ resealed: 0, unreadable: 1 })
})

test("re-seals a running authenticated audit's credentials, bound to that audit; an ended audit has none left", async () => {
  const oldKey = key()
  const newKey = key()
  const account = await createAccount(db.sql, 'scale')
  const auditId = newId('aud')
  const credentials = JSON.stringify({ cookies: [{ name: 'sid', value: randomBytes(12).toString('hex') }] })
  const options = { maxPages: 5, maxDepth: 1, maxDurationSeconds: 60 }
  await createAudit(db.sql, account.id, 'https://www.example.com/', options, Infinity, {
    auditId,
    sealed: new SecretBox(oldKey).seal(credentials, authPurpose(auditId)),
  })
  const ended = await createAudit(db.sql, account.id, 'https://www.example.com/', options, Infinity, {
    auditId: newId('aud'),
    sealed: new SecretBox(oldKey).seal(credentials, 'x'),
  })
  // Ending an audit wipes its credentials, whichever statement ends it.
  await db.sql`UPDATE audits SET status = 'failed', finished_at = now() WHERE id = ${ended.id}`
  expect((await db.sql`SELECT auth_sealed FROM audits WHERE id = ${ended.id}`)[0]!.auth_sealed).toBeNull()

  const rotating = new SecretBox(newKey, [oldKey])
  const r = await rotateSecrets(db.sql, rotating)
  expect(r.resealed).toBe(1)
  const [row] = await db.sql<{ auth_sealed: string }[]>`SELECT auth_sealed FROM audits WHERE id = ${auditId}`
  expect(new SecretBox(newKey).open(row!.auth_sealed, authPurpose(auditId))).toBe(credentials)
  expect(() => new SecretBox(newKey).open(row!.auth_sealed, authPurpose(ended.id))).toThrow()
  expect((await rotateSecrets(db.sql, rotating)).resealed).toBe(0)
})
