// Every tool the server offers, in the order tools/list shows them. tools/list always lists all 18.
import type { Tool } from './types.ts'
import { scanApp } from './scan_app.ts'
import { getScan } from './get_scan.ts'
import { getAccount } from './get_account.ts'
import { getFindings } from './get_findings.ts'
import { getFixBrief } from './get_fix_brief.ts'
import { listApps } from './list_apps.ts'
import { scanHistory } from './scan_history.ts'
import { explainCheck } from './explain_check.ts'
import { checkDataExposure } from './check_data_exposure.ts'
import { verifySite } from './verify_site.ts'
import { auditApp } from './audit_app.ts'
import { getAudit } from './get_audit.ts'
import { monitorApp } from './monitor_app.ts'
import { compareScans } from './compare_scans.ts'
import { exportReport } from './export_report.ts'
import { createPatch } from './create_patch.ts'
import { startDirectoryRun } from './start_directory_run.ts'
import { auditAuthenticated } from './audit_authenticated.ts'

export const TOOLS: readonly Tool[] = [
  scanApp,
  auditApp,
  getAudit,
  getScan,
  getFindings,
  getFixBrief,
  listApps,
  scanHistory,
  explainCheck,
  checkDataExposure,
  verifySite,
  getAccount,
  compareScans,
  exportReport,
  monitorApp,
  createPatch,
  startDirectoryRun,
  auditAuthenticated,
]

const byName = new Map(TOOLS.map((t) => [t.name, t]))
export const findTool = (name: string) => byName.get(name)
