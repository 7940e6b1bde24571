import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import type { Report } from '../../../shared/report/schema.ts'
import { defineTool, readOnly } from './types.ts'
import { ErrorInfo, Id, Nullable, ScanStatus, strict, When } from './schemas.ts'
import { AnyReport, compactReport, Detail } from './compact.ts'
import { fullHint } from './scan_app.ts'

export const getScan = defineTool({
  name: 'get_scan',
  description:
    'A scan of this account by id: its state and, once completed, the report as scan_app returns it (compact by default; detail "full" for the whole report).',
  plan: 'free',
  annotations: readOnly('Get a scan'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object({ scanId: Id('scan', 'scn'), detail: Detail }, strict),
  output: Type.Object({
    scanId: Type.String(),
    url: Type.String(),
    status: ScanStatus,
    createdAt: When('When the scan was requested'),
    startedAt: Nullable(When('When a worker started it')),
    finishedAt: Nullable(When('When it completed or failed')),
    error: Type.Optional(ErrorInfo),
    report: Type.Optional(AnyReport('Compact unless detail is "full".')),
  }),
  run: async (input, ctx) => {
    const scan = await ctx.services.scans.get(ctx.principal, input.scanId)
    if (input.detail === 'full' || !scan.report) return scan
    return { ...scan, report: compactReport(scan.report as Report, fullHint(scan.scanId)) }
  },
})
