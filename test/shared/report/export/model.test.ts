// The report model every format reads: a finding's page count matches the pages it lists.
import { describe, expect, test } from 'bun:test'
import { modelOfAudit } from '../../../../shared/report/export/model.ts'
import { buildAuditResult } from '../../../../shared/report/audit-report.ts'
import type { CheckResult } from '../../../../shared/report/scan-report.ts'

const result = (id: string, status: CheckResult['status']): CheckResult => ({
  id,
  title: id,
  category: 'security',
  severity: 'medium',
  status,
  summary: `${id} ${status}`,
  evidence: {},
})

describe('report model', () => {
  test('a site-wide finding lists the audit URL and counts it; a page finding counts its pages', () => {
    const url = 'https://www.example.com/'
    const audit = buildAuditResult(
      { auditId: 'aud_x', url, stoppedBy: 'done', pagesDiscovered: 2, finishedAt: '2026-11-29T00:00:00.000Z' },
      [
        { url, finalUrl: url, depth: 0, httpStatus: 200, ok: true, loadMs: 1, checks: [result('csp', 'fail')] },
        { url: `${url}a`, finalUrl: `${url}a`, depth: 1, httpStatus: 200, ok: true, loadMs: 1, checks: [result('csp', 'fail')] },
      ],
      [result('robots-txt', 'warn')],
    )
    const model = modelOfAudit({ id: 'aud_x', url, createdAt: new Date() }, audit)
    expect(model.findings.length).toBe(2)
    for (const f of model.findings) expect({ id: f.checkId, count: f.pageCount }).toEqual({ id: f.checkId, count: f.pages.length })
    expect(model.findings.find((f) => f.checkId === 'robots-txt')!.pages).toEqual([url])
  })
})
