// A real OpenID provider for the embedded default and for tests: panva's oidc-provider on loopback, with
// one development user and one client (this service's dashboard). It is a separate server on its own
// port, spoken to exactly as a production provider is (discovery, authorize, token, JWKS): the service's
// sign-in code cannot tell them apart. Production never starts it; it points OIDC_ISSUER elsewhere.
import { exportJWK, generateKeyPair } from 'jose'
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type Provider from 'oidc-provider'
import { html } from '../../shared/lib/html.ts'
import { readCappedText } from '../../shared/lib/http-body.ts'
import { errorMessage } from '../../shared/errors.ts'

export interface LocalIdpOptions {
  port: number
  /** Address to listen on (default 127.0.0.1). */
  host?: string
  /** The issuer URL browsers and the service reach it at (default http://127.0.0.1:PORT). */
  issuer?: string
  /** The development user's sign-in name (also its email); its subject is derived from it. */
  user: string
  password: string
  clientId: string
  clientSecret: string
  /**
   * The client's redirect URIs; a promise when they are known only once the provider listens (a service on
   * port 0 that is pointed at this provider learns its own URL when it starts): requests then wait on 503
   * until it resolves, and `ready` says when the provider is made.
   */
  redirectUris: string[] | Promise<string[]>
}

export interface LocalIdp {
  issuer: string
  /** Resolves once the provider answers (at once when the redirect URIs were given as a list). */
  ready: Promise<void>
  stop(): Promise<void>
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function loginPage(uid: string, error: string | null): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Local identity provider: sign in</title>
<style>body{font:15px system-ui,sans-serif;background:#eef0f3;display:flex;justify-content:center;padding-top:4rem}
form{background:#fff;padding:2rem;border-radius:8px;border:1px solid #ccd;min-width:20rem}label{display:block;margin:.8rem 0 .2rem}
input{width:100%;padding:.4rem;font:inherit;box-sizing:border-box}button{margin-top:1.2rem;padding:.5rem 1.2rem;font:inherit}
.error{color:#b42318}</style></head><body>
<form method="post" action="/interaction/${uid}/login"><h1>Local identity provider</h1>
<p>Development sign-in for App Audit.</p>${error && html`<p class="error" id="error">${error}</p>`}
<label for="login">Email</label><input id="login" name="login" autocomplete="username" autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit" id="sign-in">Sign in</button></form></body></html>`.toString()
}

/** The login form, read with the service's one capped reader; a form over 16 KiB is read as empty. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const { text, truncated } = await readCappedText(Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>, 16_384)
  return new URLSearchParams(truncated ? '' : text)
}

/** The subject the local provider gives its development user: derived from the sign-in name, the same at every start. */
export const localSubject = (user: string) => `dev-${Buffer.from(user).toString('hex').slice(0, 24)}`

export async function startLocalIdp(opts: LocalIdpOptions): Promise<LocalIdp> {
  // The server listens first (the issuer names its port); requests wait on 503 until the provider is made.
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end()
  const server = createServer((req, res) => handle(req, res))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve())
  })
  const port = (server.address() as { port: number }).port
  const issuer = opts.issuer ?? `http://127.0.0.1:${port}`
  const subject = localSubject(opts.user)
  const ready = (async () => {
    const provider = await newProvider(issuer, { ...opts, redirectUris: await opts.redirectUris }, subject)
    const callback = provider.callback()
    const interaction = interactionHandler(provider, opts, subject)
    handle = (req, res) => {
      const path = (req.url ?? '/').split('?')[0]!
      const m = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec(path)
      if (!m) return callback(req, res)
      void interaction(req, res, m[2] !== undefined)
    }
  })()
  if (Array.isArray(opts.redirectUris)) {
    try {
      await ready
    } catch (e) {
      server.close()
      throw e
    }
  } else {
    // Its failure reaches whoever waits on `ready`; unawaited, it is not an unhandled rejection.
    ready.catch(() => {})
  }
  return {
    issuer,
    ready,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

/**
 * oidc-provider's warnings that nobody running the local provider can act on, printed in red at every start:
 * it names Bun an unsupported runtime (it runs under Bun, and test/api/signin tests it there), and calls its
 * in-memory store development-only, which this development provider is by design.
 */
const MUTED_WARNINGS = [
  /oidc-provider WARNING: Unsupported runtime/,
  /oidc-provider WARNING: a quick start development-only in-memory adapter/,
]

/** Runs `fn` with those two warnings left out of console.warn; every other warning is printed as usual. */
export async function withoutIdpNoise<T>(fn: () => T | Promise<T>): Promise<T> {
  const warn = console.warn
  console.warn = (...args: unknown[]) => {
    if (!MUTED_WARNINGS.some((r) => r.test(String(args[0])))) warn(...args)
  }
  try {
    return await fn()
  } finally {
    console.warn = warn
  }
}

/** The provider with its one client, a fresh signing key, and the development user as its only account. */
async function newProvider(issuer: string, opts: LocalIdpOptions & { redirectUris: string[] }, subject: string): Promise<Provider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(8).toString('hex') }
  // Imported here, not at the top: the runtime warning is printed when the module is first evaluated.
  const { default: Provider } = await withoutIdpNoise(() => import('oidc-provider'))
  // The store warning is printed when the provider is made.
  return withoutIdpNoise(
    () =>
      new Provider(issuer, {
        clients: [
          {
            client_id: opts.clientId,
            client_secret: opts.clientSecret,
            redirect_uris: opts.redirectUris,
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        jwks: { keys: [jwk as never] },
        cookies: { keys: [randomBytes(32).toString('hex')] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        features: { devInteractions: { enabled: false } },
        // Email and name in the ID token itself, as most hosted providers send them.
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        ttl: { Interaction: 600, Session: 3_600, Grant: 3_600, AuthorizationCode: 60, IdToken: 3_600, AccessToken: 3_600 },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        findAccount: async (_ctx, id) =>
          id === subject
            ? { accountId: id, claims: async () => ({ sub: id, email: opts.user, email_verified: true, name: 'Local developer' }) }
            : undefined,
      }),
  )
}

/** The interaction pages: consent is implied, the login form checks the development user's name and password. */
function interactionHandler(provider: Provider, opts: LocalIdpOptions, subject: string) {
  return async (req: IncomingMessage, res: ServerResponse, login: boolean): Promise<void> => {
    try {
      const details = await provider.interactionDetails(req, res)
      if (details.prompt.name === 'consent') {
        // The only client is the service's own dashboard: consent is implied.
        const grant = details.grantId
          ? (await provider.Grant.find(details.grantId))!
          : new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string })
        const d = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] }
        if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '))
        if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims)
        return await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
      }
      if (req.method === 'POST' && login) {
        const form = await readForm(req)
        if (same(form.get('login') ?? '', opts.user) && same(form.get('password') ?? '', opts.password)) {
          return await provider.interactionFinished(req, res, { login: { accountId: subject } }, { mergeWithLastSubmission: false })
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        return void res.end(loginPage(details.uid, 'Wrong email or password.'))
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      res.end(loginPage(details.uid, null))
    } catch (e) {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' })
      res.end(`interaction failed: ${errorMessage(e)}`)
    }
  }
}

/** What the local provider's users are recorded under: one name whatever port it listens on. */
export const LOCAL_IDENTITY_ISSUER = 'urn:appaudit:local-idp'

/**
 * The embedded default's sign-in: a local provider with the development user, and the settings that
 * point the service at it. The password is LOCAL_IDP_PASSWORD, or a new random one printed at start.
 */
export async function startEmbeddedSignIn(config: {
  baseUrl: string
  LOCAL_IDP_PORT: number
  LOCAL_IDP_USER: string
  LOCAL_IDP_PASSWORD: string
  OIDC_SCOPES: string
}) {
  const password = config.LOCAL_IDP_PASSWORD || randomBytes(12).toString('base64url')
  const clientSecret = randomBytes(24).toString('base64url')
  const clientId = 'appaudit-dashboard'
  const redirectUri = `${config.baseUrl}/auth/callback`
  const idp = await startLocalIdp({
    port: config.LOCAL_IDP_PORT,
    user: config.LOCAL_IDP_USER,
    password,
    clientId,
    clientSecret,
    redirectUris: [redirectUri],
  })
  return {
    idp,
    user: config.LOCAL_IDP_USER,
    password,
    oidc: { issuer: idp.issuer, identityIssuer: LOCAL_IDENTITY_ISSUER, clientId, clientSecret, scopes: config.OIDC_SCOPES, redirectUri },
  }
}
