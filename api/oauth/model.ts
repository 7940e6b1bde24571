// Shapes of the OAuth endpoints' requests and answers (RFC 7591, RFC 6749, RFC 8414).
import { Type, type Static } from '@sinclair/typebox'

export const RegisterRequest = Type.Object({
  client_name: Type.String({ minLength: 1, maxLength: 200 }),
  redirect_uris: Type.Array(Type.String(), { minItems: 1, maxItems: 20 }),
  token_endpoint_auth_method: Type.Optional(Type.String()),
  grant_types: Type.Optional(Type.Array(Type.String())),
  response_types: Type.Optional(Type.Array(Type.String())),
})
export type RegisterRequest = Static<typeof RegisterRequest>

export const RegisteredClient = Type.Object({
  client_id: Type.String(),
  client_id_issued_at: Type.Integer(),
  client_name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  grant_types: Type.Array(Type.Literal('authorization_code')),
  response_types: Type.Array(Type.Literal('code')),
  token_endpoint_auth_method: Type.Literal('none'),
})
export type RegisteredClient = Static<typeof RegisteredClient>

/** A validated authorization request, as kept between the consent page and its answer. */
export const AuthorizeRequest = Type.Object({
  clientId: Type.String(),
  clientName: Type.String(),
  redirectUri: Type.String(),
  codeChallenge: Type.String(),
  state: Type.Union([Type.String(), Type.Null()]),
  resource: Type.Union([Type.String(), Type.Null()]),
})
export type AuthorizeRequest = Static<typeof AuthorizeRequest>

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
})
export type TokenResponse = Static<typeof TokenResponse>
