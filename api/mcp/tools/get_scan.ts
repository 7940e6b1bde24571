import { Type } from '@sinclair/typebox'
import { reportAppToolMeta } from '../app/index.ts'
import { ReportSchema } from '../../../shared/report/schema.ts'
import { defineTool, readOnly } from './types.ts'
import { ErrorInfo, Id, Nullable, ScanStatus, strict, When } from './schemas.ts'

export const getScan = defineTool({
  name: 'get_scan',
  description: 'A scan of this account by id: its state and, once completed, the full report (the same as scan_app returned).',
  plan: 'free',
  annotations: readOnly('Get a scan'),
  // Hosts that support MCP Apps show the result as the interactive report (api/mcp/app).
  meta: reportAppToolMeta(),
  input: Type.Object({ scanId: Id('scan', 'scn') }, strict),
  output: Type.Object({
    scanId: Type.String(),
    url: Type.String(),
    status: ScanStatus,
    createdAt: When('When the scan was requested'),
    startedAt: Nullable(When('When a worker started it')),
    finishedAt: Nullable(When('When it completed or failed')),
    error: Type.Optional(ErrorInfo),
    report: Type.Optional(ReportSchema),
  }),
  run: (input, ctx) => ctx.services.scans.get(ctx.principal, input.scanId),
})
