import { Type } from '@sinclair/typebox'
import { DIRECTORY_LIMITS } from '../../directory-runs/limits.ts'
import { creates, defineTool } from './types.ts'
import { AuditOptions, AuditOptionsInput, ErrorInfo, Nullable, strict, Url, When } from './schemas.ts'

const ItemStatus = Type.Union(['pending', 'dispatched', 'done', 'failed'].map((s) => Type.Literal(s)))

const DirectoryRun = Type.Object({
  runId: Type.String(),
  status: Type.Union(['queued', 'running', 'completed', 'failed'].map((s) => Type.Literal(s))),
  mode: Type.Union([Type.Literal('scan'), Type.Literal('audit')]),
  options: Type.Optional(AuditOptions),
  watch: Type.String({ description: 'The run in the dashboard (/api/directory-runs/{id}, a signed-in session).' }),
  summary: Type.Object({
    total: Type.Integer(),
    pending: Type.Integer(),
    running: Type.Integer(),
    done: Type.Integer(),
    failed: Type.Integer(),
    averageScore: Nullable(Type.Integer(), 'Mean score of the apps done; null before the first.'),
    lowest: Nullable(Type.Object({ url: Type.String(), score: Nullable(Type.Number()), grade: Nullable(Type.String()) })),
  }),
  items: Type.Array(
    Type.Object({
      url: Type.String(),
      status: ItemStatus,
      scanId: Type.Optional(Type.String()),
      auditId: Type.Optional(Type.String()),
      score: Nullable(Type.Number()),
      grade: Nullable(Type.String()),
      worst: Type.Array(Type.Object({ checkId: Type.String(), severity: Type.String() }), {
        description: 'The worst findings, highest impact first (explain_check {id} says what each is).',
      }),
      error: Type.Optional(ErrorInfo),
    }),
  ),
  error: Type.Optional(ErrorInfo),
  createdAt: When('When the run was started'),
  startedAt: Nullable(When('When its first item was dispatched')),
  finishedAt: Nullable(When('When it ended')),
  next: Type.String({ description: 'What to call next.' }),
})

export const startDirectoryRun = defineTool({
  name: 'start_directory_run',
  description:
    `Scan (mode scan, default: up to ${DIRECTORY_LIMITS.maxUrls.scan} URLs) or audit (mode audit: up to ` +
    `${DIRECTORY_LIMITS.maxUrls.audit}, each charged like audit_app) a list of apps as one run, a few at a time within the ` +
    "account's limits. Answers at once with runId; call again with {runId} to follow it. The run ends with a table: each app's " +
    'score, grade and worst findings, or why it failed; one app failing does not fail the run.',
  plan: 'scale',
  annotations: creates('Scan or audit a list of apps'),
  input: Type.Object(
    {
      urls: Type.Optional(
        Type.Array(Url, {
          minItems: 1,
          maxItems: DIRECTORY_LIMITS.maxUrls.scan,
          description: 'The apps to run, absolute URLs; duplicates count once.',
        }),
      ),
      mode: Type.Optional(Type.Union([Type.Literal('scan'), Type.Literal('audit')], { description: 'scan (default) or audit.' })),
      options: Type.Optional(AuditOptionsInput('For mode audit: what every audit of the run uses, as in audit_app.')),
      runId: Type.Optional(
        Type.String({ minLength: 4, maxLength: 64, pattern: '^dir_[0-9A-Za-z]+$', description: 'Read this run instead of starting one.' }),
      ),
    },
    strict,
  ),
  output: DirectoryRun,
  run: (input, ctx) => ctx.services.directoryRuns.startOrRead(ctx.principal, input),
})
