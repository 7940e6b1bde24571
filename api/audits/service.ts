// Audits from the api's side: validate and pre-check the target, charge the allowance or a credit and
// record the audit (one transaction), mint the live-viewer link, and put the audit's id on the queue.
// The api never opens a browser; a crawler worker runs the audit and get_audit reads what it stored.
import type { Config } from '../../shared/config.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import { cancelAudit, createAudit, failAuditAndRefund, getAudit, type AuditOptions, type AuditRow } from '../../shared/db/audits.ts'
import type { Database } from '../../shared/db/index.ts'

import { auditChannel, type AuditEvent } from '../../shared/audit-events.ts'
import { AppError } from '../../shared/errors.ts'
import { AUDIT_STARTS } from '../../shared/rate-limits.ts'
import type { Logger } from '../../shared/log.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { createViewerToken, endViewer, viewerLink } from '../../shared/viewer.ts'
import { checkTarget } from '../http/target.ts'

export const AUDIT_DEFAULTS = { maxPages: 50, maxDepth: 3 } as const

export interface AuditRequestOptions {
  maxPages?: number
  maxDepth?: number
  maxDurationSeconds?: number
}

export class AuditService {
  constructor(private deps: { config: Config; db: Database; infra: Infra; log: Logger }) {}

  /** Options with defaults applied; a duration above AUDIT_MAX_DURATION_S is cut to it. */
  resolveOptions(o: AuditRequestOptions = {}): AuditOptions {
    const max = this.deps.config.AUDIT_MAX_DURATION_S
    return {
      maxPages: o.maxPages ?? AUDIT_DEFAULTS.maxPages,
      maxDepth: o.maxDepth ?? AUDIT_DEFAULTS.maxDepth,
      maxDurationSeconds: Math.min(o.maxDurationSeconds ?? max, max),
    }
  }

  async start(principal: Principal, rawUrl: string, requested: AuditRequestOptions = {}) {
    const { config, db, infra } = this.deps
    // Refuse early what the worker's egress guard would refuse anyway: a clear answer, and no charge.
    const url = await checkTarget(config, rawUrl, { refuseUnreachable: true })
    const options = this.resolveOptions(requested)
    const audit = await createAudit(db.sql, principal.account.id, url.href, options, AUDIT_STARTS.perHour)
    const log = this.deps.log.child({ auditId: audit.id })
    try {
      const token = await createViewerToken(infra.kv, audit.id, config.VIEWER_TOKEN_TTL_S)
      await infra.queue.enqueue({ kind: 'audit', ref: audit.id })
      log.info('audit queued', { url: url.origin, chargedFrom: audit.chargedFrom })
      return {
        auditId: audit.id,
        browserViewer: viewerLink(config.baseUrl, audit.id, token),
        status: audit.status,
        url: audit.url,
        options,
      }
    } catch (e) {
      // Not started, so not charged: an audit that waits for a queue that is down would start by surprise later.
      log.error('job queue unreachable; audit not started', { error: (e as Error).message })
      await failAuditAndRefund(db.sql, audit.id, { code: 'scanner_unavailable', message: 'The job queue was unreachable' }).catch(() => {})
      await endViewer(infra.pubsub, infra.kv, audit.id).catch(() => {})
      throw new AppError(
        'scanner_unavailable',
        'The job queue is unreachable right now; the audit was not started and not charged. Retry shortly.',
        { auditId: audit.id },
      )
    }
  }

  /**
   * Cancels an unfinished audit (for the dashboard; no MCP tool cancels). Not refunded. Its worker stops at
   * its next lease renewal; the viewer link dies now.
   */
  async cancel(principal: Principal, auditId: string) {
    const { db, infra } = this.deps
    if (!(await cancelAudit(db.sql, principal.account.id, auditId))) {
      const row = await getAudit(db.sql, principal.account.id, auditId)
      if (!row) throw new AppError('not_found', `No audit ${auditId} in this account`)
      return auditView(row)
    }
    await infra.pubsub
      .publish(auditChannel(auditId), JSON.stringify({ type: 'done', status: 'cancelled' } satisfies AuditEvent))
      .catch(() => {})
    await endViewer(infra.pubsub, infra.kv, auditId).catch(() => {})
    return this.get(principal, auditId)
  }

  async get(principal: Principal, auditId: string) {
    const row = await getAudit(this.deps.db.sql, principal.account.id, auditId)
    if (!row) throw new AppError('not_found', `No audit ${auditId} in this account`)
    return auditView(row)
  }
}

/** What get_audit (and the dashboard) shows of an audit. */
export function auditView(row: AuditRow) {
  return {
    auditId: row.id,
    url: row.url,
    status: row.status,
    options: row.options,
    progress: {
      ...row.progress,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
      refunded: row.refunded,
    },
    attempts: row.attempts,
    createdAt: row.createdAt,
    charge: { from: row.chargedFrom, refunded: row.refunded },
    ...(row.error ? { error: row.error } : {}),
    ...(row.result ? { result: row.result } : {}),
  }
}
