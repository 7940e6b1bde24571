import { Type } from '@sinclair/typebox'
import { creates, defineTool } from './types.ts'
import { AuditOptionsInput, StartedAuditFields, strict, Url } from './schemas.ts'

export const auditApp = defineTool({
  name: 'audit_app',
  description:
    'Start a whole-site audit: a real-browser crawl of the app that lasts minutes. Returns {auditId, browserViewer} at once; poll ' +
    'get_audit. browserViewer is a live view of the crawl and stops working when the crawl ends: relay it to a human immediately. ' +
    'Uses the weekly audit allowance, then credits.',
  plan: 'free',
  annotations: creates('Audit a whole site'),
  input: Type.Object(
    {
      url: Url,
      options: Type.Optional(AuditOptionsInput()),
    },
    strict,
  ),
  output: Type.Object({
    ...StartedAuditFields,
  }),
  run: (input, ctx) => ctx.services.audits.start(ctx.principal, input.url, input.options),
})
