import { Type } from '@sinclair/typebox'
import { DIRECTORY_LIMITS } from '../../directory-runs/limits.ts'
import { creates, defineTool } from './types.ts'
import { AuditOptionsInput, strict } from './schemas.ts'

/** The run as the dashboard shows it: its state and counts exact, its items and their findings open. */
const DirectoryRun = Type.Object(
  {
    runId: Type.String(),
    status: Type.Union(['queued', 'running', 'completed', 'failed'].map((s) => Type.Literal(s))),
    mode: Type.Union([Type.Literal('scan'), Type.Literal('audit')]),
    summary: Type.Object({ total: Type.Integer() }),
    items: Type.Array(Type.Unknown()),
    next: Type.String(),
  },
  {
    description:
      'Also options, watch, error, createdAt, startedAt, finishedAt. summary: total, pending, running, done, failed, averageScore, ' +
      'lowest. Each item: url, status, scanId or auditId, score, grade, worst (checkId, severity), error.',
  },
)

export const startDirectoryRun = defineTool({
  name: 'start_directory_run',
  description:
    `Scan (mode scan: up to ${DIRECTORY_LIMITS.maxUrls.scan} URLs) or audit (up to ${DIRECTORY_LIMITS.maxUrls.audit}, each charged ` +
    "like audit_app) a list of apps as one run. Answers at once with runId; call with {runId} to follow. Ends with each app's score, " +
    'grade and worst findings.',
  plan: 'scale',
  annotations: creates('Scan or audit a list of apps'),
  input: Type.Object(
    {
      urls: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
          minItems: 1,
          maxItems: DIRECTORY_LIMITS.maxUrls.scan,
          description: 'Absolute URLs.',
        }),
      ),
      mode: Type.Optional(Type.Union([Type.Literal('scan'), Type.Literal('audit')], { description: 'Default scan.' })),
      options: Type.Optional(AuditOptionsInput('Mode audit.')),
      runId: Type.Optional(Type.String({ maxLength: 64, pattern: '^dir_[0-9A-Za-z]+$', description: 'Read this run instead.' })),
    },
    strict,
  ),
  output: DirectoryRun,
  run: (input, ctx) => ctx.services.directoryRuns.startOrRead(ctx.principal, input),
})
