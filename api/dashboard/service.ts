// What the dashboard shows and does, on plain values: an account's apps with their scans, its plan and
// credits, its keys and agents, and the JSON of the dashboard routes (the same shapes the MCP tools return).
import { createApiKey, regenerateApiKey, revokeApiKey } from '../../shared/db/accounts.ts'
import { getAudit } from '../../shared/db/audits.ts'
import { listApiKeys } from '../../shared/db/credentials.ts'
import { listRecentAudits } from '../../shared/db/dashboard.ts'
import type { Sql } from '../../shared/db/index.ts'
import {
  deleteMonitor,
  listMonitors,
  listOpenRegressionRuns,
  listRecentRuns,
  type MonitorRunItem,
  type MonitorSummary,
  setMonitorEnabled,
} from '../../shared/db/monitors.ts'
import { listAgents, revokeAgent } from '../../shared/db/oauth.ts'
import { getScan, listApps, listScans } from '../../shared/db/scans.ts'
import { auditView } from '../audits/service.ts'
import type { Revocations } from '../auth/revocation.ts'
import { billingView, type CheckoutCatalog } from '../billing/service.ts'
import { monitorView } from '../monitors/service.ts'

/** An app's monitor on the apps page: its latest runs with scores, and its regressions still open. */
export type MonitorPanel = MonitorSummary & { runs: MonitorRunItem[]; openRuns: MonitorRunItem[] }

/** Runs shown per monitor, and runs with open regressions per account. */
const MONITOR_RUNS_SHOWN = 10
const OPEN_RUNS_SHOWN = 50

export class DashboardService {
  constructor(
    private sql: Sql,
    private revocations: Revocations,
    private checkout: CheckoutCatalog | null = null,
    private keepLocalKey?: (key: { plaintext: string; label: string }) => string | null,
  ) {}

  async overview(accountId: string) {
    const apps = await listApps(this.sql, accountId, { limit: 50 })
    const scans = await listScans(this.sql, accountId, { limit: 100 })
    const audits = await listRecentAudits(this.sql, accountId, 50)
    const monitors = await this.monitorPanels(accountId)
    return apps.items.map((app) => ({
      ...app,
      recentScans: scans.items.filter((s) => s.appId === app.id).slice(0, 10),
      recentAudits: audits.filter((a) => a.appId === app.id).slice(0, 5),
      monitor: monitors.get(app.id) ?? null,
    }))
  }

  /** Each monitored app's panel, by app id. */
  private async monitorPanels(accountId: string): Promise<Map<string, MonitorPanel>> {
    const { items } = await listMonitors(this.sql, accountId, 200)
    if (items.length === 0) return new Map()
    const runs = await listRecentRuns(this.sql, accountId, MONITOR_RUNS_SHOWN)
    const open = await listOpenRegressionRuns(this.sql, accountId, OPEN_RUNS_SHOWN)
    return new Map(
      items.map((m) => [
        m.appId,
        { ...m, runs: runs.filter((r) => r.monitorId === m.id), openRuns: open.filter((r) => r.monitorId === m.id) },
      ]),
    )
  }

  /** Pauses or resumes a monitor; the monitor_app shape, or null when it is not this account's. */
  async setMonitorEnabled(accountId: string, monitorId: string, enabled: boolean) {
    const m = await setMonitorEnabled(this.sql, accountId, monitorId, enabled)
    return m ? monitorView(m) : null
  }

  /** Deletes a monitor and its run history; false when it is not this account's. */
  removeMonitor(accountId: string, monitorId: string) {
    return deleteMonitor(this.sql, accountId, monitorId)
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

  /**
   * A lost key cannot be shown again: it is replaced by a new one with the same label, and stops working at
   * once. The embedded default's local key is replaced in DATA_DIR too (savedTo), so the next start uses it.
   */
  async regenerateKey(accountId: string, keyId: string) {
    const key = await regenerateApiKey(this.sql, accountId, keyId)
    if (!key) return null
    this.revocations.announce()
    const savedTo = this.keepLocalKey?.(key) ?? null
    return { id: key.id, plaintext: key.plaintext, displayPrefix: key.displayPrefix, label: key.label, ...(savedTo ? { savedTo } : {}) }
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
