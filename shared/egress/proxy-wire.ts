// The proxy's wire-level helpers: its marker headers, hop-by-hop header filtering, CONNECT authorities, and
// connecting to checked addresses without ever resolving a name.
import net from 'node:net'
import type { ResolvedAddress } from './guard.ts'

/** Header the proxy sets on the answers it makes itself when it refuses a target. */
export const BLOCKED_HEADER = 'X-Egress-Blocked'
/** Header the proxy sets on 502/504 answers it makes itself when the target did not answer. */
export const UNREACHABLE_HEADER = 'X-Egress-Unreachable'

// Hop-by-hop headers (RFC 9110 7.6.1) plus the proxy's own markers, which an upstream may not forge.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  BLOCKED_HEADER.toLowerCase(),
  UNREACHABLE_HEADER.toLowerCase(),
])

/** Resolved addresses tried in turn when one does not answer (bounds the wait to this many connect timeouts). */
export const MAX_ADDRESSES_TRIED = 3

export const safeHeaderValue = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 200)

export function filterHeaders(raw: string[], drop: Set<string>): Record<string, string | string[]> {
  const connectionListed = new Set<string>()
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') {
      for (const t of raw[i + 1]!.split(',')) connectionListed.add(t.trim().toLowerCase())
    }
  }
  const out: Record<string, string | string[]> = {}
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    const key = name.toLowerCase()
    if (HOP_BY_HOP.has(key) || drop.has(key) || connectionListed.has(key)) continue
    const prev = out[key]
    const value = raw[i + 1]!
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
  }
  return out
}

/** Parses a CONNECT authority "host:port" / "[v6]:port". */
export function parseAuthority(s: string): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:/?#@[\]\\]+):(\d{1,5})$/.exec(s)
  if (!m) return null
  const port = Number(m[2])
  if (port < 1 || port > 65535) return null
  return { host: m[1]!, port }
}

/** Connects to the first checked address that answers; never resolves a name. */
export function connectChecked(addresses: ResolvedAddress[], port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let i = 0
    let lastError: Error = new Error('no address')
    const next = () => {
      const a = addresses[i++]
      if (!a) return reject(lastError)
      const sock = net.connect({ host: a.address, port, family: a.family })
      const timer = setTimeout(() => {
        lastError = Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })
        sock.destroy()
        next()
      }, timeoutMs)
      sock.once('connect', () => {
        clearTimeout(timer)
        sock.removeAllListeners('error')
        resolve(sock)
      })
      sock.once('error', (e) => {
        clearTimeout(timer)
        lastError = e
        sock.destroy()
        next()
      })
    }
    next()
  })
}

export const errCode = (e: unknown) => {
  const c = (e as { code?: unknown })?.code
  return typeof c === 'string' ? c : 'connect failed'
}
