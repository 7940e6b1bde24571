// Reports as the tools read them: a finished scan or audit of this account by id, reshaped into one model
// (model.ts); the comparison of two of them (compare.ts); and exports in four formats, answered inline when
// small and otherwise stored behind a one-hour link (api/exports/).
import pkg from '../../package.json' with { type: 'json' }
import type { AuditResult } from '../../shared/report/audit-report.ts'
import type { Config } from '../../shared/config.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import { getAudit } from '../../shared/db/audits.ts'
import type { Database } from '../../shared/db/index.ts'
import { AppError } from '../../shared/errors.ts'
import type { KeyValue } from '../../shared/infra/types.ts'
import { ExportStore } from '../exports/service.ts'
import type { FindingsService } from '../findings/service.ts'
import { compareReports } from './compare.ts'
import { toHtml } from './html.ts'
import { modelOfAudit, modelOfScan, type ReportModel } from '../../shared/report/export/model.ts'
import type { ExportFormat } from '../../shared/report/export/types.ts'
import { REPORT_WRITERS, type Writer } from '../../shared/report/export/writers.ts'

/** Exports up to this many bytes are answered inline; larger ones get a link (MCP clients handle large text poorly). */
export const INLINE_EXPORT_BYTES = 12 * 1024

/** The writers the appaudit command shares (shared/report/export/writers.ts), and the HTML page. */
const WRITERS: Readonly<Record<ExportFormat, Writer>> = {
  ...REPORT_WRITERS,
  html: { mediaType: 'text/html', suffix: 'html', write: toHtml },
}

export interface ExportRequest {
  scanId?: string
  auditId?: string
  format: ExportFormat
}

export interface ExportAnswer {
  format: ExportFormat
  mediaType: string
  filename: string
  bytes: number
  content?: string
  url?: string
  expiresAt?: string
}

interface Loaded {
  model: ReportModel
  appId: string
  origin: string
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

export class ReportsService {
  private exports: ExportStore

  constructor(
    private deps: {
      config: Config
      db: Database
      kv: KeyValue
      findings: FindingsService
      /** Inline threshold in bytes (default INLINE_EXPORT_BYTES); only a service built by hand sets another. */
      inlineBytes?: number
    },
  ) {
    this.exports = new ExportStore(deps.kv)
  }

  /** A completed scan (scn_) or audit (aud_) of this account; not_found, or an error naming its state. */
  async load(principal: Principal, id: string): Promise<Loaded> {
    if (id.startsWith('scn_')) {
      const { scan, report } = await this.deps.findings.completedScan(principal, id)
      return { model: modelOfScan(scan, report), appId: scan.appId, origin: originOf(scan.url) }
    }
    if (!id.startsWith('aud_')) throw new AppError('invalid_params', `${id} is neither a scan id (scn_...) nor an audit id (aud_...).`)
    const audit = await getAudit(this.deps.db.sql, principal.account.id, id)
    if (!audit) throw new AppError('not_found', `No audit ${id} in this account`)
    const state = { auditId: id, status: audit.status }
    if (audit.status === 'queued' || audit.status === 'running') {
      // The same answer get_findings gives for an unfinished scan: not ready yet, poll and call again.
      throw new AppError(
        'scanner_unavailable',
        `Audit ${id} is ${audit.status}, not completed yet: poll get_audit until its status is completed, then call again.`,
        state,
      )
    }
    if (audit.status === 'failed') {
      throw new AppError(
        'audit_failed',
        `Audit ${id} failed, so it has no result${audit.error ? `: ${audit.error.message}` : ''}. Start another with audit_app.`,
        { ...state, ...(audit.error ? { reason: audit.error } : {}) },
      )
    }
    if (audit.status === 'cancelled' || !audit.result) {
      throw new AppError('invalid_params', `Audit ${id} was cancelled, so it has no result to read. Pass a completed audit.`, state)
    }
    return { model: modelOfAudit(audit, audit.result as AuditResult), appId: audit.appId, origin: originOf(audit.url) }
  }

  /** New, fixed and unchanged findings from base to head, which must be of the same app. */
  async compare(principal: Principal, baseId: string, headId: string) {
    const [base, head] = await Promise.all([this.load(principal, baseId), this.load(principal, headId)])
    if (base.appId !== head.appId) {
      throw new AppError(
        'invalid_params',
        `${baseId} is of ${base.origin} but ${headId} is of ${head.origin}: compare_scans compares two scans or audits of the same app (origin).`,
        { details: [{ path: '/headScanId', message: `Not of the app ${base.origin}` }], baseOrigin: base.origin, headOrigin: head.origin },
      )
    }
    return compareReports(base.model, head.model)
  }

  /** The report of a scan or an audit in one format: inline when small, else a link that works for an hour. */
  async export(principal: Principal, req: ExportRequest): Promise<ExportAnswer> {
    const id = req.scanId ?? req.auditId
    if ((req.scanId === undefined) === (req.auditId === undefined) || id === undefined) {
      throw new AppError('invalid_params', 'Pass exactly one of scanId (a scan, scn_...) and auditId (an audit, aud_...).', {
        details: [{ path: '/', message: 'Exactly one of scanId and auditId is required' }],
      })
    }
    const { model } = await this.load(principal, id)
    const writer = WRITERS[req.format]
    const identity = { accountId: principal.account.id, reportId: model.id, format: req.format, version: pkg.version }
    // A large export of this report stored in the last hour is handed out again, not built again.
    const reused = await this.exports.reuse(identity)
    if (reused) {
      const { token, expiresAt, bytes, filename } = reused
      return { format: req.format, mediaType: writer.mediaType, filename, bytes, url: this.exportUrl(token), expiresAt }
    }
    const content = writer.write(model, { baseUrl: this.deps.config.baseUrl, version: pkg.version })
    const answer = {
      format: req.format,
      mediaType: writer.mediaType,
      filename: `appaudit-${model.id}.${writer.suffix}`,
      bytes: Buffer.byteLength(content, 'utf8'),
    }
    if (answer.bytes <= (this.deps.inlineBytes ?? INLINE_EXPORT_BYTES)) return { ...answer, content }
    const stored = await this.exports.put(identity, {
      mediaType: `${writer.mediaType}; charset=utf-8`,
      filename: answer.filename,
      content,
    })
    return { ...answer, url: this.exportUrl(stored.token), expiresAt: stored.expiresAt }
  }

  private exportUrl(token: string): string {
    return `${this.deps.config.baseUrl}/api/exports/${token}`
  }
}
