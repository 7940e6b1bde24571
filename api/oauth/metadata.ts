// RFC 8414 authorization-server metadata. Rules enforced:
//   - issuer is BASE_URL exactly (clients compare it with the URL the document came from);
//   - only what is implemented is advertised: code + PKCE S256, public clients (auth method none),
//     dynamic registration, and the iss parameter of RFC 9207 in authorization responses.
export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    registration_endpoint: `${baseUrl}/oauth/register`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
    scopes_supported: [],
    service_documentation: `${baseUrl}/llms.txt`,
  }
}
