import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import type { Report } from '../../../shared/report/schema.ts'
import { defineTool, readOnly } from './types.ts'
import { ErrorInfo, Id, Nullable, ScanStatus, strict } from './schemas.ts'
import { compactReport, Detail, ListedReport } from './compact.ts'
import { fullHint } from './scan_app.ts'

export const getScan = defineTool({
  name: 'get_scan',
  description: 'A scan by id: its status and, once completed, its report as scan_app returns it.',
  plan: 'free',
  annotations: readOnly('Get a scan'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object({ scanId: Id('scn'), detail: Detail }, strict),
  output: Type.Object({
    scanId: Type.String(),
    url: Type.String(),
    status: ScanStatus,
    createdAt: Type.String(),
    startedAt: Nullable(Type.String()),
    finishedAt: Nullable(Type.String()),
    error: Type.Optional(ErrorInfo),
    report: Type.Optional(ListedReport('Once completed; compact unless detail is "full".')),
  }),
  run: async (input, ctx) => {
    const scan = await ctx.services.scans.get(ctx.principal, input.scanId)
    if (input.detail === 'full' || !scan.report) return scan
    return { ...scan, report: compactReport(scan.report as Report, fullHint(scan.scanId)) }
  },
})
