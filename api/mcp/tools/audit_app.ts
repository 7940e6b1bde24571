import { Type } from '@sinclair/typebox'
import { creates, defineTool } from './types.ts'
import { AuditOptions, AuditStatus, strict, Url } from './schemas.ts'

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
      options: Type.Optional(
        Type.Object(
          {
            maxPages: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Most pages to visit (default 50).' })),
            maxDepth: Type.Optional(
              Type.Integer({ minimum: 0, maximum: 10, description: 'Most link hops from the start URL (default 3).' }),
            ),
            maxDurationSeconds: Type.Optional(
              Type.Integer({
                minimum: 5,
                maximum: 7200,
                description: "Longest crawl time (default and ceiling: the server's limit, 600 unless configured).",
              }),
            ),
          },
          strict,
        ),
      ),
    },
    strict,
  ),
  output: Type.Object({
    auditId: Type.String(),
    browserViewer: Type.String({ description: 'Live view of the crawl for a human; stops working when the crawl ends.' }),
    status: AuditStatus,
    url: Type.String(),
    options: AuditOptions,
  }),
  run: (input, ctx) => ctx.services.audits.start(ctx.principal, input.url, input.options),
})
