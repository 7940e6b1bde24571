// What a report page shows, on plain values: a scan or an audit of one account in whatever state it is
// (queued and running ones with their progress, failed ones with their error, completed ones as the one
// report model of api/reports with, for each finding, the fix for the detected platform and how to verify
// it), and whether it is shared. The owner's pages and the public /r/{slug} read the same thing; only
// who may ask differs (the routes decide that).
import type { AuditPageSummary, AuditResult, StoppedBy } from '../../shared/report/audit-report.ts'
import { getAudit } from '../../shared/db/audits.ts'
import type { Sql } from '../../shared/db/index.ts'
import { getScan } from '../../shared/db/scans.ts'
import { findShare, findShareOf, type ShareKind } from '../../shared/db/shares.ts'
import { redactUrlCredentials } from '../../shared/checks/util/redact.ts'
import type { Report, ReportCheck } from '../../shared/report/schema.ts'
import { brief, findingAsCheck } from '../findings/fix-brief.ts'
import { modelOfAudit, modelOfScan, type ModelFinding, type ReportModel } from '../../shared/report/export/model.ts'

export interface FixView {
  change: string
  where: string
  verify: string
  /** False when no fix is written for the detected platform and the generic one stands in. */
  platformSpecific: boolean
}

export interface Progress {
  pagesDiscovered: number
  pagesScanned: number
  pagesFailed: number
  currentUrl: string | null
}

export interface ReportPageData {
  kind: ShareKind
  id: string
  url: string
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled'
  createdAt: Date
  finishedAt: Date | null
  error: { code: string; message: string } | null
  /** Audits only. */
  progress: Progress | null
  /** Completed only: score, findings by impact, every check, the platform the fixes are for. */
  model: ReportModel | null
  /** The fix of the model's finding at this index; written when asked, since a page shows a few findings of hundreds. */
  fixOf(index: number): FixView | undefined
  /** Audits only, completed: every crawled page. */
  pages: AuditPageSummary[]
  stoppedBy: StoppedBy | null
  /** The report's public slug while it is shared. */
  slug: string | null
}

/**
 * Evidence as a person may see it: every string with credentials in a URL taken out (the checks already
 * redact the secrets they find; this is the same rule applied once more to whatever else got through).
 */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value)
  if (depth > 20) return '…'
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, depth + 1)
    return out
  }
  return value
}

function safeModel(m: ReportModel): ReportModel {
  return {
    ...m,
    url: redactUrlCredentials(m.url),
    finalUrl: redactUrlCredentials(m.finalUrl),
    findings: m.findings.map((f) => ({
      ...f,
      evidence: redactDeep(f.evidence) as Record<string, unknown>,
      pages: f.pages.map(redactUrlCredentials),
    })),
  }
}

/** The fix brief of one finding, for the model's platform; the verification names the page it was seen on. */
function fixOf(f: ModelFinding, check: ReportCheck | undefined, model: ReportModel): FixView {
  const asCheck: ReportCheck = check ?? findingAsCheck(f)
  const page = f.pages[0] ?? model.finalUrl
  try {
    const b = brief(asCheck, model.platform, { finalUrl: page } as Report, page)
    return { change: b.change, where: b.where, verify: b.verify, platformSpecific: b.platformSpecific }
  } catch {
    // A page address the brief cannot parse: the change still stands, the verification is a rescan.
    return {
      change: asCheck.advice || f.summary,
      where: '',
      verify: 'Scan the page again and check that this passes.',
      platformSpecific: false,
    }
  }
}

export class ReportPages {
  constructor(private sql: Sql) {}

  /** A scan or an audit of this account, or null when it is not this account's (or does not exist). */
  async load(accountId: string, kind: ShareKind, id: string): Promise<ReportPageData | null> {
    const data = kind === 'scan' ? await this.scan(accountId, id) : await this.audit(accountId, id)
    if (!data) return null
    const share = await findShareOf(this.sql, accountId, kind, id)
    return { ...data, slug: share?.slug ?? null }
  }

  /** The report a public slug names, or null when no report is shared under it. */
  async loadPublic(slug: string): Promise<ReportPageData | null> {
    const share = await findShare(this.sql, slug)
    if (!share) return null
    return this.load(share.accountId, share.kind, share.targetId)
  }

  private async scan(accountId: string, id: string): Promise<Omit<ReportPageData, 'slug'> | null> {
    const row = await getScan(this.sql, accountId, id)
    if (!row) return null
    const report = row.status === 'completed' ? (row.report as Report | null) : null
    const raw = report ? modelOfScan(row, report) : null
    const model = raw ? safeModel(raw) : null
    const checks = new Map((report?.checks ?? []).map((c) => [c.id, c]))
    return {
      kind: 'scan',
      id: row.id,
      url: redactUrlCredentials(row.url),
      status: row.status,
      createdAt: row.createdAt,
      finishedAt: row.finishedAt,
      error: row.error,
      progress: null,
      model,
      fixOf: (i) => {
        const f = raw?.findings[i]
        return raw && f ? fixOf(f, checks.get(f.checkId), raw) : undefined
      },
      pages: [],
      stoppedBy: null,
    }
  }

  private async audit(accountId: string, id: string): Promise<Omit<ReportPageData, 'slug'> | null> {
    const row = await getAudit(this.sql, accountId, id)
    if (!row) return null
    const result = row.status === 'completed' ? (row.result as AuditResult | null) : null
    const raw = result ? modelOfAudit(row, result) : null
    const model = raw ? safeModel(raw) : null
    const advice = new Map((result?.findings ?? []).map((f) => [f.fingerprint, f.advice]))
    return {
      kind: 'audit',
      id: row.id,
      url: redactUrlCredentials(row.url),
      status: row.status,
      createdAt: row.createdAt,
      finishedAt: row.finishedAt,
      error: row.error,
      progress: row.progress,
      model,
      fixOf: (i) => {
        const f = raw?.findings[i]
        if (!raw || !f) return undefined
        return fixOf(f, findingAsCheck({ ...f, advice: advice.get(f.fingerprint) ?? '' }), raw)
      },
      pages: (result?.pages ?? []).map((p) => ({ ...p, url: redactUrlCredentials(p.url), finalUrl: redactUrlCredentials(p.finalUrl) })),
      stoppedBy: result?.stoppedBy ?? null,
    }
  }
}
