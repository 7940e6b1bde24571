import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Nullable, strict, Url } from './schemas.ts'

const Method = Type.Union([Type.Literal('meta'), Type.Literal('file'), Type.Literal('dns')])

const Output = Type.Object({
  appId: Type.String(),
  origin: Type.String(),
  verified: Type.Boolean(),
  verifiedAt: Nullable(Type.String({ description: 'ISO 8601, UTC.' })),
  method: Nullable(Method, 'The method that verified the app; null while it is not verified.'),
  token: Type.String(),
  instructions: Type.Object({
    meta: Type.Object({ html: Type.String(), where: Type.String() }),
    file: Type.Object({ url: Type.String(), content: Type.String() }),
    dns: Type.Union([
      Type.Object({ name: Type.String(), type: Type.Literal('TXT'), value: Type.String() }),
      Type.Object({ unavailable: Type.String() }),
    ]),
    // biome-ignore lint/suspicious/noThenProperty: `then` is a field of verify_site's documented answer, never awaited
    then: Type.String(),
  }),
  checked: Type.Array(Type.Object({ method: Method, ok: Type.Boolean(), detail: Type.String() }), {
    description: 'What this call checked; empty on the call that created the token and once verified.',
  }),
  message: Type.String(),
})

export const verifySite = defineTool({
  name: 'verify_site',
  description:
    'Prove control of an app (its origin) with a meta tag, a /.well-known file or a DNS TXT record. The first call returns the token ' +
    'and where to put it; call again to verify (method picks one check, default all three). Returns {appId, origin, verified, ' +
    "verifiedAt, method, token, instructions, checked: [{method, ok, detail}]}. Active probes such as check_data_exposure's data " +
    'reads need a verified app.',
  plan: 'free',
  annotations: { ...readOnly('Verify a site', true), readOnlyHint: false, idempotentHint: true },
  input: Type.Object({ url: Url, method: Type.Optional(Method) }, strict),
  output: Output,
  run: (input, ctx) => ctx.services.verification.verify(ctx.principal, input, ctx.signal),
})
