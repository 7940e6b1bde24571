import { Type } from '@sinclair/typebox'
import { creates, defineTool } from './types.ts'
import { AuditOptionsInput, StartedAuditFields, strict, Url } from './schemas.ts'

export const auditApp = defineTool({
  name: 'audit_app',
  description:
    'Start a whole-site audit (a browser crawl of minutes). Answers at once with auditId and browserViewer, a live view: give it ' +
    'to a human now, it ends with the crawl. Poll get_audit. Uses the weekly allowance, then credits.',
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
