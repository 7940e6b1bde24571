// Drives the service's OAuth authorization server over HTTP the way a client and a signed-in person
// do: register, authorize, consent, exchange.
import { createHash, randomBytes } from 'node:crypto'
import { jarFetch, type CookieJar, type SignInService } from './signin.ts'

export function pkcePair() {
  const verifier = randomBytes(48).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/**
 * Registers a client. Registration is rate-limited per client address; services started with
 * TRUSTED_PROXY_HOPS=1 take it from X-Forwarded-For, so each call here comes from its own address
 * unless `from` names one.
 */
export async function registerClient(svc: SignInService, body: Record<string, unknown> = {}, from?: string) {
  const res = await fetch(`${svc.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': from ?? `10.${[1, 2, 3].map(() => Math.floor(Math.random() * 250)).join('.')}`,
    },
    body: JSON.stringify({ client_name: 'Test Agent', redirect_uris: ['http://127.0.0.1:9999/callback'], ...body }),
  })
  return { res, body: (await res.json()) as Record<string, any> }
}

export function authorizeUrl(svc: SignInService, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v)
  return `${svc.baseUrl}/oauth/authorize?${q}`
}

/** The consent form's hidden fields, from the page HTML. */
export function consentFields(html: string): { requestId: string; csrf: string } {
  return {
    requestId: /name="request_id" value="([^"]+)"/.exec(html)![1]!,
    csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]!,
  }
}

export async function answerConsent(svc: SignInService, jar: CookieJar, html: string, decision: 'approve' | 'deny', origin = svc.baseUrl) {
  const f = consentFields(html)
  return jarFetch(jar, `${svc.baseUrl}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ request_id: f.requestId, csrf: f.csrf, decision }),
  })
}

/** Registers a client and takes a signed-in person through consent; returns the code and what made it. */
export async function obtainCode(
  svc: SignInService,
  jar: CookieJar,
  opts: { redirectUri?: string; resource?: string | null; clientName?: string } = {},
) {
  const redirectUri = opts.redirectUri ?? 'http://127.0.0.1:9999/callback'
  const { body: client } = await registerClient(svc, { redirect_uris: [redirectUri], client_name: opts.clientName ?? 'Test Agent' })
  const { verifier, challenge } = pkcePair()
  const state = randomBytes(8).toString('hex')
  const page = await jarFetch(
    jar,
    authorizeUrl(svc, {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      resource: opts.resource === null ? undefined : (opts.resource ?? `${svc.baseUrl}/api/mcp`),
    }),
  )
  if (page.status !== 200) throw new Error(`authorize answered ${page.status}`)
  const res = await answerConsent(svc, jar, await page.text(), 'approve')
  const location = new URL(res.headers.get('location')!)
  return { clientId: client.client_id as string, redirectUri, verifier, state, location, code: location.searchParams.get('code')! }
}

export async function exchangeCode(svc: SignInService, params: Record<string, string | undefined>) {
  const form = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, v)
  const res = await fetch(`${svc.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  })
  return { res, body: (await res.json()) as Record<string, any> }
}
