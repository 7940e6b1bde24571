import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Nullable, strict, Url } from './schemas.ts'

const Literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)))

const Table = Type.Object({
  name: Type.String(),
  readable: Nullable(Type.Boolean(), 'true: anonymous reads return rows; false: refused; null: unknown or not checked.'),
  status: Literals(['exposed', 'empty_or_rls', 'denied', 'not_found', 'not_checked', 'blocked', 'unreachable', 'error']),
  rowCount: Nullable(Type.Integer()),
  sample: Nullable(Type.Array(Type.Unknown()), 'Up to 3 rows, redacted: keys kept, values masked.'),
  httpStatus: Nullable(Type.Integer()),
  detail: Type.String(),
})

const Output = Type.Object({
  url: Type.String(),
  finalUrl: Type.String(),
  origin: Type.String(),
  verified: Type.Boolean(),
  probed: Type.Boolean({ description: 'Whether data requests beyond the page load were made.' }),
  supabase: Nullable(
    Type.Object({
      projectUrl: Type.String(),
      keyKind: Nullable(Literals(['anon', 'publishable'])),
      tables: Type.Array(Table),
      otherProjectUrls: Type.Array(Type.String()),
    }),
  ),
  firebase: Nullable(
    Type.Object({
      databaseURL: Nullable(Type.String()),
      projectId: Nullable(Type.String()),
      readable: Nullable(Type.Boolean()),
      status: Literals(['open', 'open_empty', 'denied', 'not_found', 'not_checked', 'blocked', 'unreachable', 'error']),
      topLevelKeys: Nullable(Type.Array(Type.String())),
      httpStatus: Nullable(Type.Integer()),
      detail: Type.String(),
    }),
  ),
  exposed: Type.Array(Type.String(), { description: 'Readable data found: table names, and firebase:/ for an open database.' }),
  leakedSecrets: Type.Array(Type.Object({ kind: Literals(['supabase_service_role_jwt', 'supabase_secret_key']), where: Type.String() })),
  loaded: Type.Object({
    page: Type.String(),
    scripts: Type.Array(Type.String()),
    skippedCrossOriginScripts: Type.Integer(),
    truncatedScripts: Type.Integer(),
  }),
  notes: Type.Array(Type.String()),
  nextStep: Type.Optional(
    Type.Object({ tool: Type.Literal('verify_site'), arguments: Type.Object({ url: Type.String() }), why: Type.String() }),
  ),
})

export const checkDataExposure = defineTool({
  name: 'check_data_exposure',
  description:
    'Look for data readable without signing in: Supabase/PostgREST tables and Firebase Realtime Database open reads, found through ' +
    "what the app's own page and same-origin JavaScript reveal (project URL, public key, table names). Read-only. Reading data " +
    '(anonymous GET requests to the tables) needs verify_site for the app first: without it the answer lists what was found, marks ' +
    'every table not_checked and gives nextStep. Verified: each table is exposed (rows come back; redacted sample and rowCount), ' +
    'empty_or_rls (200 with no rows), denied or not_found.',
  plan: 'free',
  annotations: readOnly('Check data exposure', true),
  input: Type.Object({ url: Url }, strict),
  output: Output,
  run: (input, ctx) => ctx.services.exposure.check(ctx.principal, input.url, { signal: ctx.signal, progress: ctx.progress }),
})
