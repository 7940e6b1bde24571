// Everything a request handler may use, built once per process and passed down as plain values.
import type { Config } from '../shared/config.ts'
import type { Database } from '../shared/db/index.ts'
import type { Logger } from '../shared/log.ts'
import type { Infra } from '../shared/infra/types.ts'
import { AuditService } from './audits/service.ts'
import { ScanService } from './scans/service.ts'

export interface Services {
  config: Config
  db: Database
  infra: Infra
  log: Logger
  scans: ScanService
  audits: AuditService
}

export function createServices(config: Config, db: Database, infra: Infra, log: Logger): Services {
  return { config, db, infra, log, scans: new ScanService({ config, db, infra, log }), audits: new AuditService({ config, db, infra, log }) }
}
