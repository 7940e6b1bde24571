// A tool that is listed with its final input and output schemas but not built yet. It answers not_implemented
// until it moves into a file of its own with a run function.
import { Type } from '@sinclair/typebox'
import { creates, defineTool } from './types.ts'
import { AuditOptions, AuditStatus, strict, Url } from './schemas.ts'

const StartedAudit = Type.Object({
  auditId: Type.String(),
  browserViewer: Type.String(),
  status: AuditStatus,
  url: Type.String(),
  options: Type.Optional(AuditOptions),
})

export const auditAuthenticated = defineTool({
  name: 'audit_authenticated',
  description: 'Whole-site audit behind a login, with cookies or headers you supply. They are encrypted at rest and wiped after the run.',
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
              value: Type.String({ maxLength: 4096 }),
              domain: Type.Optional(Type.String({ maxLength: 253 })),
            },
            strict,
          ),
          { maxItems: 50 },
        ),
      ),
      headers: Type.Optional(Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: 4096 }))),
    },
    strict,
  ),
  output: StartedAudit,
})
