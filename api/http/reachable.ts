// Whether a start URL answers at all, asked before anything is charged for it (audit_app). One GET through
// an egress proxy of its own (the same guard every request to a target goes through), no redirect
// followed, a short deadline, a kilobyte of body at most. Any HTTP answer counts, an error status too: the
// crawler judges what the page says; this only spares the caller a charge for a site that is not there.
import type { Config } from '../../shared/config.ts'
import { policyFromConfig } from '../../shared/egress/guard.ts'
import { API_USER_AGENT, fetchHop } from '../../shared/egress/http.ts'
import { startEgressProxy } from '../../shared/egress/proxy.ts'
import { AppError } from '../../shared/errors.ts'

/** The longest a start URL may take to answer before audit_app refuses it. */
export const REACHABLE_TIMEOUT_MS = 5_000

export async function requireAnswer(
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts' | 'PROBE_TIMEOUT_MS'>,
  url: URL,
  what: string,
): Promise<void> {
  const timeoutMs = Math.min(REACHABLE_TIMEOUT_MS, config.PROBE_TIMEOUT_MS)
  const proxy = await startEgressProxy(policyFromConfig(config), { connectTimeoutMs: timeoutMs, idleTimeoutMs: timeoutMs + 1_000 })
  try {
    const hop = await fetchHop(proxy, url.href, {
      userAgent: API_USER_AGENT,
      timeoutMs,
      bodyLimit: 1_024,
      // Certificates are judged by the audit itself; a bad one is a finding, not a reason to refuse.
      anyCertificate: true,
    })
    if (hop.ok) return
    const reason = hop.reason === 'timed out' ? `no answer within ${timeoutMs / 1000} s` : hop.reason
    throw new AppError(hop.code, `${url.href} could not be reached (${reason}); ${what}`, { reason })
  } finally {
    await proxy.stop().catch(() => {})
  }
}
