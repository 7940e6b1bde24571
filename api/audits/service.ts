// Audits from the api's side: validate and pre-check the target (it must resolve and answer), charge the
// allowance or a credit and record the audit (one transaction), mint the live-viewer link, and put the
// audit's id on the queue.
// The api never opens a browser; a crawler worker runs the audit and get_audit reads what it stored.
import type { Config } from '../../shared/config.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import {
  cancelAudit,
  createAudit,
  failAuditAndRefund,
  getAudit,
  refuseUnstartableAudit,
  type AuditOptions,
  type AuditRow,
} from '../../shared/db/audits.ts'
import type { Database } from '../../shared/db/index.ts'

import { auditChannel, type AuditEvent } from '../../shared/protocol/audit-events.ts'
import { AppError, errorMessage } from '../../shared/errors.ts'
import { type AuditAuth, authPurpose, validateAuth } from '../../shared/protocol/audit-auth.ts'
import { newId } from '../../shared/lib/ids.ts'
import { SecretBox } from '../../shared/lib/secret-box.ts'
import { AUDIT_STARTS } from '../../shared/rate-limits.ts'
import type { Logger } from '../../shared/lib/log.ts'
import type { Infra } from '../../shared/infra/types.ts'
import { createViewerToken, endViewer, viewerLink } from '../../shared/protocol/viewer.ts'
import { checkTarget } from '../http/target.ts'
import { viewerLinkTtlS } from '../../shared/jobs/recovery.ts'
import { Reachability } from '../http/reachable.ts'
import { readAuditLists, readAuditRow, readAuditSlice, readAuditSummary, type AuditSummaryParts } from '../../shared/db/audit-results.ts'
import { offsetOf } from '../pagination.ts'
import { SUMMARY_TOP, summaryParts } from '../../shared/report/audit-summary.ts'
import { SECTION_LIMIT, sectionAnswer, sectionScope, summaryAnswer, type Section } from './results.ts'

export const AUDIT_DEFAULTS = { maxPages: 50, maxDepth: 3 } as const

export interface AuditRequestOptions {
  maxPages?: number
  maxDepth?: number
  maxDurationSeconds?: number
}

export class AuditService {
  /** Summaries of completed results, by audit and finish time (the account is checked on the row first). */
  private summaries = new Lru<string, AuditSummaryParts>(SUMMARY_CACHE_ENTRIES)
  /** Seals an authenticated audit's credentials; null without SECRETS_KEY (audit_authenticated is then refused). */
  private readonly box: SecretBox | null

  private readonly reach: Reachability

  constructor(private deps: { config: Config; db: Database; infra: Infra; log: Logger }) {
    this.box = SecretBox.fromConfig(deps.config)
    this.reach = new Reachability(deps.config)
  }

  /** Options with defaults applied; a duration above AUDIT_MAX_DURATION_S is cut to it. */
  resolveOptions(o: AuditRequestOptions = {}): AuditOptions {
    const max = this.deps.config.AUDIT_MAX_DURATION_S
    return {
      maxPages: o.maxPages ?? AUDIT_DEFAULTS.maxPages,
      maxDepth: o.maxDepth ?? AUDIT_DEFAULTS.maxDepth,
      maxDurationSeconds: Math.min(o.maxDurationSeconds ?? max, max),
    }
  }

  /**
   * audit_app, and audit_authenticated with `auth`: the credentials are checked against the URL, sealed for
   * the new audit (AES-GCM, SECRETS_KEY) and stored with it in the same transaction as its charge.
   * `chosenId`: the id the audit gets (a directory run records it before starting, so a retry never starts
   * and charges a second audit).
   */
  async start(principal: Principal, rawUrl: string, requested: AuditRequestOptions = {}, auth?: AuditAuth, chosenId?: string) {
    const { config, db, infra } = this.deps
    // Refuse early what the worker's egress guard would refuse anyway: a clear answer, and no charge.
    const url = await checkTarget(config, rawUrl, { refuseUnreachable: true })
    let credentials: { auditId: string; sealed?: string } | undefined = chosenId ? { auditId: chosenId } : undefined
    if (auth) {
      if (!this.box) {
        throw new AppError(
          'invalid_params',
          'This server has no SECRETS_KEY, so it cannot keep credentials for an audit; its operator must set one (README, "Configuration"). Nothing was started.',
        )
      }
      const checked = validateAuth(auth, url)
      const auditId = chosenId ?? newId('aud')
      credentials = { auditId, sealed: this.box.seal(JSON.stringify(checked), authPurpose(auditId)) }
    }
    // A start page that does not answer now would fail the audit: refuse it before charging. An account
    // that could not start an audit anyway is told so first, without a request to the target.
    await refuseUnstartableAudit(db.sql, principal.account.id, AUDIT_STARTS.perHour)
    await this.reach.require(url, 'no audit was started and nothing was charged.')
    const options = this.resolveOptions(requested)
    const audit = await createAudit(db.sql, principal.account.id, url.href, options, AUDIT_STARTS.perHour, credentials)
    const log = this.deps.log.child({ auditId: audit.id })
    try {
      const [token] = await Promise.all([
        createViewerToken(infra.kv, audit.id, viewerLinkTtlS(config, options.maxDurationSeconds), { newAudit: true }),
        infra.queue.enqueue({ kind: 'audit', ref: audit.id }),
      ])
      log.info('audit queued', { url: url.origin, chargedFrom: audit.chargedFrom })
      return {
        auditId: audit.id,
        browserViewer: viewerLink(config.baseUrl, audit.id, token),
        status: audit.status,
        url: audit.url,
        options,
        ...(audit.authenticated ? { authenticated: true } : {}),
      }
    } catch (e) {
      // Not started, so not charged: an audit that waits for a queue that is down would start by surprise later.
      log.error('job queue unreachable; audit not started', { error: errorMessage(e) })
      await failAuditAndRefund(db.sql, audit.id, { code: 'scanner_unavailable', message: 'The job queue was unreachable' }).catch(() => {})
      await endViewer(infra.pubsub, infra.kv, audit.id).catch(() => {})
      throw new AppError(
        'scanner_unavailable',
        'The job queue is unreachable right now; the audit was not started and not charged. Retry shortly.',
        { auditId: audit.id },
      )
    }
  }

  /** The whole audit of this account (state, progress and, once completed, the whole result), as the dashboard reads it. */
  async whole(principal: Principal, auditId: string) {
    const row = await getAudit(this.deps.db.sql, principal.account.id, auditId)
    if (!row) throw notFound(auditId)
    return auditView(row)
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

  /**
   * What get_audit's summary shows of an audit of this account, its first `top` findings and third parties;
   * null when it is not this account's. Read from the summary stored at completion when that keeps enough.
   */
  async summary(accountId: string, auditId: string, top: number): Promise<AuditSummaryParts | null> {
    const read = await readAuditSummary(this.deps.db.sql, accountId, auditId, top, { useStored: top <= SUMMARY_TOP })
    return read ? { row: read.row, ...summaryParts(read, top) } : null
  }

  /**
   * get_audit: the audit's state and, once completed, a summary of its result (score, counts, top findings,
   * how to get more); with `section`, one page of the result's findings, pages or checks.
   */
  async get(principal: Principal, auditId: string, page: SectionRequest = {}) {
    const { sql } = this.deps.db
    const accountId = principal.account.id
    if (page.section === undefined) {
      if (page.cursor !== undefined || page.limit !== undefined) {
        throw new AppError(
          'invalid_params',
          'cursor and limit page a section of the result: pass section (findings, pages, checks or thirdParties) with them.',
          {
            details: [{ path: page.cursor !== undefined ? '/cursor' : '/limit', message: 'Needs section' }],
          },
        )
      }
      const row = await readAuditRow(sql, accountId, auditId)
      if (!row) throw notFound(auditId)
      // Polled every few seconds while it runs: nothing of a result to read until it completes.
      if (row.status !== 'completed') return auditView(row)
      // A completed result never changes: its summary is read once per process, then served from memory.
      const key = `${row.id}:${row.finishedAt?.toISOString() ?? ''}`
      let parts = this.summaries.get(key)
      if (!parts) {
        const read = await this.summary(accountId, auditId, TOP_FINDINGS_READ)
        if (!read) throw notFound(auditId)
        this.summaries.set(key, read)
        parts = read
      }
      return summaryAnswer(auditView(row), { ...parts, row })
    }
    const { section } = page
    const offset = offsetOf(sectionScope(auditId, section), page.cursor, `the ${section} of audit ${auditId}`)
    const limit = Math.min(page.limit ?? SECTION_LIMIT.default, SECTION_LIMIT.max)
    const slice = await readAuditSlice(sql, accountId, auditId, section, offset, limit, { siteChecks: section === 'checks' })
    if (!slice) throw notFound(auditId)
    assertCompleted(slice.row)
    return sectionAnswer(slice, section, offset)
  }
}

/**
 * A completed audit of this account with its findings (merged across pages, highest impact first) and site
 * checks, whole; not_found, or an error naming its state. For get_findings and get_fix_brief.
 */
export async function completedAuditFindings(db: Database, principal: Principal, auditId: string) {
  const lists = await readAuditLists(db.sql, principal.account.id, auditId)
  if (!lists) throw notFound(auditId)
  assertCompleted(lists.row)
  return { audit: lists.row, head: lists.head ?? {}, findings: lists.findings, siteChecks: lists.siteChecks }
}

export interface SectionRequest {
  section?: Section
  limit?: number
  cursor?: string
}

/** Completed audits whose summary stays in memory: each holds its top findings, tens of KB at most. */
const SUMMARY_CACHE_ENTRIES = 128

/** A small least-recently-used map. */
class Lru<K, V> {
  private map = new Map<K, V>()
  constructor(private max: number) {}
  get(key: K): V | undefined {
    const v = this.map.get(key)
    if (v !== undefined) {
      this.map.delete(key)
      this.map.set(key, v)
    }
    return v
  }
  set(key: K, value: V) {
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K)
  }
}

/** The summary reads a few findings more than it shows: it keeps those that fit its size budget. */
const TOP_FINDINGS_READ = 10

const notFound = (auditId: string) => new AppError('not_found', `No audit ${auditId} in this account`)

/** Only a completed audit has a result to read: any other state is an error that names it and what to do. */
export function assertCompleted(row: AuditRow): void {
  const state = { auditId: row.id, status: row.status }
  if (row.status === 'queued' || row.status === 'running') {
    throw new AppError(
      'scanner_unavailable',
      `Audit ${row.id} is ${row.status}, not completed yet: poll get_audit {auditId} (no section) until its status is completed, then call again.`,
      state,
    )
  }
  if (row.status === 'failed') {
    throw new AppError(
      'audit_failed',
      `Audit ${row.id} failed, so it has no result${row.error ? `: ${row.error.message}` : ''}. Start another with audit_app.`,
      { ...state, ...(row.error ? { reason: row.error } : {}) },
    )
  }
  if (row.status !== 'completed') {
    throw new AppError('invalid_params', `Audit ${row.id} was ${row.status}, so it has no result to read. Pass a completed audit.`, state)
  }
}

/** An audit's state and progress, with its whole result when the row carries one (the dashboard); get_audit adds a summary instead. */
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
    ...(row.authenticated ? { authenticated: true } : {}),
    createdAt: row.createdAt,
    charge: { from: row.chargedFrom, refunded: row.refunded },
    ...(row.error ? { error: row.error } : {}),
    ...(row.result ? { result: row.result } : {}),
  }
}
