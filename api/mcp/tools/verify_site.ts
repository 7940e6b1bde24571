import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { strict, Url } from './schemas.ts'

export const verifySite = defineTool({
  name: 'verify_site',
  description:
    'Prove control of an app (its origin) with a meta tag, a /.well-known file or a DNS TXT record. The first call returns the token ' +
    'and where to put it; call again to verify (method picks one check, default all three). Returns {appId, origin, verified, ' +
    "verifiedAt, method, token, instructions, checked: [{method, ok, detail}]}. Active probes such as check_data_exposure's data " +
    'reads need a verified app.',
  plan: 'free',
  annotations: { ...readOnly('Verify a site', true), readOnlyHint: false, idempotentHint: true },
  input: Type.Object(
    { url: Url, method: Type.Optional(Type.Union([Type.Literal('meta'), Type.Literal('file'), Type.Literal('dns')])) },
    strict,
  ),
  run: (input, ctx) => ctx.services.verification.verify(ctx.principal, input, ctx.signal),
})
