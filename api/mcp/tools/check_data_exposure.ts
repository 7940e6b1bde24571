import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { strict, Url } from './schemas.ts'

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
  run: (input, ctx) => ctx.services.exposure.check(ctx.principal, input.url, { signal: ctx.signal, progress: ctx.progress }),
})
