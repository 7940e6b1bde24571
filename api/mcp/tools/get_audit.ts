import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Id, strict } from './schemas.ts'

export const getAudit = defineTool({
  name: 'get_audit',
  description:
    'An audit started with audit_app: status (queued, running, completed, failed, cancelled), progress (pages discovered, scanned, ' +
    'failed, current URL, times, refunded) and, once completed, the result: site score and grade, findings merged across pages with ' +
    'the pages each was found on, and per-page checks. Poll every 5-10 seconds.',
  plan: 'free',
  annotations: readOnly('Get an audit'),
  input: Type.Object({ auditId: Id('audit', 'aud') }, strict),
  run: (input, ctx) => ctx.services.audits.get(ctx.principal, input.auditId),
})
