import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Nullable, strict, Url } from './schemas.ts'

const Output = Type.Object(
  {
    url: Type.String(),
    verified: Type.Boolean(),
    supabase: Nullable(Type.Object({})),
    firebase: Nullable(Type.Object({})),
    exposed: Type.Array(Type.String()),
    leakedSecrets: Type.Array(Type.Unknown()),
    notes: Type.Array(Type.String()),
  },
  {
    description:
      'Also finalUrl, origin, probed, loaded, nextStep. supabase: projectUrl, keyKind, tables (name, status, readable, rowCount, ' +
      'sample, httpStatus, detail); firebase: databaseURL, status, topLevelKeys; exposed: readable tables and firebase:/.',
  },
)

export const checkDataExposure = defineTool({
  name: 'check_data_exposure',
  description:
    'Find data readable without signing in (Supabase/PostgREST tables, Firebase Realtime Database) from what the page and its ' +
    'JavaScript reveal. Reading tables needs verify_site first, else not_checked with nextStep. Tables: exposed (redacted ' +
    'sample), empty_or_rls, denied, not_found.',
  plan: 'free',
  annotations: readOnly('Check data exposure', true),
  input: Type.Object({ url: Url }, strict),
  output: Output,
  run: (input, ctx) => ctx.services.exposure.check(ctx.principal, input.url, { signal: ctx.signal, progress: ctx.progress }),
})
