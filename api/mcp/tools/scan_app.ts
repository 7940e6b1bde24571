import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import type { Report } from '../../../shared/report/schema.ts'
import { creates, defineTool } from './types.ts'
import { strict, Url } from './schemas.ts'
import { compactReport, Detail, ListedReport } from './compact.ts'

export const scanApp = defineTool({
  name: 'scan_app',
  description:
    'Scan one page in a real browser and over HTTP (headers, HTTPS, cookies, exposed files, secrets in its JavaScript); waits for ' +
    'the report (usually under 20 s): score, grade, findings with evidence and advice.',
  plan: 'free',
  annotations: creates('Scan a page'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object({ url: Url, detail: Detail }, strict),
  output: ListedReport('Compact: findings first (evidence, advice), one line per other check; full: the whole report.'),
  run: async (input, ctx) => {
    const report = (await ctx.services.scans.scan(ctx.principal, input.url, { progress: ctx.progress, signal: ctx.signal })) as Report
    return input.detail === 'full' ? report : compactReport(report, fullHint(report.id))
  },
})

/** What a compact report says about getting the whole one. */
export const fullHint = (scanId: string) => `Cut for size; the whole report: get_scan {"scanId":"${scanId}","detail":"full"}`
