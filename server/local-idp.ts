// `bun server/local-idp.ts`: the local development OpenID provider on its own (docker-compose.yml runs it
// beside the api), with one user and one client, the service's dashboard. Never for production.
//   LOCAL_IDP_HOST (0.0.0.0), LOCAL_IDP_PORT (8790), LOCAL_IDP_ISSUER (http://localhost:8790),
//   LOCAL_IDP_USER, LOCAL_IDP_PASSWORD (required), OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, BASE_URL (the
//   dashboard's, for its callback).
import { startLocalIdp } from '../api/signin/local-idp.ts'

const env = process.env
const port = Number(env.LOCAL_IDP_PORT || 8790)
const password = env.LOCAL_IDP_PASSWORD ?? ''
if (password.length < 8) {
  console.error('LOCAL_IDP_PASSWORD must be set (8 characters or more): it signs the development user in.')
  process.exit(2)
}
const base = (env.BASE_URL || 'http://localhost:8787').replace(/\/+$/, '')
const idp = await startLocalIdp({
  port,
  host: env.LOCAL_IDP_HOST || '0.0.0.0',
  issuer: env.LOCAL_IDP_ISSUER || `http://localhost:${port}`,
  user: env.LOCAL_IDP_USER || 'dev@localhost',
  password,
  clientId: env.OIDC_CLIENT_ID || 'appaudit-dashboard',
  clientSecret: env.OIDC_CLIENT_SECRET || '',
  redirectUris: [`${base}/auth/callback`],
})
console.log(JSON.stringify({ msg: 'local identity provider listening', issuer: idp.issuer, port }))
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void idp.stop().then(() => process.exit(0)))
