import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'

export const getScan = defineTool({
  name: 'get_scan',
  description: 'A scan of this account by id: its state and, once completed, the full report (the same as scan_app returned).',
  plan: 'free',
  annotations: readOnly('Get a scan'),
  input: Type.Object({ scanId: Id('scan', 'scn') }, strict),
  run: (input, ctx) => ctx.services.scans.get(ctx.principal, input.scanId),
})
