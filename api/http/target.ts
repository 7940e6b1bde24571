// The first step of every site tool: parse the caller's URL and refuse, before any work, a target the
// egress guard would refuse anyway. The proxy still checks every connection; this only answers early.
import type { Config } from '../../shared/config.ts'
import { parseTargetUrl, policyFromConfig, resolveTarget } from '../../shared/egress/guard.ts'
import { AppError } from '../../shared/errors.ts'

export async function checkTarget(
  config: Pick<Config, 'ALLOW_PRIVATE_TARGETS' | 'trustedTargetHosts'>,
  rawUrl: string,
  opts: { refuseUnreachable: boolean },
): Promise<URL> {
  const parsed = parseTargetUrl(rawUrl)
  if (!parsed.ok) throw new AppError('invalid_url', parsed.message)
  const host = parsed.url.hostname
  const target = await resolveTarget(host, policyFromConfig(config))
  if (!target.ok && target.code === 'target_blocked') {
    throw new AppError('target_blocked', `${host} resolves to a ${target.reason} address, which the scanner may not reach`, {
      reason: target.reason,
    })
  }
  if (!target.ok && opts.refuseUnreachable) {
    throw new AppError('target_unreachable', `${host} could not be resolved: ${target.reason}`, { reason: target.reason })
  }
  return parsed.url
}
