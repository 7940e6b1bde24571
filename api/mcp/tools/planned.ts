// Tools that are listed with their final input and output schemas but not built yet. Each answers not_implemented
// until it moves into a file of its own with a run function.
import { Type } from '@sinclair/typebox'
import { creates, defineTool } from './types.ts'
import { AuditOptions, AuditStatus, strict, Url } from './schemas.ts'

// What they will return, declared now (tools/list shows it): the run or audit once queued, as audit_app
// answers. Fields may be added, so the objects stay open.
const DirectoryRun = Type.Object({
  runId: Type.String(),
  status: Type.Union(['queued', 'running', 'completed', 'failed'].map((s) => Type.Literal(s))),
  watch: Type.String({ description: 'GET it to follow the run (/api/directory-runs/{id}).' }),
  audits: Type.Optional(Type.Array(Type.Object({ url: Type.String(), auditId: Type.Union([Type.String(), Type.Null()]) }))),
})

const StartedAudit = Type.Object({
  auditId: Type.String(),
  browserViewer: Type.String(),
  status: AuditStatus,
  url: Type.String(),
  options: Type.Optional(AuditOptions),
})

export const startDirectoryRun = defineTool({
  name: 'start_directory_run',
  description: 'Audit a list of apps in one run.',
  plan: 'scale',
  annotations: creates('Audit a list of apps'),
  input: Type.Object({ urls: Type.Array(Url, { minItems: 1, maxItems: 500 }) }, strict),
  output: DirectoryRun,
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
