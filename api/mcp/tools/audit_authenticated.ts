import { Type } from '@sinclair/typebox'
import { AUTH_LIMITS } from '../../../shared/protocol/audit-auth.ts'
import { creates, defineTool } from './types.ts'
import { AuditOptionsInput, StartedAuditFields, strict, Url } from './schemas.ts'

const Secret = (description: string) => Type.String({ maxLength: AUTH_LIMITS.valueChars, description })

export const auditAuthenticated = defineTool({
  name: 'audit_authenticated',
  description:
    'Start a whole-site audit behind a login, as audit_app does, with what gets past it: cookies, request headers, or a login ' +
    'form to fill (url, fields, submit). They are encrypted at rest, given only to the crawler running the audit, sent only to ' +
    "the audited origin, never shown in results or logs, and wiped when the audit ends. The crawl stays on the URL's origin, " +
    'never follows logout links, and get_audit reports when the session was lost (stoppedBy sessionLost). Charged like audit_app.',
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
              value: Secret('The cookie value (a session id, a token).'),
              domain: Type.Optional(Type.String({ maxLength: 253, description: 'The host or a parent domain; default: the host only.' })),
            },
            strict,
          ),
          { maxItems: AUTH_LIMITS.cookies },
        ),
      ),
      headers: Type.Optional(
        Type.Record(Type.String({ maxLength: 128 }), Secret('A header value'), {
          description: 'Sent with every request to the audited origin only, e.g. {"Authorization": "Bearer ..."}.',
        }),
      ),
      login: Type.Optional(
        Type.Object(
          {
            url: Type.String({ maxLength: 2048, description: 'The login page, on the same origin as url.' }),
            fields: Type.Record(Type.String({ maxLength: AUTH_LIMITS.selectorChars }), Secret('What to type'), {
              description: 'Field (a CSS selector or a field name) -> value, e.g. {"email": "...", "password": "..."}.',
            }),
            submit: Type.Optional(
              Type.String({ maxLength: AUTH_LIMITS.selectorChars, description: "The button to click; default: the form's submit button." }),
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
