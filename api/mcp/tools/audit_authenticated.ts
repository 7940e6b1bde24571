import { Type } from '@sinclair/typebox'
import { AUTH_LIMITS } from '../../../shared/protocol/audit-auth.ts'
import { creates, defineTool } from './types.ts'
import { AuditOptionsInput, StartedAuditFields, strict, Url } from './schemas.ts'

const Secret = () => Type.String({ maxLength: AUTH_LIMITS.valueChars })

export const auditAuthenticated = defineTool({
  name: 'audit_authenticated',
  description:
    'audit_app behind a login: cookies, headers or a login form (url, fields, submit). They are encrypted, sent only to the ' +
    'audited origin, never shown, wiped at the end. Stays on the origin, skips logout links; stoppedBy sessionLost if logged out.',
  plan: 'scale',
  annotations: creates('Audit behind a login'),
  input: Type.Object(
    {
      url: Url,
      cookies: Type.Optional(
        Type.Array(
          Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 256 }),
              value: Secret(),
              domain: Type.Optional(Type.String({ maxLength: 253, description: 'Default: the host only.' })),
            },
            strict,
          ),
          { maxItems: AUTH_LIMITS.cookies },
        ),
      ),
      headers: Type.Optional(
        Type.Record(Type.String({ maxLength: 128 }), Secret(), { description: 'e.g. {"Authorization": "Bearer ..."}' }),
      ),
      login: Type.Optional(
        Type.Object(
          {
            url: Type.String({ maxLength: 2048, description: 'The login page (same origin).' }),
            fields: Type.Record(Type.String({ maxLength: AUTH_LIMITS.selectorChars }), Secret(), {
              description: 'CSS selector or field name: value.',
            }),
            submit: Type.Optional(
              Type.String({ maxLength: AUTH_LIMITS.selectorChars, description: "Button to click; default: the form's submit." }),
            ),
          },
          strict,
        ),
      ),
      options: Type.Optional(AuditOptionsInput()),
    },
    strict,
  ),
  output: Type.Object({
    ...StartedAuditFields,
    authenticated: Type.Boolean(),
  }),
  run: (input, ctx) => {
    const { url, options, ...auth } = input
    return ctx.services.audits.start(ctx.principal, url, options, auth)
  },
})
