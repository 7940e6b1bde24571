// What the dashboard shows and does, on plain values: an account's apps with their scans, its plan and
// credits, its keys and agents, and the JSON of the dashboard routes (the same shapes the MCP tools return).
import { createApiKey, revokeApiKey } from '../../shared/db/accounts.ts'
import { getAudit } from '../../shared/db/audits.ts'
import { listApiKeys } from '../../shared/db/credentials.ts'
import { listRecentAudits } from '../../shared/db/dashboard.ts'
import type { Sql } from '../../shared/db/index.ts'
import { listAgents, revokeAgent } from '../../shared/db/oauth.ts'
import { getScan, listApps, listScans } from '../../shared/db/scans.ts'
import { auditView } from '../audits/service.ts'
import type { Revocations } from '../auth/revocation.ts'
import { billingView, type CheckoutCatalog } from '../billing/service.ts'

export class DashboardService {
  constructor(
    private sql: Sql,
    private revocations: Revocations,
    private checkout: CheckoutCatalog | null = null,
  ) {}

  async overview(accountId: string) {
    const apps = await listApps(this.sql, accountId, { limit: 50 })
    const scans = await listScans(this.sql, accountId, { limit: 100 })
    const audits = await listRecentAudits(this.sql, accountId, 50)
    return apps.items.map((app) => ({
      ...app,
      recentScans: scans.items.filter((s) => s.appId === app.id).slice(0, 10),
      recentAudits: audits.filter((a) => a.appId === app.id).slice(0, 5),
    }))
  }

  async settings(accountId: string) {
    return {
      keys: await listApiKeys(this.sql, accountId),
      agents: await listAgents(this.sql, accountId),
      billing: await billingView(this.sql, accountId, this.checkout),
    }
  }

  /** The get_scan shape, or null when the scan is not this account's. */
  async scan(accountId: string, scanId: string) {
    const row = await getScan(this.sql, accountId, scanId)
    if (!row) return null
    return {
      scanId: row.id,
      url: row.url,
      status: row.status,
      createdAt: row.createdAt,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
      ...(row.error ? { error: row.error } : {}),
      ...(row.report ? { report: row.report } : {}),
    }
  }

  /** The get_audit shape (progress while it runs), or null when the audit is not this account's. */
  async audit(accountId: string, auditId: string) {
    const row = await getAudit(this.sql, accountId, auditId)
    return row ? auditView(row) : null
  }

  createKey(accountId: string) {
    return createApiKey(this.sql, accountId, 'dashboard')
  }

  /** A lost key cannot be shown again: it is replaced by a new one and stops working at once. */
  async regenerateKey(accountId: string, keyId: string) {
    const revoked = await revokeApiKey(this.sql, accountId, keyId)
    if (!revoked) return null
    this.revocations.announce()
    return createApiKey(this.sql, accountId, 'dashboard')
  }

  async revokeKey(accountId: string, keyId: string) {
    const revoked = await revokeApiKey(this.sql, accountId, keyId)
    if (revoked) this.revocations.announce()
    return revoked
  }

  /** Every token the agent holds for this account stops working at once, on every replica. */
  async revokeAgent(accountId: string, clientId: string) {
    const n = await revokeAgent(this.sql, accountId, clientId)
    if (n > 0) this.revocations.announce()
    return n
  }
}
