import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import type { Report } from '../../../shared/report/schema.ts'
import { creates, defineTool } from './types.ts'
import { strict, Url } from './schemas.ts'
import { AnyReport, compactReport, Detail } from './compact.ts'

export const scanApp = defineTool({
  name: 'scan_app',
  description:
    'Scan one page of a web app in a real browser and over plain HTTP: security headers, HTTPS, cookies, exposed files, secrets in ' +
    'the JavaScript it loads. Runs to completion (usually a few seconds, up to about 20) and returns the report: score 0-100, grade, ' +
    'every check with status and evidence, and advice ordered by impact. Send a progressToken to receive progress notifications. ' +
    'url must be absolute: example.com is refused with the URL to send (https://example.com/), never guessed.',
  plan: 'free',
  annotations: creates('Scan a page'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object({ url: Url, detail: Detail }, strict),
  output: AnyReport('The compact report (default) or, with detail "full", the whole one.'),
  run: async (input, ctx) => {
    const report = (await ctx.services.scans.scan(ctx.principal, input.url, { progress: ctx.progress, signal: ctx.signal })) as Report
    return input.detail === 'full' ? report : compactReport(report, fullHint(report.id))
  },
})

/** What a compact report says about getting the whole one. */
export const fullHint = (scanId: string) => `Cut for size; the whole report: get_scan {"scanId":"${scanId}","detail":"full"}`
