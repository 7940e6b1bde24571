// Whether a start URL answers at all, asked before anything is charged for it (audit_app). One GET, no
// redirect followed, a short deadline, no body read. Any HTTP answer counts, an error status too: the
// crawler judges what the page says; this only spares the caller a charge for a site that is not there.
//
// The egress guard decides where it may go, as for every request to a target: the name is resolved once
// and each address checked (shared/egress/guard.ts), and the request is then pinned to an address that
// passed, so a name that changes its answer between check and connect (DNS rebinding) gains nothing. It
// does not go through the egress proxy: a single request that follows no redirect has nothing for the
// proxy to check again, and the proxy's two extra connections cost five times the CPU of the request
// itself (0.5-1.2 ms against 0.1-0.2 ms here, most of audit_app's time under 20 callers at once).
import { connect } from 'node:net'
import { within } from '../../shared/lib/async.ts'
import type { Config } from '../../shared/config.ts'
import {
  defaultResolver,
  pinnedUrl,
  policyFromConfig,
  type ResolvedAddress,
  type Resolver,
  resolveTarget,
} from '../../shared/egress/guard.ts'
import { API_USER_AGENT } from '../../shared/egress/http.ts'
import { AppError } from '../../shared/errors.ts'

/** The longest a start URL may take to answer before audit_app refuses it. */
export const REACHABLE_TIMEOUT_MS = 5_000
/** Addresses of one name tried in turn when one does not connect (as the egress proxy does). */
const MAX_ADDRESSES_TRIED = 3

type ReachConfig = Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>

export class Reachability {
  private readonly timeoutMs: number
  private readonly policy: ReturnType<typeof policyFromConfig>

  constructor(
    config: ReachConfig,
    private resolver: Resolver = defaultResolver,
  ) {
    this.timeoutMs = Math.min(REACHABLE_TIMEOUT_MS, config.PROBE_TIMEOUT_MS)
    this.policy = policyFromConfig(config)
  }

  /** Throws a clear AppError (`what`: what happened instead) when the URL may not be asked or does not answer. */
  async require(url: URL, what: string): Promise<void> {
    const refuse = (code: 'target_blocked' | 'target_unreachable', reason: string) =>
      new AppError(code, `${url.href} could not be reached (${reason}); ${hintFor(url, reason)}; ${what}`, { reason })
    const deadline = AbortSignal.timeout(this.timeoutMs)
    const late = `no answer within ${this.timeoutMs / 1000} s`
    // The deadline holds for the name's resolution too (a resolver that does not answer).
    const resolved = await within(resolveTarget(url.hostname, this.policy, this.resolver), this.timeoutMs, null)
    if (!resolved) throw refuse('target_unreachable', `dns: ${late}`)
    if (!resolved.ok) throw refuse(resolved.code, resolved.reason)
    let reason = 'connect failed'
    for (const address of resolved.addresses.slice(0, MAX_ADDRESSES_TRIED)) {
      const outcome = await ask(url, address, deadline)
      if (outcome === 'answered') return
      if (deadline.aborted) {
        reason = late
        break
      }
      reason = outcome
    }
    throw refuse('target_unreachable', reason)
  }

  /**
   * Whether anything listens at the URL's host and port: one TCP connection to each address of the name in
   * turn, no request sent, so a scan of an app that is not running is refused at once, before a scan (or its
   * app) is recorded and before any browser is asked (a navigation to a refused port took 3.5 s, 13 s on a
   * busy machine). Throws target_unreachable saying what was tried and what to check (`what`: what happened
   * instead); a name that does not resolve, or resolves to a blocked address, is refused here too. Only a
   * definite answer refuses: a resolver or a connection that does not answer in time lets the scan go on
   * (on a busy machine a healthy loopback app can be slow to accept; the scan's own navigation decides).
   */
  async connects(url: URL, what: string): Promise<void> {
    const deadline = AbortSignal.timeout(this.timeoutMs)
    const resolved = await within(resolveTarget(url.hostname, this.policy, this.resolver), this.timeoutMs, null)
    const refuse = (code: 'target_blocked' | 'target_unreachable', reason: string, tried: string) =>
      new AppError(code, `${url.href} could not be reached: ${tried} (${reason}). ${sentence(hintFor(url, reason))} ${what}`, { reason })
    if (!resolved) return
    if (!resolved.ok && resolved.code === 'target_blocked') {
      const message = `${url.hostname} resolves to a ${resolved.reason} address, which the scanner may not reach. ${what}`
      throw new AppError('target_blocked', message, { reason: resolved.reason })
    }
    if (!resolved.ok) throw refuse(resolved.code, resolved.reason, `${url.hostname} did not resolve`)
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
    const tried: string[] = []
    let reason = 'connect failed'
    for (const address of resolved.addresses.slice(0, MAX_ADDRESSES_TRIED)) {
      const at = address.family === 6 ? `[${address.address}]:${port}` : `${address.address}:${port}`
      tried.push(at)
      const outcome = await openConnection(address.address, port, deadline)
      if (outcome === 'connected' || outcome === 'timed out' || outcome === 'ETIMEDOUT') return
      reason = outcome
      if (deadline.aborted) return
    }
    throw refuse('target_unreachable', reason, `nothing answered on ${tried.join(', ')}`)
  }
}

/** What to check, for a reason a target could not be reached. */
function hintFor(url: URL, reason: string): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  if (reason.startsWith('dns')) return `check the host name ${url.hostname}`
  if (reason === 'ECONNREFUSED') return `is the app running, and listening on port ${port}?`
  if (reason.includes('no answer within') || reason === 'timed out' || reason === 'ETIMEDOUT') {
    return 'is the host up, and does its firewall let the scanner in?'
  }
  return 'check the address, and that the app answers from where the scanner runs'
}

/** A hint as a sentence of its own: capitalised, ending in a full stop unless it asks. */
const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1) + (s.endsWith('?') ? '' : '.')

/** One TCP connection to `address`:`port`, closed at once: 'connected', or the error code. */
function openConnection(address: string, port: number, signal: AbortSignal): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port })
    const finish = (outcome: string) => {
      signal.removeEventListener('abort', onAbort)
      socket.destroy()
      resolve(outcome)
    }
    const onAbort = () => finish('timed out')
    if (signal.aborted) return finish('timed out')
    signal.addEventListener('abort', onAbort)
    socket.once('connect', () => finish('connected'))
    socket.once('error', (e) => finish((e as { code?: string }).code || 'connect failed'))
  })
}

/** One GET to `url` at `address`: 'answered', or why not. */
async function ask(url: URL, address: ResolvedAddress, signal: AbortSignal): Promise<'answered' | string> {
  const pinned = pinnedUrl(url, address)
  try {
    const res = await fetch(pinned, {
      method: 'GET',
      redirect: 'manual',
      signal,
      // The site sees its own name, in Host and in TLS (SNI); its certificate is judged by the audit itself.
      headers: { host: url.host, 'user-agent': API_USER_AGENT },
      tls: { rejectUnauthorized: false, ...(isIpLiteral(url.hostname) ? {} : { serverName: url.hostname }) },
      decompress: false,
    } as RequestInit)
    await res.body?.cancel().catch(() => {})
    return 'answered'
  } catch (e) {
    const code = (e as { code?: unknown }).code
    return typeof code === 'string' && code ? code : (e as Error).name === 'TimeoutError' ? 'timed out' : 'connect failed'
  }
}

const isIpLiteral = (host: string) => host.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host)
