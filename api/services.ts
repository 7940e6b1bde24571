// Everything a request handler or tool may use, built once per process and passed down as plain values. Tools
// reach the domain only through these services, never through each other or the database modules.
import type { Config } from '../shared/config.ts'
import type { Database } from '../shared/db/index.ts'
import type { Logger } from '../shared/lib/log.ts'
import type { Infra } from '../shared/infra/types.ts'
import { AccountService } from './accounts/service.ts'
import { AuditService } from './audits/service.ts'
import { CheckCatalog } from './checks/service.ts'
import { DirectoryRunService } from './directory-runs/service.ts'
import { ExposureService } from './data-exposure/service.ts'
import { FindingsService } from './findings/service.ts'
import { MonitorService } from './monitors/service.ts'
import { PatchService } from './patches/service.ts'
import { RateLimiter } from './http/rate-limit.ts'
import { ReportsService } from './reports/service.ts'
import { ScanService } from './scans/service.ts'
import { dnsServersFromConfig, VerificationService } from './verification/service.ts'

export interface Services {
  config: Config
  db: Database
  infra: Infra
  log: Logger
  scans: ScanService
  audits: AuditService
  findings: FindingsService
  checks: CheckCatalog
  accounts: AccountService
  verification: VerificationService
  exposure: ExposureService
  monitors: MonitorService
  reports: ReportsService
  patches: PatchService
  directoryRuns: DirectoryRunService
}

export function createServices(config: Config, db: Database, infra: Infra, log: Logger): Services {
  const checks = new CheckCatalog()
  const findings = new FindingsService({ db, checks })
  const audits = new AuditService({ config, db, infra, log })
  const scans = new ScanService({ config, db, infra, log })
  return {
    config,
    db,
    infra,
    log,
    scans,
    audits,
    findings,
    checks,
    accounts: new AccountService({ db }),
    verification: new VerificationService({ sql: db.sql, config, dnsServers: dnsServersFromConfig(config) }),
    exposure: new ExposureService({ sql: db.sql, config }),
    monitors: new MonitorService({ config, db, log, scans }),
    reports: new ReportsService({ config, db, kv: infra.kv, findings }),
    patches: new PatchService({ config, db, log, limiter: new RateLimiter(infra.kv) }),
    directoryRuns: new DirectoryRunService({ config, db, infra, log, audits, scans }),
  }
}
