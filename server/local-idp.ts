// `bun server/local-idp.ts`: the local development OpenID provider on its own (docker-compose.yml runs it
// beside the api), with one user and one client, the service's dashboard. Never for production.
// Settings: LocalIdpSchema in shared/config.ts.
import { startLocalIdp } from '../api/signin/local-idp.ts'
import { LocalIdpSchema, loadToolConfigOrExit } from '../shared/config.ts'

const env = loadToolConfigOrExit(LocalIdpSchema)
const port = env.LOCAL_IDP_PORT
const base = env.BASE_URL.replace(/\/+$/, '')
const idp = await startLocalIdp({
  port,
  host: env.LOCAL_IDP_HOST,
  issuer: env.LOCAL_IDP_ISSUER || `http://localhost:${port}`,
  user: env.LOCAL_IDP_USER,
  password: env.LOCAL_IDP_PASSWORD,
  clientId: env.OIDC_CLIENT_ID,
  clientSecret: env.OIDC_CLIENT_SECRET,
  redirectUris: [`${base}/auth/callback`],
})
console.log(JSON.stringify({ msg: 'local identity provider listening', issuer: idp.issuer, port }))
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void idp.stop().then(() => process.exit(0)))
