// The API keys an account holds, as the settings page lists them (never a secret: a display prefix).
import type { Sql } from './index.ts'

export interface ApiKeyListItem {
  id: string
  displayPrefix: string
  label: string
  createdAt: Date
  lastUsedAt: Date | null
}

export async function listApiKeys(sql: Sql, accountId: string): Promise<ApiKeyListItem[]> {
  const rows = await sql<{ id: string; display_prefix: string; label: string; created_at: Date; last_used_at: Date | null }[]>`
    SELECT id, display_prefix, label, created_at, last_used_at FROM api_keys
    WHERE account_id = ${accountId} AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 100`
  return rows.map((r) => ({
    id: r.id,
    displayPrefix: r.display_prefix,
    label: r.label,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  }))
}
