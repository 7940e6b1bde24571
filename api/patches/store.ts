// Rows of patches and repo_connections (migration 011). A connection's sealed token is read only by
// `sealedToken`, for the one job that pushes; every other read leaves it out.
import type { Sql } from '../../shared/db/index.ts'

export type PatchStatus = 'queued' | 'running' | 'ready' | 'pr_opened' | 'failed'

export interface PatchRow {
  id: string
  accountId: string
  sourceId: string
  platform: string
  status: PatchStatus
  diff: string | null
  result: Record<string, unknown> | null
  repositoryId: string | null
  branch: string | null
  pullRequest: { number: number; url: string } | null
  error: { code: string; message: string } | null
  createdAt: Date
  updatedAt: Date
}

export interface RepoConnection {
  id: string
  url: string
  baseBranch: string
  createdAt: Date
  lastUsedAt: Date | null
}

type RawPatch = {
  id: string
  account_id: string
  source_id: string
  platform: string
  status: PatchStatus
  diff: string | null
  result: Record<string, unknown> | null
  repository_id: string | null
  branch: string | null
  pull_request: { number: number; url: string } | null
  error: { code: string; message: string } | null
  created_at: Date
  updated_at: Date
}

const toPatch = (r: RawPatch): PatchRow => ({
  id: r.id,
  accountId: r.account_id,
  sourceId: r.source_id,
  platform: r.platform,
  status: r.status,
  diff: r.diff,
  result: r.result,
  repositoryId: r.repository_id,
  branch: r.branch,
  pullRequest: r.pull_request,
  error: r.error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

/** A patch still queued or running after this long was interrupted (its process ended): read as failed. */
export const PATCH_STALE_S = 600

/** Creates a patch unless the account already has `maxInFlight` queued or running (then null). */
export async function insertPatch(
  sql: Sql,
  p: { id: string; accountId: string; sourceId: string; platform: string; repositoryId: string | null },
  maxInFlight: number,
): Promise<PatchRow | null> {
  const [row] = await sql<RawPatch[]>`
    INSERT INTO patches (id, account_id, source_id, platform, repository_id)
    SELECT ${p.id}, ${p.accountId}, ${p.sourceId}, ${p.platform}, ${p.repositoryId}
    WHERE (SELECT count(*) FROM patches WHERE account_id = ${p.accountId} AND status IN ('queued', 'running')
             AND updated_at > now() - make_interval(secs => ${PATCH_STALE_S})) < ${maxInFlight}
    RETURNING *`
  return row ? toPatch(row) : null
}

export async function updatePatch(
  sql: Sql,
  id: string,
  set: {
    status: PatchStatus
    platform?: string
    diff?: string
    result?: Record<string, unknown>
    branch?: string
    pullRequest?: unknown
    error?: unknown
  },
): Promise<void> {
  await sql`
    UPDATE patches SET status = ${set.status},
      platform = COALESCE(${set.platform ?? null}, platform),
      diff = COALESCE(${set.diff ?? null}, diff),
      result = COALESCE(${set.result ? sql.json(set.result as never) : null}, result),
      branch = COALESCE(${set.branch ?? null}, branch),
      pull_request = COALESCE(${set.pullRequest ? sql.json(set.pullRequest as never) : null}, pull_request),
      error = COALESCE(${set.error ? sql.json(set.error as never) : null}, error),
      updated_at = now()
    WHERE id = ${id}`
}

export async function getPatch(sql: Sql, accountId: string, id: string): Promise<PatchRow | null> {
  const [row] = await sql<RawPatch[]>`SELECT * FROM patches WHERE id = ${id} AND account_id = ${accountId}`
  if (!row) return null
  const p = toPatch(row)
  if ((p.status === 'queued' || p.status === 'running') && Date.now() - p.updatedAt.getTime() > PATCH_STALE_S * 1000) {
    return { ...p, status: 'failed', error: { code: 'internal', message: 'The patch was interrupted; create it again.' } }
  }
  return p
}

export async function saveConnection(
  sql: Sql,
  c: { id: string; accountId: string; url: string; baseBranch: string; tokenSealed: string },
): Promise<RepoConnection> {
  // Connecting again replaces the connection: the old row is deleted (its patches keep their branch and pull
  // request but no longer point at it) and a new one inserted, in one transaction.
  const [row] = await sql.begin(async (tx) => {
    await tx`DELETE FROM repo_connections WHERE account_id = ${c.accountId}`
    return tx<{ id: string; url: string; base_branch: string; created_at: Date; last_used_at: Date | null }[]>`
      INSERT INTO repo_connections (id, account_id, url, base_branch, token_sealed)
      VALUES (${c.id}, ${c.accountId}, ${c.url}, ${c.baseBranch}, ${c.tokenSealed})
      RETURNING id, url, base_branch, created_at, last_used_at`
  })
  return { id: row!.id, url: row!.url, baseBranch: row!.base_branch, createdAt: row!.created_at, lastUsedAt: row!.last_used_at }
}

export async function getConnection(sql: Sql, accountId: string): Promise<RepoConnection | null> {
  const [row] = await sql<{ id: string; url: string; base_branch: string; created_at: Date; last_used_at: Date | null }[]>`
    SELECT id, url, base_branch, created_at, last_used_at FROM repo_connections WHERE account_id = ${accountId}`
  return row ? { id: row.id, url: row.url, baseBranch: row.base_branch, createdAt: row.created_at, lastUsedAt: row.last_used_at } : null
}

/** The sealed token, for the job that pushes; marks the connection used. */
export async function sealedToken(sql: Sql, accountId: string, id: string): Promise<string | null> {
  const [row] = await sql<{ token_sealed: string }[]>`
    UPDATE repo_connections SET last_used_at = now() WHERE id = ${id} AND account_id = ${accountId} RETURNING token_sealed`
  return row?.token_sealed ?? null
}

export async function deleteConnection(sql: Sql, accountId: string): Promise<boolean> {
  const r = await sql`DELETE FROM repo_connections WHERE account_id = ${accountId}`
  return r.count > 0
}

/** For key rotation: every sealed token, re-sealed by `reseal` when it returns a new value. */
export async function resealAll(sql: Sql, reseal: (sealed: string, accountId: string) => string | null): Promise<number> {
  let n = 0
  let after = ''
  for (let round = 0; round < 100_000; round++) {
    const rows = await sql<{ id: string; account_id: string; token_sealed: string }[]>`
      SELECT id, account_id, token_sealed FROM repo_connections WHERE id > ${after} ORDER BY id LIMIT 500`
    if (rows.length === 0) break
    for (const r of rows) {
      const next = reseal(r.token_sealed, r.account_id)
      if (next !== null) {
        await sql`UPDATE repo_connections SET token_sealed = ${next} WHERE id = ${r.id} AND token_sealed = ${r.token_sealed}`
        n++
      }
    }
    after = rows[rows.length - 1]!.id
  }
  return n
}
