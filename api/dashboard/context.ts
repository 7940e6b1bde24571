// What the dashboard's groups of routes are built from (index.ts assembles them).
import type { Sql } from '../../shared/db/index.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { AuditService } from '../audits/service.ts'
import type { Revocations } from '../auth/revocation.ts'
import type { CheckoutCatalog } from '../billing/service.ts'
import type { DirectoryRunService } from '../directory-runs/service.ts'
import type { PatchService } from '../patches/service.ts'
import type { ScanService } from '../scans/service.ts'
import { type DashboardGuards, problem } from './guards.ts'
import type { DashboardService } from './service.ts'

export interface DashboardDeps {
  sql: Sql
  baseUrl: string
  revocations: Revocations
  log: Logger
  /** What checkout sells on this deployment (api/billing); null or absent: no Upgrade or Buy credits button. */
  checkout?: CheckoutCatalog | null
  /** The embedded default: keeps a regenerated local key in DATA_DIR (returns where), so the next start prints and uses it. */
  keepLocalKey?: (key: { plaintext: string; label: string }) => string | null
  /** The services scan_app and audit_app call, for the start forms; absent: the forms answer 503. */
  services?: { scans: ScanService; audits: AuditService; patches?: PatchService; directoryRuns?: DirectoryRunService }
}

/** What every group of dashboard routes shares. */
export interface DashboardContext {
  d: DashboardDeps
  service: DashboardService
  guards: DashboardGuards
}

/** Another account's id answers as a missing one. */
export const notFound = () => problem(404, 'not_found', 'No such resource in this account.')
