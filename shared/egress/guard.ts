// The egress guard: parses a user-supplied URL, resolves its host once and decides whether the
// scanner may connect. Callers connect to the returned address, never to the name again, so a
// second DNS answer (rebinding) cannot change where the connection goes.
import { lookup } from 'node:dns/promises'
import type { Config } from '../config.ts'
import { classifyAddress, ipFamily } from './address.ts'

export const MAX_URL_LENGTH = 2048
const DNS_TIMEOUT_MS = 5_000

export type ParsedTarget = { ok: true; url: URL } | { ok: false; code: 'invalid_url'; message: string }

/**
 * Parses with the WHATWG URL parser, which also normalises legacy IPv4 forms (0x7f.1,
 * 017700000001, 2130706433, 127.1) to dotted decimal. Only http and https; no credentials.
 */
export function parseTargetUrl(raw: string): ParsedTarget {
  const bad = (message: string): ParsedTarget => ({ ok: false, code: 'invalid_url', message })
  if (typeof raw !== 'string' || raw.trim() === '') return bad('empty URL')
  if (raw.length > MAX_URL_LENGTH) return bad(`URL longer than ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return bad('not an absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad('only http and https URLs are allowed')
  if (url.username !== '' || url.password !== '') return bad('credentials in the URL are not allowed')
  if (url.hostname === '' || url.hostname === '.') return bad('URL has no host')
  if (url.href.length > MAX_URL_LENGTH) return bad(`URL longer than ${MAX_URL_LENGTH} characters`)
  return { ok: true, url }
}

export type EgressPolicy = { allowPrivate: boolean; trustedHosts: string[] }

export function policyFromConfig(config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts'>): EgressPolicy {
  return { allowPrivate: config.ALLOW_PRIVATE_TARGETS, trustedHosts: [...config.trustedTargetHosts] }
}

export type ResolvedAddress = { address: string; family: 4 | 6 }

/** The URL with its host replaced by a checked address (IPv6 in brackets): where to connect, never the name again. */
export function pinnedUrl(url: URL, address: ResolvedAddress): URL {
  const pinned = new URL(url)
  pinned.hostname = address.family === 6 ? `[${address.address}]` : address.address
  return pinned
}
/** Resolves a host name to every address it has. Injectable for tests. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>

export const defaultResolver: Resolver = async (host) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' })), DNS_TIMEOUT_MS)
  })
  try {
    const found = await Promise.race([lookup(host, { all: true }), timeout])
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
  } finally {
    clearTimeout(timer)
  }
}

export type ResolveResult =
  | {
      ok: true
      /** The first allowed address: connect to this one. */
      address: string
      family: 4 | 6
      /** Every address the name resolved to, all checked, in resolver order (for fallback). */
      addresses: ResolvedAddress[]
    }
  | { ok: false; code: 'target_blocked'; reason: string; address: string }
  | { ok: false; code: 'target_unreachable'; reason: string }

/**
 * Canonical form of a host for comparisons and IP-literal detection: lower case, no brackets, no
 * trailing dot, legacy IPv4 forms normalised by the WHATWG parser. null when it is not a valid host.
 */
export function canonicalHost(host: string): string | null {
  let h = String(host ?? '').trim()
  // Only a host: anything that would make the parser read a path, query, userinfo or port is refused.
  if (h === '' || /[\s/\\?#@]/.test(h)) return null
  if (h.includes(':') && !h.startsWith('[')) h = `[${h}]`
  let parsed: string
  try {
    parsed = new URL(`http://${h}/`).hostname
  } catch {
    return null
  }
  if (parsed.startsWith('[') && parsed.endsWith(']')) parsed = parsed.slice(1, -1)
  parsed = parsed.replace(/\.+$/, '')
  return parsed === '' ? null : parsed
}

function trustedSet(policy: EgressPolicy): Set<string> {
  const out = new Set<string>()
  for (const t of policy.trustedHosts) {
    const c = canonicalHost(t)
    if (c) out.add(c)
  }
  return out
}

/**
 * Resolves `host` once and checks every address. Refuses when any address is blocked, unless the
 * policy allows private targets, the host is trusted, or the blocked address itself is listed as
 * trusted. IP literals (bracketed IPv6 included) are checked without DNS.
 */
export async function resolveTarget(host: string, policy: EgressPolicy, resolver: Resolver = defaultResolver): Promise<ResolveResult> {
  const name = canonicalHost(host)
  if (name === null) return { ok: false, code: 'target_unreachable', reason: 'invalid host' }
  const trusted = trustedSet(policy)
  const hostTrusted = policy.allowPrivate || trusted.has(name)

  let addresses: ResolvedAddress[]
  const fam = ipFamily(name)
  if (fam !== 0) {
    addresses = [{ address: name, family: fam }]
  } else {
    try {
      addresses = await resolver(name)
    } catch (e) {
      const code = (e as { code?: unknown })?.code
      return { ok: false, code: 'target_unreachable', reason: `dns: ${typeof code === 'string' ? code : 'lookup failed'}` }
    }
    if (!Array.isArray(addresses) || addresses.length === 0) {
      return { ok: false, code: 'target_unreachable', reason: 'dns: no addresses' }
    }
  }

  const checked: ResolvedAddress[] = []
  for (const a of addresses) {
    const family = ipFamily(a.address)
    if (family === 0) return { ok: false, code: 'target_blocked', reason: 'invalid', address: String(a.address) }
    const cls = classifyAddress(a.address)
    const addr = canonicalHost(a.address) ?? a.address
    if (cls.blocked && !hostTrusted && !trusted.has(addr)) {
      return { ok: false, code: 'target_blocked', reason: cls.reason ?? 'blocked', address: addr }
    }
    checked.push({ address: addr, family })
  }
  const first = checked[0]!
  return { ok: true, address: first.address, family: first.family, addresses: checked }
}
