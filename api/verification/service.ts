// verify_site on plain values: one token per account and app (origin), shown by the site's owner in one
// of three places, then checked by us. HTTP checks go through the egress guard; DNS asks resolvers only.
//
// Rules this enforces:
// - The first call only creates the token and says where to put it: nothing is fetched.
// - The meta tag counts only in the <head> of the origin's home page (following same-origin redirects),
//   never on a deeper path, so a tenant of a shared origin cannot verify the whole origin with a page
//   of its own; cross-origin redirects are not followed, so an open redirect cannot vouch either.
// - The file is read at the fixed /.well-known path of the origin; a line must equal the token.
// - DNS: a TXT record at _appaudit.<host> must equal the token.
// - Once verified, an app stays verified; later calls do not fetch anything again.
import { randomBytes } from 'node:crypto'
import { Resolver } from 'node:dns/promises'
import type { Config } from '../../shared/config.ts'
import type { Sql } from '../../shared/db/index.ts'
import { upsertApp } from '../../shared/db/scans.ts'
import {
  ensureVerification,
  isVerified,
  markVerified,
  VERIFICATION_METHODS,
  type SiteVerification,
  type VerificationMethod,
} from '../../shared/db/verifications.ts'
import { ipFamily } from '../../shared/egress/address.ts'
import { base62 } from '../../shared/lib/ids.ts'
import { EgressHttp } from '../../shared/egress/http.ts'
import { checkTarget } from '../http/target.ts'
import type { Principal } from '../../shared/db/accounts.ts'
import { errorMessage } from '../../shared/errors.ts'

export { isVerified }

export const META_NAME = 'appaudit-site-verification'
export const FILE_PATH = '/.well-known/appaudit-verification.txt'
export const TOKEN_PREFIX = 'appaudit-verify='
export const dnsRecordName = (host: string) => `_appaudit.${host}`

const DNS_TIMEOUT_MS = 2_500
const DNS_TRIES = 2

export const newVerificationToken = () => TOKEN_PREFIX + base62(randomBytes(16))

export interface VerificationDeps {
  sql: Sql
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>
  /** Resolvers asked for the TXT record ("ip" or "ip:port"); empty or absent: the system's. */
  dnsServers?: string[]
  signal?: AbortSignal
}

export interface MethodCheck {
  method: VerificationMethod
  ok: boolean
  detail: string
}

export interface Instructions {
  meta: { html: string; where: string }
  file: { url: string; content: string }
  dns: { name: string; type: 'TXT'; value: string } | { unavailable: string }
  then: string
}

export interface VerifyResult {
  appId: string
  origin: string
  verified: boolean
  verifiedAt: string | null
  /** The method that verified the app; null while it is not verified. */
  method: VerificationMethod | null
  token: string
  instructions: Instructions
  /** What this call checked; empty on the call that created the token and once verified. */
  checked: MethodCheck[]
  message: string
}

/** DNS servers from DNS_SERVERS; undefined means the system's resolvers. */
export function dnsServersFromConfig(config: Pick<Config, 'DNS_SERVERS'>): string[] | undefined {
  const list = config.DNS_SERVERS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  return list.length ? list : undefined
}

export function instructionsFor(url: URL, token: string): Instructions {
  const host = url.hostname
  return {
    meta: {
      html: `<meta name="${META_NAME}" content="${token}">`,
      where: `inside <head> of the home page ${url.origin}/`,
    },
    file: { url: url.origin + FILE_PATH, content: token },
    dns:
      ipFamily(host) !== 0
        ? { unavailable: 'The app is addressed by an IP address; DNS verification needs a host name.' }
        : { name: dnsRecordName(host), type: 'TXT', value: token },
    // biome-ignore lint/suspicious/noThenProperty: `then` is a field of verify_site's documented answer, never awaited
    then: 'Once the token is in place, call verify_site again with the same url (and optionally the method).',
  }
}

/** The contents of every <meta name="appaudit-site-verification"> inside <head>. */
export async function metaTokens(html: string): Promise<string[]> {
  const found: string[] = []
  await new HTMLRewriter()
    .on('head meta', {
      element(e) {
        if ((e.getAttribute('name') ?? '').trim().toLowerCase() !== META_NAME) return
        const content = e.getAttribute('content')
        if (content !== null) found.push(content.trim())
      },
    })
    .transform(new Response(html))
    .text()
  return found
}

async function checkMeta(http: EgressHttp, origin: string, token: string): Promise<MethodCheck> {
  const url = `${origin}/`
  const got = await http.get(url, { redirects: 'same-origin', headers: { accept: 'text/html,*/*;q=0.8' } })
  if (!got.ok) return { method: 'meta', ok: false, detail: `${url} could not be fetched (${got.code}: ${got.reason})` }
  const where = got.res.url
  if (got.res.status >= 300 && got.res.status < 400) {
    return { method: 'meta', ok: false, detail: `${where} redirects to another origin; the tag must be on ${url} itself` }
  }
  if (got.res.status !== 200) return { method: 'meta', ok: false, detail: `${where} answered ${got.res.status}` }
  const tokens = await metaTokens(got.res.body)
  if (tokens.includes(token)) return { method: 'meta', ok: true, detail: `meta tag found on ${where}` }
  if (tokens.length) return { method: 'meta', ok: false, detail: `a ${META_NAME} meta tag on ${where} holds a different token` }
  return { method: 'meta', ok: false, detail: `no ${META_NAME} meta tag inside <head> of ${where}` }
}

async function checkFile(http: EgressHttp, origin: string, token: string): Promise<MethodCheck> {
  const url = origin + FILE_PATH
  const got = await http.get(url, { redirects: 'same-origin', bodyLimit: 4_096, headers: { accept: 'text/plain,*/*;q=0.8' } })
  if (!got.ok) return { method: 'file', ok: false, detail: `${url} could not be fetched (${got.code}: ${got.reason})` }
  if (got.res.status !== 200) return { method: 'file', ok: false, detail: `${url} answered ${got.res.status}` }
  const lines = got.res.body.split(/\r?\n/).map((l) => l.trim())
  if (lines.includes(token)) return { method: 'file', ok: true, detail: `token found in ${url}` }
  if (lines.some((l) => l.startsWith(TOKEN_PREFIX))) return { method: 'file', ok: false, detail: `${url} holds a different token` }
  return { method: 'file', ok: false, detail: `${url} does not contain the token on a line of its own` }
}

async function checkDns(host: string, token: string, servers: string[] | undefined, signal?: AbortSignal): Promise<MethodCheck> {
  if (ipFamily(host) !== 0) {
    return { method: 'dns', ok: false, detail: 'the app is addressed by an IP address; DNS verification needs a host name' }
  }
  const name = dnsRecordName(host)
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES })
  if (servers?.length) {
    try {
      resolver.setServers(servers)
    } catch (e) {
      return { method: 'dns', ok: false, detail: `bad DNS server setting: ${errorMessage(e)}` }
    }
  }
  const cancel = () => resolver.cancel()
  signal?.addEventListener('abort', cancel, { once: true })
  let records: string[][]
  try {
    records = await resolver.resolveTxt(name)
  } catch (e) {
    const code = String((e as { code?: unknown }).code ?? 'lookup failed')
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { method: 'dns', ok: false, detail: `no TXT record at ${name}` }
    return { method: 'dns', ok: false, detail: `TXT lookup of ${name} failed (${code})` }
  } finally {
    signal?.removeEventListener('abort', cancel)
  }
  // A record longer than 255 bytes arrives in chunks; some resolvers hand chunks over as records.
  const values = records.flatMap((chunks) => [chunks.join(''), ...chunks]).map((v) => v.trim())
  if (values.includes(token)) return { method: 'dns', ok: true, detail: `TXT record found at ${name}` }
  if (values.some((v) => v.startsWith(TOKEN_PREFIX)))
    return { method: 'dns', ok: false, detail: `the TXT record at ${name} holds a different token` }
  return { method: 'dns', ok: false, detail: `no TXT record at ${name} equals the token` }
}

async function runChecks(deps: VerificationDeps, url: URL, token: string, methods: readonly VerificationMethod[]): Promise<MethodCheck[]> {
  const needsHttp = methods.some((m) => m !== 'dns')
  const http = needsHttp ? await EgressHttp.open(deps.config, deps.signal) : null
  try {
    return await Promise.all(
      methods.map((m) => {
        if (m === 'meta') return checkMeta(http!, url.origin, token)
        if (m === 'file') return checkFile(http!, url.origin, token)
        return checkDns(url.hostname, token, deps.dnsServers, deps.signal)
      }),
    )
  } finally {
    await http?.close()
  }
}

function result(v: SiteVerification, url: URL, checked: MethodCheck[], message: string): VerifyResult {
  return {
    appId: v.appId,
    origin: url.origin,
    verified: v.verifiedAt !== null,
    verifiedAt: v.verifiedAt?.toISOString() ?? null,
    method: v.method,
    token: v.token,
    instructions: instructionsFor(url, v.token),
    checked,
    message,
  }
}

export async function verifySite(
  deps: VerificationDeps,
  accountId: string,
  input: { url: string; method?: VerificationMethod },
): Promise<VerifyResult> {
  // A blocked target can never be checked: refuse it before recording anything. An unresolvable name
  // is fine here: its owner may be setting it up, and DNS verification needs no address.
  const url = await checkTarget(deps.config, input.url, { refuseUnreachable: false })
  const appId = await upsertApp(deps.sql, accountId, url.origin)
  const { verification, created } = await ensureVerification(deps.sql, accountId, appId, newVerificationToken())
  if (created) {
    return result(
      verification,
      url,
      [],
      'Token created. Put it in place with one of the three methods in instructions, then call verify_site again.',
    )
  }
  if (verification.verifiedAt) return result(verification, url, [], `Already verified (by ${verification.method}).`)

  const methods = input.method ? [input.method] : VERIFICATION_METHODS
  const checked = await runChecks(deps, url, verification.token, methods)
  const passed = checked.find((c) => c.ok)
  if (!passed) {
    return result(
      verification,
      url,
      checked,
      `Not verified: the token was not found (${methods.join(', ')} checked). See checked for why, and instructions for where it goes.`,
    )
  }
  const updated = (await markVerified(deps.sql, accountId, appId, passed.method)) ?? verification
  return result(updated, url, checked, `Verified by ${updated.method}.`)
}

/** Site verification for tools: plain values in and out. */
export class VerificationService {
  constructor(private deps: Omit<VerificationDeps, 'signal'>) {}

  verify(principal: Principal, input: { url: string; method?: VerificationMethod }, signal?: AbortSignal): Promise<VerifyResult> {
    return verifySite({ ...this.deps, signal }, principal.account.id, input)
  }
}
