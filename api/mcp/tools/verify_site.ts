import { Type } from '@sinclair/typebox'
import { defineTool, readOnly } from './types.ts'
import { Nullable, strict, Url } from './schemas.ts'

const Method = Type.Union([Type.Literal('meta'), Type.Literal('file'), Type.Literal('dns')])

const Output = Type.Object({
  appId: Type.String(),
  origin: Type.String(),
  verified: Type.Boolean(),
  verifiedAt: Nullable(Type.String()),
  method: Nullable(Method),
  token: Type.String(),
  instructions: Type.Object({ meta: Type.Unknown(), file: Type.Unknown(), dns: Type.Unknown() }),
  checked: Type.Array(Type.Object({ method: Method, ok: Type.Boolean(), detail: Type.String() })),
  message: Type.String(),
})

export const verifySite = defineTool({
  name: 'verify_site',
  description:
    'Prove control of an app (origin) by a meta tag, a /.well-known file or a DNS TXT record: the first call gives the token and ' +
    'where to put it, the next verifies (method: one way; default all). check_data_exposure needs it to read data.',
  plan: 'free',
  annotations: { ...readOnly('Verify a site', true), readOnlyHint: false, idempotentHint: true },
  input: Type.Object({ url: Url, method: Type.Optional(Method) }, strict),
  output: Output,
  run: (input, ctx) => ctx.services.verification.verify(ctx.principal, input, ctx.signal),
})
